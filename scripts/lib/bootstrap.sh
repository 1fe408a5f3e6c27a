# Shared set-up for scripts/demo and scripts/test. Heavy builds are cached under $MENDFLOW_CACHE.
export MENDFLOW_CACHE="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
export UV_CACHE_DIR="${UV_CACHE_DIR:-$MENDFLOW_CACHE/uv}"
export UV_PYTHON_DOWNLOADS=never
# Where hatch_build.py has cargo build the native `mendflow` launcher (its crates compile once per machine).
export MENDFLOW_NATIVE_TARGET="${MENDFLOW_NATIVE_TARGET:-$MENDFLOW_CACHE/native-target}"
UV_VERSION=0.13.9

bootstrap_python() {
    if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
        python3 -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
    fi
    # Bytecode at install: where PYTHONDONTWRITEBYTECODE is set (this project's CI machines), every command and
    # every Prefect server would otherwise compile Prefect's ~3,500 modules from source: ~5 s per process.
    uv sync --frozen --quiet --compile-bytecode
}

# A cold CI machine spends ~35 min here, so CPU-bound Go compiles run beside work that mostly waits on downloads,
# dpkg and the disk: the Debian packages beside golangci-lint (which the Go image takes rather than compiling it
# again, so it comes before the images), then Kubernetes and Weaviate beside the image builds.
bootstrap_services() {
    local status=0 lane
    bootstrap_debian_tools &
    lane=$!
    bash scripts/build-go-tools.sh || status=$?
    wait "$lane" || status=$?
    [ "$status" = 0 ] || return "$status"
    (bash scripts/build-k8s.sh && bash scripts/build-weaviate.sh) &
    lane=$!
    bootstrap_images || status=$?
    wait "$lane" || status=$?
    return "$status"
}

# After the Debian tools (mmdebstrap, umoci). Root only, like the real node that runs them: without root the
# real_node tests skip (they fail instead under CI=true).
bootstrap_images() {
    if [ "$(id -u)" = 0 ]; then
        bash scripts/build-images.sh
    else
        echo "bootstrap: not root, so no CI images are built and the real_node tests will skip" >&2
    fi
}

# Debian packages the suite runs for real: chromium (UI screenshot check), prometheus + promtool (metrics scrape
# and alert rules), bubblewrap (the local launcher's network and filesystem namespaces), LLVM 22's coverage tools
# (Rust jobs' coverage: they must match the LLVM inside rustc 1.95, which rustup's llvm-tools would give, but
# that component is not on this machine), the real Kubernetes node's runtime (containerd + ctr, runc, iptables
# and the CNI plugins, which live in /usr/lib/cni rather than on PATH), and the offline CI image build
# (mmdebstrap, umoci; gcc and the static libc for the pause image; curl for the wheels). Installed only where we
# may: as root with apt. An entry is NAME:PACKAGE; NAME is a command looked up on PATH (plus the sbin dirs, which
# a non-root PATH lacks) or the absolute path of a file the package installs.
DEBIAN_TOOLS=(chromium:chromium prometheus:prometheus promtool:prometheus bwrap:bubblewrap llvm-cov-22:llvm-22 javac:openjdk-17-jdk-headless mvn:maven
    containerd:containerd ctr:containerd runc:runc iptables:iptables /usr/lib/cni/bridge:containernetworking-plugins
    mmdebstrap:mmdebstrap umoci:umoci gcc:gcc /usr/include/stdio.h:libc6-dev curl:curl)

bootstrap_debian_tools() {
    local missing=() entry name
    for entry in "${DEBIAN_TOOLS[@]}"; do
        name=${entry%%:*}
        case "$name" in
            /*) [ -e "$name" ] ;;
            *) PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" command -v "$name" >/dev/null 2>&1 ;;
        esac || missing+=("${entry#*:}")
    done
    [ ${#missing[@]} -eq 0 ] && return
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
    else
        echo "bootstrap: missing ${missing[*]} and no root apt-get to install them; tests that need them will fail" >&2
    fi
}
