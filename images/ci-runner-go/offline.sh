# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the Go CI image, read by scripts/build-images.sh (see images/README.md). It builds
# what ./Dockerfile builds, without the golang and python:slim base images: Debian bookworm's python3 (3.11),
# gcc and libc6-dev for cgo; the Go toolchain of ./Dockerfile's GO_VERSION from the Go module proxy (the module
# golang.org/toolchain, checked against the checksum database), and golangci-lint at ./Dockerfile's pin, built
# by that toolchain as the Dockerfile's go stage does (`go install`, CGO_ENABLED=0, and -trimpath, so the binary
# does not depend on the cache's path); the standard library seed (mendflow_go.warm), built inside the image.
# ENV/USER/WORKDIR/CMD are read from ./Dockerfile.

IMAGE_INPUTS=(images/rootfs-lib.sh images/ci-runner-python/mendflow_runner images/ci-runner-go/mendflow_go)
DEBIAN_PACKAGES=(python3 python-is-python3 ca-certificates gcc libc6-dev)
IMAGE_BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
IMAGE_GO=$(dockerfile_arg GO_VERSION)
IMAGE_GO_INSTALL=("github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(dockerfile_arg GOLANGCI_LINT_VERSION)")
IMAGE_SMOKE=(
  "sh -c 'go version && go env GOROOT GOCACHE GOMODCACHE && gofmt -l /opt/mendflow && golangci-lint --version'"
  "sh -c 'mkdir /tmp/m && cd /tmp/m && printf \"package main\\n\\n// int two(void) { return 2; }\\nimport \\\"C\\\"\\n\\nfunc main() { println(C.two()) }\\n\" >m.go && go mod init m >/dev/null 2>&1 && go run . && echo cgo ok'"
  "sh -c 'python -m mendflow_go --help >/dev/null && python -c \"import mendflow_go.build\" && echo runner ok'"
  "sh -c 'id && touch /workspace/w /cache/c /tmp/t && ! touch /opt/mendflow/x /x 2>/dev/null && echo read-only root ok'"
)
