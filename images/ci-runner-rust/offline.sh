# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the Rust CI image, read by scripts/build-images.sh (see images/README.md). It builds
# what ./Dockerfile builds, without the rust and python:slim base images: Debian bookworm's python3 (3.11), gcc and
# libc6-dev (the linker rustc calls, and cc-rs); Rust (bookworm has 1.63) at ./Dockerfile's RUST_VERSION from
# static.rust-lang.org, the components rustup's `rustup component add clippy rustfmt llvm-tools` gives, each
# tarball checked against the sha256 in the release's channel manifest; installed as the sysroot /opt/rust, where
# the Dockerfile copies rustup's. ENV/USER/WORKDIR/CMD (PATH=/opt/rust/bin:...) are read from ./Dockerfile.

IMAGE_INPUTS=(images/rootfs-lib.sh images/ci-runner-python/mendflow_runner images/ci-runner-rust/mendflow_rust)
DEBIAN_PACKAGES=(python3 python-is-python3 ca-certificates gcc libc6-dev)
IMAGE_BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
IMAGE_RUST=$(dockerfile_arg RUST_VERSION)
IMAGE_RUST_COMPONENTS=(rustc rust-std cargo clippy-preview rustfmt-preview llvm-tools-preview)
IMAGE_SMOKE=(
  "sh -c 'rustc --version && cargo --version && cargo clippy --version && rustfmt --version && cargo fmt --version && rustc --print sysroot'"
  # The LLVM tools as mendflow_rust finds them (the sysroot's lib/rustlib/*/bin), for rustc's LLVM.
  "python -c 'import subprocess as s; from pathlib import Path; from mendflow_rust import coverage as c; v = s.run([\"rustc\", \"-vV\"], capture_output=True, text=True); m = c.llvm_major(v); r = Path(s.check_output([\"rustc\", \"--print\", \"sysroot\"], text=True).strip()); t = [c.find_tool(n, m, r, None) for n in (\"llvm-profdata\", \"llvm-cov\")]; print(t); assert \"LLVM version \" + m in s.check_output([t[1], \"--version\"], text=True)'"
  # A crate built, linted, formatted and covered offline (gcc links it), CARGO_HOME under /tmp.
  "sh -c 'export CARGO_HOME=/tmp/cargo CARGO_NET_OFFLINE=true && cd /tmp && cargo new -q --vcs none demo && cd demo && printf \"pub fn add(a: i32, b: i32) -> i32 { a + b }\\n#[test]\\nfn t() { assert_eq!(add(1, 2), 3); }\\n\" >src/lib.rs && cargo build -q && ./target/debug/demo && cargo clippy -q -- -D warnings && cargo fmt && cargo fmt --check && rm -rf target && RUSTFLAGS=-Cinstrument-coverage LLVM_PROFILE_FILE=/tmp/p-%p.profraw cargo test -q --lib >/dev/null && d=\$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin && \$d/llvm-profdata merge -sparse /tmp/p-*.profraw -o /tmp/m.profdata && \$d/llvm-cov report --instr-profile /tmp/m.profdata \$(ls target/debug/deps/demo-* | grep -v \"\\.d\$\" | head -n 1) | tail -n 1 && echo cargo ok'"
  "sh -c 'python -m mendflow_rust --help >/dev/null && python -c \"import mendflow_rust.build\" && echo runner ok'"
  "sh -c 'id && touch /workspace/w /cache/c /tmp/t && ! touch /opt/mendflow/x /opt/rust/x /x 2>/dev/null && echo read-only root ok'"
)
