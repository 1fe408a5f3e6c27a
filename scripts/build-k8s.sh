#!/usr/bin/env bash
# Build the test Kubernetes control plane and kubelet into $MENDFLOW_CACHE/bin
# (default ~/.cache/mendflow/bin) from pinned Go modules:
#
#   kube-controlplane   scripts/k8s-controlplane: kube-apiserver, kube-controller-manager,
#                       kube-scheduler and etcd of one pinned Kubernetes release in one
#                       multi-call binary (etcd is built in because etcd's server module
#                       carries replace directives, so `go install` of it is impossible;
#                       the etcd version is the one Kubernetes itself pins)
#   kube-apiserver, kube-controller-manager, kube-scheduler, etcd
#                       symlinks to kube-controlplane (it dispatches on its name)
#   kubelet             scripts/k8s-controlplane/kubelet: upstream cmd/kubelet of the same
#                       release, a second main package in the same module, so one go.mod
#                       pins both (for the real-node tests; its runtime, containerd, runc
#                       and the CNI plugins, comes from Debian: scripts/lib/bootstrap.sh)
#   kwok                go install sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION
#
# Idempotent: a binary is rebuilt only when it is missing or its version
# stamp (pins + hash of go.mod, go.sum and its main.go) differs. GOPATH,
# GOMODCACHE and GOCACHE live under the cache dir, so a warm run is a no-op
# and a rebuild after a pin bump reuses most of the compile cache.
#
# Cold build on the 2-core machine (measured while other jobs kept the load at
# 8-12): modules 20 s, kube-controlplane ~23 min, kwok ~5 min; expect roughly
# half that on an idle machine. The kubelet shares all but ~100 of its ~1700
# packages with the control plane, so right after it the kubelet costs ~15 s
# idle (compile + link; ~1 min at load 3-9), ~9 min alone from an empty cache; a
# relink of either from a warm compile cache is 3-10 s. Run it as its own CI
# step before pytest. Warm (everything current): ~0.05 s.
#
# Usage: scripts/build-k8s.sh [--check]
#   --check   exit 0 if everything is built and current, 1 otherwise; build nothing.
set -euo pipefail

# Pins. The etcd version is the one k8s.io/kubernetes $K8S_VERSION requires
# (see scripts/k8s-controlplane/go.mod); bump all three together.
K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.4
KWOK_VERSION=v0.7.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/k8s-controlplane"
cache="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
bin="$cache/bin"

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "build-k8s.sh: unknown argument: $1" >&2; exit 2 ;;
esac

log() { printf '[build-k8s %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

sha() { sha256sum "$@" | sha256sum | cut -c1-16; }

cp_stamp="k8s=$K8S_VERSION etcd=$ETCD_VERSION src=$(cd "$src" && sha go.mod go.sum main.go)"
kubelet_stamp="k8s=$K8S_VERSION src=$(cd "$src" && sha go.mod go.sum kubelet/main.go)"
kwok_stamp="kwok=$KWOK_VERSION"

current() { # current NAME STAMP
  [[ -x "$bin/$1" && -f "$bin/.$1.stamp" && "$(cat "$bin/.$1.stamp")" == "$2" ]]
}

links_ok() {
  local l
  for l in kube-apiserver kube-controller-manager kube-scheduler etcd; do
    [[ -L "$bin/$l" && "$(readlink "$bin/$l")" == kube-controlplane ]] || return 1
  done
}

if current kube-controlplane "$cp_stamp" && links_ok && current kubelet "$kubelet_stamp" \
  && current kwok "$kwok_stamp"; then
  log "up to date in $bin (kubernetes $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION)"
  exit 0
fi
if (( check_only )); then
  log "not built or stale in $bin"
  exit 1
fi

mkdir -p "$bin" "$cache/go"
# One build at a time (parallel pytest workers, two terminals).
exec 9>"$cache/.build-k8s.lock"
flock 9

# Find a Go toolchain: PATH first, then the usual install location.
go=$(command -v go || true)
[[ -n "$go" ]] || go=/usr/local/go/bin/go
if [[ ! -x "$go" ]]; then
  echo "build-k8s.sh: no Go toolchain found (need Go >= 1.24 on PATH or at /usr/local/go/bin/go)" >&2
  exit 1
fi

export GOPATH="$cache/go"
export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOFLAGS="-buildvcs=false"
log "using $("$go" version) ($go), cache $cache"

t_all=$SECONDS

# The version package defaults to v0.0.0-master; stamp the real release so
# /version, kubectl, client version skew checks and the node's kubeletVersion see it.
vpkg=k8s.io/component-base/version
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor"
ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"
modules_ready=0
download_modules() { # separate step so the log shows download vs compile time
  (( modules_ready )) && return
  (cd "$src" && "$go" mod download)
  modules_ready=1
}

if current kube-controlplane "$cp_stamp"; then
  log "kube-controlplane up to date"
else
  t=$SECONDS
  log "building kube-controlplane (kubernetes $K8S_VERSION, etcd $ETCD_VERSION) ..."
  download_modules
  log "modules ready after $((SECONDS - t))s; compiling ..."
  (cd "$src" && "$go" build -mod=readonly -trimpath -ldflags "$ldflags" -o "$bin/.kube-controlplane.tmp" .)
  mv -f "$bin/.kube-controlplane.tmp" "$bin/kube-controlplane"
  echo "$cp_stamp" >"$bin/.kube-controlplane.stamp"
  log "kube-controlplane built in $((SECONDS - t))s"
fi
for l in kube-apiserver kube-controller-manager kube-scheduler etcd; do
  ln -sfn kube-controlplane "$bin/$l"
done

if current kubelet "$kubelet_stamp"; then
  log "kubelet up to date"
else
  t=$SECONDS
  log "building kubelet (kubernetes $K8S_VERSION) ..."
  download_modules
  (cd "$src" && "$go" build -mod=readonly -trimpath -ldflags "$ldflags" -o "$bin/.kubelet.tmp" ./kubelet)
  mv -f "$bin/.kubelet.tmp" "$bin/kubelet"
  echo "$kubelet_stamp" >"$bin/.kubelet.stamp"
  log "kubelet built in $((SECONDS - t))s"
fi

if current kwok "$kwok_stamp"; then
  log "kwok up to date"
else
  t=$SECONDS
  log "building kwok $KWOK_VERSION ..."
  tmpbin=$(mktemp -d "$cache/.kwok-build.XXXXXX")
  GOBIN="$tmpbin" "$go" install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv -f "$tmpbin/kwok" "$bin/kwok"
  rmdir "$tmpbin"
  echo "$kwok_stamp" >"$bin/.kwok.stamp"
  log "kwok built in $((SECONDS - t))s"
fi

log "done in $((SECONDS - t_all))s: $bin"
"$bin/kube-controlplane" version >&2
"$bin/kubelet" --version >&2
