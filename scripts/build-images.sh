#!/usr/bin/env bash
# Build mendflow's container images offline, with no base image and no registry, into
# $MENDFLOW_CACHE/images/ (default ~/.cache/mendflow/images) as OCI archives:
#
#   pause              registry.k8s.io/pause:3.10, built from pause.c (the test node's sandbox image)
#   ci-runner-python   mendflow.local/ci-runner-python:<tag>, what images/ci-runner-python/Dockerfile builds
#   ci-runner-java     ... and likewise for Java (Debian's JDK and Maven), Go (the toolchain from the Go module
#   ci-runner-go       proxy, checked against the checksum database), Node (node and npm from the npm registry,
#   ci-runner-node     checked against its sha512 integrity), Rust (the toolchain's components from
#   ci-runner-rust     static.rust-lang.org, checked against the sha256 of the release's channel manifest)
#
# An image is a directory images/<name>/ with an offline.sh description (see images/README.md): Debian packages
# (root filesystem by mmdebstrap, then a customize hook) or a function that fills the root filesystem, and the
# OCI config (read from the Dockerfile when there is one). The result is one layer, assembled by umoci, with
# fixed timestamps: the same inputs and the same cached .debs give the same manifest digest.
#
# All images of one build share one tag: a hash of every image's inputs (description, Dockerfile, sources, pins,
# this script). $MENDFLOW_CACHE/images/index.json says, for each image that is current, its archive, ref,
# manifest digest and archive size; import one with
#   ctr -n k8s.io images import --base-name <ref without :tag> <archive>
# and point the launcher at them with MENDFLOW_KUBERNETES__IMAGE_REGISTRY=mendflow.local and
# MENDFLOW_KUBERNETES__IMAGE_TAG=<tag>.
#
# Idempotent: an image is rebuilt only when its inputs' stamp changed; a warm run is a no-op (~0.15 s).
# Caches: .debs in $MENDFLOW_CACHE/debs, PyPI wheels in $MENDFLOW_CACHE/wheels (sha256-checked against the
# index), npm tarballs in $MENDFLOW_CACHE/npm (sha512), Go toolchains in $MENDFLOW_CACHE/go-toolchains (a module
# cache), Rust components in $MENDFLOW_CACHE/rust-dist (sha256 of the channel manifest). Needs root (mmdebstrap
# --mode=root), mmdebstrap, umoci, gcc (static libc), curl, python3, go (Go image), xz (Rust image).
#
# Usage: scripts/build-images.sh [--check] [--smoke] [IMAGE...]     (default: every images/*/offline.sh)
#   --check   exit 0 if the images (and index.json) are built and current, 1 otherwise; build nothing.
#   --smoke   after building, run each image's smoke commands with runc: the image's user, read-only root,
#             tmpfs at /tmp /workspace /cache, no capabilities (as the pod runs it).
set -euo pipefail
shopt -s inherit_errexit # a failing description (dockerfile_arg) stops the build

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/.." && pwd)
cache="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
out="$cache/images"

# Settings that shape every image (they are part of each image's stamp, as is this whole file).
REGISTRY=mendflow.local
DEBIAN_SUITE=bookworm
# Point these at snapshot.debian.org/archive/debian{,-security}/<timestamp> where it is reachable, for builds
# that are reproducible without the .deb cache.
DEBIAN_MIRROR=${MENDFLOW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${MENDFLOW_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PYPI_SIMPLE=${MENDFLOW_PYPI_SIMPLE:-https://pypi.org/simple}
WHEEL_PLATFORM=manylinux_2_17_x86_64
NPM_REGISTRY=${MENDFLOW_NPM_REGISTRY:-https://registry.npmjs.org}
# The Go toolchain module is checked against this checksum database whatever the proxy (the host's GOPROXY).
GO_SUMDB=${MENDFLOW_GOSUMDB:-sum.golang.org}
# rustup's distribution server: dist/channel-rust-<version>.toml names each component's tarball and its sha256.
RUST_DIST=${MENDFLOW_RUST_DIST:-https://static.rust-lang.org/dist}
RUST_TARGET=x86_64-unknown-linux-gnu
ARCH=amd64
export SOURCE_DATE_EPOCH=1700000000

check_only=0 smoke=0 names=()
for a in "$@"; do
  case "$a" in
    --check) check_only=1 ;;
    --smoke) smoke=1 ;;
    -h|--help) sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-images.sh: unknown option: $a" >&2; exit 2 ;;
    *) names+=("$a") ;;
  esac
done

log() { printf '[build-images %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { echo "build-images.sh: $*" >&2; exit 1; }

# need WHAT TOOL...: one clear line and exit 1 if a tool is missing.
need() {
  local what=$1 t; shift
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 ||
      die "$t not found on PATH (needed to build $what; Debian: apt-get install $(pkg_of "$t"))"
  done
}
pkg_of() { case "$1" in gcc) echo "gcc libc6-dev" ;; xz) echo xz-utils ;; *) echo "$1" ;; esac; }

sha16() { sha256sum | cut -c1-16; }

# hash_paths PATH...: the contents and modes of these repo-relative files/directories (no bytecode).
hash_paths() {
  (
    cd "$ROOT"
    find "$@" -name __pycache__ -prune -o -type f ! -name '*.pyc' -printf '%m %p\n' | LC_ALL=C sort
    find "$@" -name __pycache__ -prune -o -type f ! -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  ) | sha16
}

# The pod's uid: the Dockerfiles' ARG JOB_UID must equal it (checked when the config is read).
JOB_UID=$(sed -n 's/^JOB_UID = \([0-9][0-9]*\).*/\1/p' "$ROOT/mendflow/launcher/k8s_manifest.py")
[[ -n "$JOB_UID" ]] || die "no JOB_UID in mendflow/launcher/k8s_manifest.py"

all_names=()
for d in "$ROOT"/images/*/offline.sh; do
  [[ -f "$d" ]] && all_names+=("$(basename "$(dirname "$d")")")
done
[[ ${#names[@]} -gt 0 ]] || names=("${all_names[@]}")
for n in "${names[@]}"; do
  [[ -f "$ROOT/images/$n/offline.sh" ]] || die "no image $n (images/$n/offline.sh); known: ${all_names[*]}"
done

# --- image descriptions -------------------------------------------------------------------------------------

# dockerfile_arg NAME: the default of `ARG NAME=...` in the image's Dockerfile (for descriptions' pins).
dockerfile_arg() {
  local v
  v=$(sed -n "s/^ARG $1=\\(.*\\)$/\\1/p" "$IMAGE_DIR/Dockerfile" | head -n 1)
  [[ -n "$v" ]] || die "no 'ARG $1=...' in $IMAGE_DIR/Dockerfile"
  printf '%s\n' "$v"
}

# load NAME: source the description (call in a subshell).
load() {
  IMAGE_NAME=$1 IMAGE_DIR="$ROOT/images/$1"
  IMAGE_REF='' IMAGE_INPUTS=() DEBIAN_PACKAGES=() DEBIAN_HOOKS=() IMAGE_BASE_ENV=() IMAGE_WHEELS=() IMAGE_CONFIG=()
  IMAGE_SMOKE=() IMAGE_NPM=() IMAGE_GO='' IMAGE_GO_INSTALL=() IMAGE_RUST='' IMAGE_RUST_COMPONENTS=()
  unset -f image_rootfs
  # shellcheck source=/dev/null
  source "$IMAGE_DIR/offline.sh"
}

# inputs: the stamp of the loaded image's inputs.
inputs() {
  {
    sha256sum <"$here/build-images.sh"
    local own=("images/$IMAGE_NAME/offline.sh") f
    for f in Dockerfile rootfs-hook.sh; do [[ -f "$IMAGE_DIR/$f" ]] && own+=("images/$IMAGE_NAME/$f"); done
    hash_paths "${own[@]}" "${IMAGE_INPUTS[@]}"
    printf '%s\n' "ref=$IMAGE_REF uid=$JOB_UID epoch=$SOURCE_DATE_EPOCH arch=$ARCH"
    printf '%s\n' "debian=${DEBIAN_PACKAGES[*]} suite=$DEBIAN_SUITE $DEBIAN_MIRROR $DEBIAN_SECURITY_MIRROR"
    [[ ${#DEBIAN_HOOKS[@]} -eq 0 ]] || printf '%s\n' "hooks=${DEBIAN_HOOKS[*]}"
    [[ ${#IMAGE_NPM[@]} -eq 0 ]] || printf '%s\n' "npm=${IMAGE_NPM[*]} $NPM_REGISTRY"
    [[ -z "$IMAGE_GO" ]] || printf '%s\n' "go=$IMAGE_GO $GO_SUMDB install=${IMAGE_GO_INSTALL[*]}"
    [[ -z "$IMAGE_RUST" ]] || printf '%s\n' "rust=$IMAGE_RUST ${IMAGE_RUST_COMPONENTS[*]} $RUST_TARGET $RUST_DIST"
    printf '%s\n' "wheels=${IMAGE_WHEELS[*]} $WHEEL_PLATFORM env=${IMAGE_BASE_ENV[*]} config=${IMAGE_CONFIG[*]}"
  } | sha16
}

declare -A INPUTS REF
for n in "${all_names[@]}"; do
  INPUTS[$n]=$( load "$n"; inputs )
done
TAG=$(for n in "${all_names[@]}"; do echo "$n=${INPUTS[$n]}"; done | sha16)
for n in "${all_names[@]}"; do
  REF[$n]=$( load "$n"; printf '%s\n' "${IMAGE_REF:-$REGISTRY/$n:$TAG}" )
done

# --- stamps and index.json ----------------------------------------------------------------------------------

# current NAME: its archive exists and its stamp ("inputs ref digest size") matches.
current() {
  local s="$out/.$1.stamp" a="$out/$1.tar" line
  [[ -f "$s" && -f "$a" ]] || return 1
  line=$(<"$s")
  [[ "$line" == "${INPUTS[$1]} ${REF[$1]} sha256:"* && "${line##* }" == "$(stat -c %s "$a")" ]]
}

index_json() {
  local n first=1 d s
  printf '{\n  "registry": "%s",\n  "tag": "%s",\n  "images": {' "$REGISTRY" "$TAG"
  for n in "${all_names[@]}"; do
    current "$n" || continue
    read -r _ _ d s <"$out/.$n.stamp"
    ((first)) || printf ','
    first=0
    printf '\n    "%s": {\n      "archive": "%s",\n      "ref": "%s",\n      "digest": "%s",\n      "size": %s\n    }' \
      "$n" "$n.tar" "${REF[$n]}" "$d" "$s"
  done
  printf '\n  }\n}'
}

index_current() { [[ -f "$out/index.json" && "$(<"$out/index.json")" == "$(index_json)" ]]; }

write_index() {
  index_current && return 0
  index_json >"$out/.index.json.$$"
  printf '\n' >>"$out/.index.json.$$"
  mv -f "$out/.index.json.$$" "$out/index.json"
}

stale=()
for n in "${names[@]}"; do current "$n" || stale+=("$n"); done
if [[ ${#stale[@]} -eq 0 ]] && index_current && ((!smoke)); then
  log "up to date in $out (tag $TAG: ${names[*]})"
  exit 0
fi
if ((check_only)); then
  if [[ ${#stale[@]} -gt 0 ]]; then log "not built or stale in $out: ${stale[*]}"; else log "index.json stale in $out"; fi
  exit 1
fi

# --- building -----------------------------------------------------------------------------------------------

# fetch_wheel NAME==VERSION: path of the cached manylinux wheel, downloaded and sha256-checked against the index.
fetch_wheel() {
  local name=${1%%==*} version=${1##*==} dir="$cache/wheels" f meta file sum url
  for f in "$dir/$name-$version-"*"$WHEEL_PLATFORM"*.whl; do
    if [[ -f "$f" && -f "$f.sha256" && "$(sha256sum <"$f" | cut -c1-64)" == "$(<"$f.sha256")" ]]; then
      printf '%s\n' "$f"
      return 0
    fi
  done
  mkdir -p "$dir"
  meta=$(curl -fsSL --retry 3 -H 'Accept: application/vnd.pypi.simple.v1+json' "$PYPI_SIMPLE/$name/" |
    python3 -c '
import json, re, sys
name, version, platform = sys.argv[1:]
files = json.load(sys.stdin)["files"]
pat = re.compile(re.escape(f"{name}-{version}-") + r"py3-none-.*" + re.escape(platform) + r"[^-]*\.whl$")
for f in files:
    if pat.match(f["filename"]) and not f.get("yanked"):
        print(f["filename"], f["hashes"]["sha256"], f["url"])
        break
' "$name" "$version" "$WHEEL_PLATFORM") || die "cannot read $PYPI_SIMPLE/$name/"
  [[ -n "$meta" ]] || die "no $WHEEL_PLATFORM wheel of $name $version on $PYPI_SIMPLE"
  read -r file sum url <<<"$meta"
  log "downloading $file"
  curl -fsSL --retry 3 -o "$dir/$file.part" "$url" || die "cannot download $url"
  [[ "$(sha256sum <"$dir/$file.part" | cut -c1-64)" == "$sum" ]] || {
    rm -f "$dir/$file.part"
    die "$file: sha256 differs from the index's $sum"
  }
  printf '%s\n' "$sum" >"$dir/$file.sha256"
  mv -f "$dir/$file.part" "$dir/$file"
  printf '%s\n' "$dir/$file"
}

# fetch_npm NAME@VERSION: path of the cached npm registry tarball, downloaded and checked against the sha512 of
# the registry's dist.integrity (on download and on every use).
fetch_npm() {
  local name=${1%@*} version=${1##*@} dir="$cache/npm" f meta sum url
  f="$dir/${name//\//+}-$version.tgz"
  if [[ -f "$f" && -f "$f.sha512" && "$(sha512sum <"$f" | cut -c1-128)" == "$(<"$f.sha512")" ]]; then
    printf '%s\n' "$f"
    return 0
  fi
  mkdir -p "$dir"
  meta=$(curl -fsSL --retry 3 "$NPM_REGISTRY/${name//\//%2f}/$version" | python3 -c '
import base64, json, sys
dist = json.load(sys.stdin)["dist"]
alg, _, b64 = dist["integrity"].partition("-")
if alg != "sha512":
    sys.exit(f"integrity is {alg}, not sha512")
print(base64.b64decode(b64).hex(), dist["tarball"])
') || die "cannot read $NPM_REGISTRY/$name/$version"
  read -r sum url <<<"$meta"
  log "downloading $url"
  curl -fsSL --retry 3 -o "$f.part" "$url" || die "cannot download $url"
  [[ "$(sha512sum <"$f.part" | cut -c1-128)" == "$sum" ]] || {
    rm -f "$f.part"
    die "$name@$version: sha512 differs from the registry's integrity"
  }
  printf '%s\n' "$sum" >"$f.sha512"
  mv -f "$f.part" "$f"
  printf '%s\n' "$f"
}

# go_toolchain VERSION: the GOROOT of Go VERSION for linux/$ARCH: the module golang.org/toolchain from the host's
# GOPROXY, which `go mod download` checks against $GO_SUMDB, in the module cache $cache/go-toolchains. The module
# zip carries no file modes: set the execute bits as the go command does when it switches to a toolchain.
go_toolchain() {
  local v=$1 dir
  dir=$(env GOMODCACHE="$cache/go-toolchains" GOFLAGS=-modcacherw GOTOOLCHAIN=local GOSUMDB="$GO_SUMDB" \
    GONOSUMDB='' GONOSUMCHECK='' GOPRIVATE='' GOINSECURE='' GOPROXY="${MENDFLOW_GOPROXY:-$(go env GOPROXY)}" \
    go mod download -json "golang.org/toolchain@v0.0.1-go$v.linux-$ARCH" |
    python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(d["Error"]) if "Error" in d else print(d["Dir"])') ||
    die "cannot download Go $v (golang.org/toolchain) from the module proxy"
  find "$dir/pkg/tool" "$dir/bin" -type f -exec chmod 0555 {} +
  find "$dir/lib" -type f -name 'go_?*_?*_exec' -exec chmod 0555 {} +
  [[ "$("$dir/bin/go" version)" == "go version go$v linux/$ARCH" ]] || die "$dir/bin/go is not go$v linux/$ARCH"
  printf '%s\n' "$dir"
}

# go_binary GOROOT PACKAGE@VERSION BIN: is BIN that command, built by GOROOT's release with -trimpath and
# CGO_ENABLED=0?
go_binary() {
  local info v
  info=$("$1/bin/go" version -m "$3" 2>/dev/null) || return 1
  v=$("$1/bin/go" env GOVERSION)
  [[ "$(head -n 1 <<<"$info")" == "$3: $v" ]] &&
    grep -qxF "$(printf '\tpath\t%s' "${2%@*}")" <<<"$info" &&
    grep -qE "^$(printf '\t')mod$(printf '\t').*$(printf '\t')${2##*@}($(printf '\t')|$)" <<<"$info" &&
    grep -qxF "$(printf '\tbuild\t-trimpath=true')" <<<"$info" &&
    grep -qxF "$(printf '\tbuild\tCGO_ENABLED=0')" <<<"$info"
}

# go_install GOROOT PACKAGE@VERSION: path of the command, `go install`ed (CGO_ENABLED=0) by GOROOT's go, modules
# checked against $GO_SUMDB. -trimpath, so the binary does not depend on where the toolchain and the module cache
# are (as golangci-lint's release binaries). scripts/build-go-tools.sh's binary ($cache/bin) is taken when it is
# the same build (that script builds it so).
go_install() {
  local goroot=$1 name=${2%@*} out bin
  name=${name##*/} out="$cache/go-toolchains/bin/$("$goroot/bin/go" env GOVERSION)"
  for bin in "$cache/bin/$name" "$out/$name"; do
    if go_binary "$goroot" "$2" "$bin"; then
      printf '%s\n' "$bin"
      return 0
    fi
  done
  log "building $2 with $goroot/bin/go"
  env GOPATH="$cache/go-tools" GOMODCACHE="$cache/go-tools/mod" GOCACHE="$cache/go-tools/build" GOBIN="$out" \
    GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=local GOSUMDB="$GO_SUMDB" GONOSUMDB='' GONOSUMCHECK='' \
    GOPRIVATE='' GOINSECURE='' GOPROXY="${MENDFLOW_GOPROXY:-$(go env GOPROXY)}" \
    "$goroot/bin/go" install -trimpath "$2" >&2 || die "cannot build $2"
  go_binary "$goroot" "$2" "$out/$name" || die "$out/$name is not $2"
  printf '%s\n' "$out/$name"
}

# cached_sha256 FILE: FILE exists with its FILE.sha256 (recorded when it was downloaded and checked) and matches.
cached_sha256() { [[ -f "$1" && -f "$1.sha256" && "$(sha256sum <"$1" | cut -c1-64)" == "$(<"$1.sha256")" ]]; }

# download_sha256 URL SHA256 FILE: URL to FILE (atomically) if its sha256 is SHA256, recorded in FILE.sha256.
download_sha256() {
  log "downloading $1"
  curl -fsSL --retry 3 -o "$3.part" "$1" || die "cannot download $1"
  [[ "$(sha256sum <"$3.part" | cut -c1-64)" == "$2" ]] || { rm -f "$3.part"; die "$1: sha256 is not $2"; }
  printf '%s\n' "$2" >"$3.sha256"
  mv -f "$3.part" "$3"
}

# rust_dist VERSION COMPONENT...: paths of the cached component tarballs of Rust VERSION for $RUST_TARGET (rustc,
# rust-std, cargo, clippy-preview, ...: the channel manifest's package names). The manifest
# (dist/channel-rust-VERSION.toml, checked against the server's .sha256 of it) gives each tarball's URL and
# sha256; each tarball is checked on download and on every use, as is the cached manifest.
rust_dist() {
  local v=$1 dir="$cache/rust-dist" manifest sum list url hash f
  shift
  manifest="$dir/channel-rust-$v.toml"
  mkdir -p "$dir"
  if ! cached_sha256 "$manifest"; then
    sum=$(curl -fsSL --retry 3 "$RUST_DIST/channel-rust-$v.toml.sha256" | cut -c1-64) ||
      die "cannot read $RUST_DIST/channel-rust-$v.toml.sha256"
    download_sha256 "$RUST_DIST/channel-rust-$v.toml" "$sum" "$manifest"
  fi
  list=$(python3 - "$manifest" "$v" "$RUST_TARGET" "$@" <<'PY'
import sys, tomllib
path, version, target, *components = sys.argv[1:]
m = tomllib.load(open(path, "rb"))
if not m["pkg"]["rust"]["version"].startswith(version + " "):
    sys.exit(f"{path}: Rust {m['pkg']['rust']['version']}, not {version}")
for c in components:
    t = m["pkg"].get(c, {}).get("target", {}).get(target, {})
    if not t.get("available") or "xz_url" not in t:
        sys.exit(f"{path}: no {c} for {target}")
    print(t["xz_url"], t["xz_hash"])
PY
  ) || die "Rust $v: cannot read its components from $manifest"
  while read -r url hash; do
    f="$dir/${url##*/}"
    if ! cached_sha256 "$f" || [[ "$(<"$f.sha256")" != "$hash" ]]; then download_sha256 "$url" "$hash" "$f"; fi
    printf '%s\n' "$f"
  done <<<"$list"
}

# dockerfile_config DOCKERFILE: umoci config flags (NUL-separated) for the final stage's ENV, USER, WORKDIR,
# ENTRYPOINT and CMD, with ARG defaults substituted; the USER's uid must be JOB_UID.
dockerfile_config() {
  python3 - "$1" "$JOB_UID" "${IMAGE_BASE_ENV[@]}" <<'PY'
import json, re, shlex, sys
path, job_uid = sys.argv[1], sys.argv[2]
base = dict(e.partition("=")[::2] for e in sys.argv[3:])  # what $VAR means before the stage's ENV sets it
text = re.sub(r"\\\n", " ", "\n".join(l for l in open(path).read().splitlines() if not l.lstrip().startswith("#")))
args, env, user, workdir, cmd, entry = {}, [], None, None, None, None
def sub(s):
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], {**base, **dict(env)}.get(m[1] or m[2], "")), s)
for line in text.splitlines():
    if not line.strip():
        continue
    op, _, rest = line.strip().partition(" ")
    op, rest = op.upper(), rest.strip()
    if op == "FROM":
        env, user, workdir, cmd, entry = [], None, None, None, None
    elif op == "ARG":
        k, _, v = rest.partition("=")
        args[k.strip()] = v.strip()
    elif op == "ENV":
        words = shlex.split(rest)
        pairs = [w.partition("=")[::2] for w in words] if "=" in words[0] else [(words[0], " ".join(words[1:]))]
        for k, v in pairs:
            env = [(a, b) for a, b in env if a != k] + [(k, sub(v))]
    elif op == "USER":
        user = sub(rest)
    elif op == "WORKDIR":
        workdir = sub(rest)
    elif op in ("CMD", "ENTRYPOINT"):
        v = json.loads(rest) if rest.startswith("[") else ["/bin/sh", "-c", rest]
        cmd, entry = (v, entry) if op == "CMD" else (cmd, v)
if user is None or user.split(":")[0] != job_uid:
    sys.exit(f"build-images.sh: {path}: USER {user} is not JOB_UID {job_uid} (mendflow/launcher/k8s_manifest.py)")
flags = []
for k, v in env:
    flags += ["--config.env", f"{k}={v}"]
flags += ["--config.user", user if ":" in user else f"{user}:{user}"]
if workdir:
    flags += ["--config.workingdir", workdir]
for v in entry or []:
    flags += ["--config.entrypoint", v]
for v in cmd or []:
    flags += ["--config.cmd", v]
sys.stdout.write("".join(f + "\0" for f in flags))
PY
}

# debian_rootfs TAR: mmdebstrap the loaded image's packages (plus its rootfs-hook.sh) into TAR.
debian_rootfs() {
  local tar=$1 w hook=()
  MF_WHEELS=''
  for w in "${IMAGE_WHEELS[@]}"; do MF_WHEELS+="$(fetch_wheel "$w") "; done
  MF_NPM='' MF_GOROOT='' MF_GOBIN='' MF_RUST=''
  for w in "${IMAGE_NPM[@]}"; do MF_NPM+="$(fetch_npm "$w") "; done
  if [[ -n "$IMAGE_GO" ]]; then
    MF_GOROOT=$(go_toolchain "$IMAGE_GO")
    for w in "${IMAGE_GO_INSTALL[@]}"; do MF_GOBIN+="$(go_install "$MF_GOROOT" "$w") "; done
  fi
  if [[ -n "$IMAGE_RUST" ]]; then
    MF_RUST=$(rust_dist "$IMAGE_RUST" "${IMAGE_RUST_COMPONENTS[@]}" | tr '\n' ' ')
  fi
  export MF_WHEELS MF_NPM MF_GOROOT MF_GOBIN MF_RUST MF_UID=$JOB_UID MF_REPO=$ROOT
  [[ -x "$IMAGE_DIR/rootfs-hook.sh" ]] && hook=(--customize-hook="$(printf '%q' "$IMAGE_DIR/rootfs-hook.sh") \"\$1\"")
  mkdir -p "$cache/debs"
  # The .deb cache: sync-in before apt downloads, sync-out after install; --skip=essential/unlink keeps the
  # essential packages' .debs until then (without it only the non-essential ones are cached).
  # shellcheck disable=SC2016 # the hooks' "$1" is mmdebstrap's (the root filesystem), not ours
  TMPDIR="$work" nice -n 19 mmdebstrap --mode=root --variant=essential --architectures="$ARCH" \
    --include="$(IFS=,; echo "${DEBIAN_PACKAGES[*]}")" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --skip=download/empty --skip=essential/unlink \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="sync-in $(printf '%q' "$cache/debs") /var/cache/apt/archives" \
    "${DEBIAN_HOOKS[@]}" \
    --customize-hook="sync-out /var/cache/apt/archives $(printf '%q' "$cache/debs")" \
    "${hook[@]}" \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/*' \
    --customize-hook='rm -rf "$1"/var/log/* "$1"/var/cache/ldconfig/aux-cache' \
    --customize-hook=': >"$1/etc/resolv.conf"; : >"$1/etc/hostname"; chmod 0644 "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$DEBIAN_SUITE" "$tar" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main"
}

# archive NAME LAYOUT: tar the OCI layout into $out/NAME.tar (atomically) and write the stamp.
archive() {
  local n=$1 layout=$2 digest size
  digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$layout/index.json")
  tar -C "$layout" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    -cf "$out/.$n.tar.$$" oci-layout index.json blobs
  mv -f "$out/.$n.tar.$$" "$out/$n.tar"
  size=$(stat -c %s "$out/$n.tar")
  printf '%s %s %s %s\n' "${INPUTS[$n]}" "${REF[$n]}" "$digest" "$size" >"$out/.$n.stamp.$$"
  mv -f "$out/.$n.stamp.$$" "$out/.$n.stamp"
  log "$n: ${REF[$n]} $digest, archive $size bytes"
}

# build NAME: (in a subshell) root filesystem -> one-layer OCI layout -> archive.
build() {
  local n=$1 t=$SECONDS tag layout="$out/.oci/$1" old config=()
  load "$n"
  tag=${REF[$n]##*:}
  # Only the tag changed (another image's inputs did): retag the kept layout.
  if [[ -f "$out/.$n.stamp" && -d "$layout" ]]; then
    read -r old _ <"$out/.$n.stamp"
    if [[ "$old" == "${INPUTS[$n]}" ]]; then
      old=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])' "$layout/index.json")
      log "$n: inputs unchanged: re-archiving the kept layout (tag $old -> $tag)"
      if [[ "$old" != "$tag" ]]; then
        umoci tag --image "$layout:$old" "$tag"
        umoci rm --image "$layout:$old"
      fi
      archive "$n" "$layout"
      return 0
    fi
  fi
  work="$out/.work/$n"
  rm -rf "$work" "$layout"
  mkdir -p "$work" "$out/logs"
  local logf="$out/logs/$n.log"
  log "$n: building root filesystem (log: $logf)"
  if [[ ${#DEBIAN_PACKAGES[@]} -gt 0 ]]; then
    if ! debian_rootfs "$work/rootfs.tar" >"$logf" 2>&1; then
      tail -n 30 "$logf" >&2
      die "$n: mmdebstrap failed (log: $logf)"
    fi
  else
    mkdir -m 0755 "$work/root"
    if ! image_rootfs "$work/root" >"$logf" 2>&1; then
      tail -n 30 "$logf" >&2
      die "$n: image_rootfs failed (log: $logf)"
    fi
    tar -C "$work/root" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --owner=0 --group=0 \
      --numeric-owner --format=pax --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' \
      -cf "$work/rootfs.tar" .
  fi
  log "$n: root filesystem $(stat -c %s "$work/rootfs.tar") bytes uncompressed, $((SECONDS - t)) s"
  # The config: the description's, or the Dockerfile's (after the base image's env).
  if [[ ${#IMAGE_CONFIG[@]} -gt 0 ]]; then
    config=("${IMAGE_CONFIG[@]}")
  else
    local e
    for e in "${IMAGE_BASE_ENV[@]}"; do config+=(--config.env "$e"); done
    mapfile -d '' -O "${#config[@]}" config < <(dockerfile_config "$IMAGE_DIR/Dockerfile")
    [[ ${#config[@]} -gt ${#IMAGE_BASE_ENV[@]} ]] || die "$n: cannot read the config from $IMAGE_DIR/Dockerfile"
  fi
  mkdir -p "$out/.oci"
  {
    umoci init --layout "$layout"
    umoci new --image "$layout:$tag"
    umoci raw add-layer --no-history --image "$layout:$tag" "$work/rootfs.tar"
    umoci config --no-history --image "$layout:$tag" --architecture "$ARCH" --os linux \
      --created "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)" "${config[@]}"
    umoci gc --layout "$layout" # drops the superseded config and manifest blobs
  } >>"$logf" 2>&1 || { tail -n 30 "$logf" >&2; die "$n: umoci failed (log: $logf)"; }
  archive "$n" "$layout"
  rm -rf "$work"; rmdir "$out/.work" 2>/dev/null || true
  log "$n: built in $((SECONDS - t)) s"
}

# smoke NAME: run the image's IMAGE_SMOKE commands with runc as the pod would (see the usage above).
smoke() {
  local n=$1 tag dir="$out/.smoke/$1" i=0 cmd rc=0
  load "$n"
  tag=${REF[$n]##*:}
  rm -rf "$dir"
  mkdir -p "$dir"
  umoci unpack --image "$out/.oci/$n:$tag" "$dir/bundle" >/dev/null
  for cmd in "${IMAGE_SMOKE[@]}"; do
    i=$((i + 1))
    python3 - "$dir/bundle/config.json" "$cmd" <<'PY'
import json, shlex, sys
path, cmd = sys.argv[1:]
c = json.load(open(path))
p = c["process"]
p["args"], p["terminal"], p["noNewPrivileges"] = shlex.split(cmd), False, True
p["capabilities"] = {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")}
c["root"]["readonly"] = True
uid, gid = p["user"]["uid"], p["user"]["gid"]
c["mounts"] = [m for m in c["mounts"] if m["destination"] not in ("/tmp", "/workspace", "/cache")]
for d, mode in (("/tmp", "1777"), ("/workspace", "0755"), ("/cache", "0755")):
    c["mounts"].append({"destination": d, "type": "tmpfs", "source": "tmpfs",
                        "options": ["nosuid", "nodev", f"mode={mode}", f"uid={uid}", f"gid={gid}"]})
c.get("linux", {}).pop("uidMappings", None)
c.get("linux", {}).pop("gidMappings", None)
json.dump(c, open(path, "w"))
PY
    log "$n: smoke: $cmd"
    runc --root "$dir/runc" run --bundle "$dir/bundle" "mendflow-imgtest-$n-$i-$$" </dev/null || rc=$?
    runc --root "$dir/runc" delete -f "mendflow-imgtest-$n-$i-$$" >/dev/null 2>&1 || true
    ((rc == 0)) || break
  done
  rm -rf "$dir"
  rmdir "$out/.smoke" 2>/dev/null || true
  ((rc == 0)) || die "$n: smoke command failed (exit $rc): $cmd"
}

# Tools, for what is to be built only (a warm run needs none of them).
for n in "${stale[@]}"; do
  ( load "$n"
    need "$n" umoci python3 tar
    if [[ ${#DEBIAN_PACKAGES[@]} -gt 0 ]]; then
      need "$n" mmdebstrap
      [[ ${#IMAGE_WHEELS[@]} -eq 0 && ${#IMAGE_NPM[@]} -eq 0 && -z "$IMAGE_RUST" ]] || need "$n" curl
      [[ -z "$IMAGE_GO" ]] || need "$n" go
      [[ -z "$IMAGE_RUST" ]] || need "$n" xz
      [[ "$(id -u)" == 0 ]] || die "building $n needs root (mmdebstrap --mode=root)"
    fi
    if declare -F image_rootfs >/dev/null; then need "$n" gcc; fi
  )
done
((smoke)) && need "the smoke test" runc umoci python3

mkdir -p "$out"
# One build at a time (parallel pytest workers, two terminals); then look again: another may have built them.
exec 9>"$cache/.build-images.lock"
flock 9
for n in "${names[@]}"; do
  current "$n" || ( build "$n" )
done
write_index
log "index $out/index.json (tag $TAG)"
if ((smoke)); then
  for n in "${names[@]}"; do ( smoke "$n" ); done
  log "smoke tests passed: ${names[*]}"
fi
