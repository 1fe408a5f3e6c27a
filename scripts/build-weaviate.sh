#!/usr/bin/env bash
# Build a real Weaviate server binary for tests, from the Go module proxy.
#
#   go install github.com/weaviate/weaviate/cmd/weaviate-server@$WEAVIATE_VERSION
#
# with CGO_ENABLED=0 and no replace directives (go install refuses modules
# whose go.mod has them; v1.27.0 .. v1.35.x have none).
#
# Everything (GOPATH, GOMODCACHE, GOCACHE, the binary) lives under
#   ${MENDFLOW_CACHE:-$HOME/.cache/mendflow}
# and the binary ends up at $MENDFLOW_CACHE/bin/weaviate-server.
#
# Idempotent: if the binary exists and its version stamp file
# ($MENDFLOW_CACHE/bin/weaviate-server.version) matches, it does nothing.
# Cold build on 2 idle cores: ~6.5 minutes (395 s measured; >10 min on a
# busy machine), module download + compile, ~3.3 GB of Go caches; the
# warm check (stamp matches) takes ~0.02 s.
#
# Env:
#   MENDFLOW_CACHE     cache root (default $HOME/.cache/mendflow)
#   WEAVIATE_VERSION   module version to build (default pinned below)
#   GO                 go binary (default: `go` on PATH, else /usr/local/go/bin/go)
#   WEAVIATE_FORCE=1   rebuild even if the stamp matches
set -euo pipefail

WEAVIATE_VERSION="${WEAVIATE_VERSION:-v1.35.2}"
CACHE="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
BIN_DIR="$CACHE/bin"
BIN="$BIN_DIR/weaviate-server"
STAMP="$BIN.version"
MODULE="github.com/weaviate/weaviate/cmd/weaviate-server"

start_ts=$(date +%s.%N)
elapsed() { awk -v s="$start_ts" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

up_to_date() {
  [[ -z "${WEAVIATE_FORCE:-}" && -x "$BIN" && -f "$STAMP" ]] \
    && [[ "$(cat "$STAMP")" == "$WEAVIATE_VERSION" ]]
}

if up_to_date; then
  echo "build-weaviate: $BIN is $WEAVIATE_VERSION already (checked in $(elapsed)s)"
  exit 0
fi

# Serialise concurrent builds (parallel pytest sessions / xdist workers all
# call this script); whoever waited re-checks the stamp.
mkdir -p "$BIN_DIR"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.build-weaviate.lock"
  flock 9
  if up_to_date; then
    echo "build-weaviate: $BIN is $WEAVIATE_VERSION (built by a concurrent run; waited $(elapsed)s)"
    exit 0
  fi
fi

GO_BIN="${GO:-}"
if [[ -z "$GO_BIN" ]]; then
  if command -v go >/dev/null 2>&1; then
    GO_BIN="$(command -v go)"
  elif [[ -x /usr/local/go/bin/go ]]; then
    GO_BIN=/usr/local/go/bin/go
  else
    echo "build-weaviate: no Go toolchain found (set GO=/path/to/go)" >&2
    exit 1
  fi
fi

mkdir -p "$BIN_DIR" "$CACHE/go" "$CACHE/go/pkg/mod" "$CACHE/go-build"

export GOPATH="$CACHE/go"
export GOMODCACHE="$CACHE/go/pkg/mod"
export GOCACHE="$CACHE/go-build"
export GOBIN="$BIN_DIR"
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -modcacherw"   # lets `rm -rf $CACHE` work
# The module's go.mod asks for go 1.25; allow the toolchain to fetch a newer
# one only if the local Go is too old.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"

echo "build-weaviate: building $MODULE@$WEAVIATE_VERSION with $("$GO_BIN" version)"
echo "build-weaviate: cache $CACHE"

rm -f "$STAMP"
"$GO_BIN" install -trimpath -ldflags="-s -w" "$MODULE@$WEAVIATE_VERSION"

if [[ ! -x "$BIN" ]]; then
  echo "build-weaviate: go install finished but $BIN is missing" >&2
  exit 1
fi
printf '%s\n' "$WEAVIATE_VERSION" > "$STAMP"
echo "build-weaviate: built $BIN ($WEAVIATE_VERSION) in $(elapsed)s"
