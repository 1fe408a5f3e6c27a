#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Rust CI image (scripts/build-images.sh): what ./Dockerfile's COPY and RUN
# steps do, applied to the Debian root filesystem "$1" (gcc and libc6-dev are its packages).
# Environment (set by build-images.sh): MF_RUST (the toolchain's component tarballs, sha256-checked against the
# channel manifest), MF_UID (= JOB_UID), MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1
# shellcheck source=images/rootfs-lib.sh
source "$MF_REPO/images/rootfs-lib.sh"

# The toolchain as the Dockerfile has it: rustup's sysroot, copied whole to /opt/rust (bin/cargo, bin/rustc, ...,
# lib/rustlib/<target>/bin/llvm-cov), so `rustc --print sysroot` is /opt/rust. Each component is installed as
# rustup installs it: the files its manifest.in lists, then lib/rustlib/manifest-<component> (paths relative to
# the sysroot), components and rust-installer-version. (The tarballs' install.sh would record the absolute
# paths of this temporary root.) Root-owned, files 0644, commands 0755.
S=$R/opt/rust
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$S/lib/rustlib"
for t in $MF_RUST; do
  rm -rf "$tmp/c" && mkdir "$tmp/c"
  tar -C "$tmp/c" --no-same-owner --strip-components=1 -xJf "$t"
  [[ "$(<"$tmp/c/rust-installer-version")" == 3 ]] || { echo "rootfs-hook: $t: not rust-installer 3" >&2; exit 1; }
  while read -r c; do
    while IFS=: read -r kind path; do
      case "$kind" in
        file) install -D -m "$(if [[ -x "$tmp/c/$c/$path" ]]; then echo 0755; else echo 0644; fi)" \
          "$tmp/c/$c/$path" "$S/$path" ;;
        dir) mkdir -p "$S/$path" && cp -R "$tmp/c/$c/$path/." "$S/$path/" ;;
        *) echo "rootfs-hook: $t: $c: unknown manifest entry $kind:$path" >&2; exit 1 ;;
      esac
      echo "$kind:$path" >>"$S/lib/rustlib/manifest-$c"
    done <"$tmp/c/$c/manifest.in"
    echo "$c" >>"$S/lib/rustlib/components"
  done <"$tmp/c/components"
done
echo 3 >"$S/lib/rustlib/rust-installer-version"
# llvm-tools brings its own copy of rustc's libLLVM (200 MB): one file, hard-linked, where the two are identical.
for f in "$S"/lib/rustlib/*/lib/libLLVM*; do
  if [[ -f "$f" && ! -L "$f" && -f "$S/lib/${f##*/}" ]] && cmp -s "$f" "$S/lib/${f##*/}"; then
    ln -f "$S/lib/${f##*/}" "$f"
  fi
done
chown -R 0:0 "$S"
chmod -R u+w,go=rX "$S"
# The Dockerfile's check, and the LLVM tools that mendflow_rust finds in the sysroot (build.py, coverage.py).
# (Rust's llvm-tools component has no llvm-cxxfilt, which mendflow_rust also asks for: not here, as not in the
# Dockerfile's image.)
# shellcheck disable=SC2016 # expanded in the chroot
chroot "$R" env PATH=/opt/rust/bin:/usr/bin:/bin HOME=/nonexistent CARGO_HOME=/nonexistent sh -ec '
  rustc --version && cargo --version && cargo clippy --version && cargo fmt --version
  test "$(rustc --print sysroot)" = /opt/rust
  host=$(rustc -vV | sed -n "s/^host: //p") llvm=$(rustc -vV | sed -n "s/^LLVM version: //p")
  for t in llvm-profdata llvm-cov; do
    "/opt/rust/lib/rustlib/$host/bin/$t" --version | grep -q "LLVM version $llvm" || { echo "$t: not LLVM $llvm" >&2; exit 1; }
  done
  echo "llvm-tools: LLVM $llvm"' </dev/null | sed 's/^/hook: /'
chroot "$R" dpkg-query -W gcc libc6-dev python3 | sed 's/^/hook: installed /'

job_user "$R"

# The runner's shared core and the Rust runner (images/rootfs-lib.sh).
install_runner "$R" mendflow_rust.build ci-runner-python/mendflow_runner ci-runner-rust/mendflow_rust

# Fixed timestamps for what this hook added.
fix_times "$R" "$S"
