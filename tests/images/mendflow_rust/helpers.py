"""Shared by the Rust runner's tests: crates as real git repos, run through ``python -m mendflow_rust`` with the
real toolchain (its sysroot's cargo, rustc, clippy and rustfmt, as the local launcher hands them to jobs) and
LLVM's coverage tools."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.images.mendflow_runner.helpers import RUNNER_DIR, run_language_runner, runner_env, tree_files

RUST_RUNNER_DIR = RUNNER_DIR.parent / "ci-runner-rust"
EXAMPLE = RUNNER_DIR.parents[1] / "examples" / "rust-duration"


# A crate with one dependency from crates.io.
ITOA_LIB = """\
pub fn label(n: u64) -> String {
    let mut buffer = itoa::Buffer::new();
    format!("#{}", buffer.format(n))
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels() {
        assert_eq!(super::label(42), "#42");
    }
}
"""
ITOA_MANIFEST = '[package]\nname = "labels"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nitoa = "=1.0.11"\n'


def example_files(**overrides: str | None) -> dict[str, str | bytes | None]:
    return tree_files(EXAMPLE, **overrides)


def sysroot_bin() -> Path | None:
    if shutil.which("rustc") is None:
        return None
    printed = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout
    return Path(printed.strip()) / "bin"


def rust_env(cache: Path, **extra: str) -> dict[str, str]:
    """The Rust image's environment: the toolchain's sysroot first on PATH (unless ``PATH`` is given)."""
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    if "PATH" not in extra:
        env["PATH"] = ":".join([str(sysroot_bin()), env["PATH"]])
    env["PYTHONPATH"] = f"{RUNNER_DIR}:{RUST_RUNNER_DIR}"
    env["HOME"] = str(cache / "home")
    return env


def run_rust_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> dict[str, Any]:
    return run_language_runner("mendflow_rust", source, out, rust_env(cache, **env), *args)
