#!/usr/bin/env bash
# Build the Go tools the Go CI image carries, for the local launcher's jobs (and the tests): golangci-lint v2,
# which the Go runner runs when a repository configures it.
#
#   CGO_ENABLED=0 go install -trimpath github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION
#
# -trimpath and CGO_ENABLED=0 as scripts/build-images.sh builds it for the Go image, which then takes this very
# binary instead of compiling it again (~2 min of a cold CI).
# The version must match images/ci-runner-go/Dockerfile's GOLANGCI_LINT_VERSION. Everything (GOPATH, GOMODCACHE,
# GOCACHE, the binary) lives under ${MENDFLOW_CACHE:-$HOME/.cache/mendflow}; the binary ends up in its bin/, where
# the local launcher looks for it. Idempotent: a matching version stamp means nothing to do.
# Cold build on 2 cores: a few minutes; the warm check takes milliseconds.
set -euo pipefail

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
CACHE="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
BIN_DIR="$CACHE/bin"
BIN="$BIN_DIR/golangci-lint"
STAMP="$BIN.version"
BUILD="$GOLANGCI_LINT_VERSION -trimpath"  # what the stamp records: a binary built otherwise is built again

up_to_date() { [[ -x "$BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$BUILD" ]]; }

if up_to_date; then
  echo "build-go-tools: golangci-lint is $GOLANGCI_LINT_VERSION already"
  exit 0
fi
mkdir -p "$BIN_DIR"
exec 9>"$CACHE/.build-go-tools.lock"
flock 9
if up_to_date; then exit 0; fi

GO_BIN=$(command -v go || echo /usr/local/go/bin/go)
start=$(date +%s)
env GOPATH="$CACHE/go-tools" GOMODCACHE="$CACHE/go-tools/mod" GOCACHE="$CACHE/go-tools/build" GOBIN="$BIN_DIR" \
  GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=local \
  "$GO_BIN" install -trimpath "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
echo "$BUILD" > "$STAMP"
echo "build-go-tools: built golangci-lint $GOLANGCI_LINT_VERSION in $(( $(date +%s) - start ))s"
