# Shared set-up for scripts/demo and scripts/test. Heavy builds are cached under $MENDFLOW_CACHE.
export MENDFLOW_CACHE="${MENDFLOW_CACHE:-$HOME/.cache/mendflow}"
export UV_CACHE_DIR="${UV_CACHE_DIR:-$MENDFLOW_CACHE/uv}"
export UV_PYTHON_DOWNLOADS=never
UV_VERSION=0.13.9

bootstrap_python() {
    if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
        python3 -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
    fi
    uv sync --frozen --quiet
}

bootstrap_services() {
    bash scripts/build-k8s.sh
    bash scripts/build-weaviate.sh
    bash scripts/build-go-tools.sh
    bootstrap_debian_tools
}

# Debian packages the suite runs for real: chromium (UI screenshot check), prometheus + promtool (metrics scrape
# and alert rules), bubblewrap (the local launcher's network and filesystem namespaces), LLVM 22's coverage tools
# (Rust jobs' coverage: they must match the LLVM inside rustc 1.95, which rustup's llvm-tools would give, but
# that component is not on this machine). Installed only where we may: as root with apt.
DEBIAN_TOOLS=(chromium:chromium prometheus:prometheus promtool:prometheus bwrap:bubblewrap llvm-cov-22:llvm-22 javac:openjdk-17-jdk-headless mvn:maven)

bootstrap_debian_tools() {
    local missing=() entry
    for entry in "${DEBIAN_TOOLS[@]}"; do
        command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}")
    done
    [ ${#missing[@]} -eq 0 ] && return
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
    else
        echo "bootstrap: missing ${missing[*]} and no root apt-get to install them; tests that need them will fail" >&2
    fi
}
