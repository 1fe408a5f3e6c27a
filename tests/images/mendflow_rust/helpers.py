"""Shared by the Rust runner's tests: crates as real git repos, run through ``python -m mendflow_rust`` with the
real toolchain (its sysroot's cargo, rustc, clippy and rustfmt, as the local launcher hands them to jobs) and
LLVM's coverage tools."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.images.mendflow_runner.helpers import RUNNER_DIR, runner_env

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
    """The Rust example's files (keys are paths), some replaced (None removes one)."""
    files: dict[str, str | bytes | None] = {
        p.relative_to(EXAMPLE).as_posix(): p.read_text() for p in sorted(EXAMPLE.rglob("*")) if p.is_file()
    }
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


def sysroot_bin() -> Path | None:
    if shutil.which("rustc") is None:
        return None
    printed = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout
    return Path(printed.strip()) / "bin"


def rust_env(cache: Path, **extra: str) -> dict[str, str]:
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    env["PATH"] = ":".join([str(sysroot_bin()), env["PATH"]])
    env["PYTHONPATH"] = f"{RUNNER_DIR}:{RUST_RUNNER_DIR}"
    env["HOME"] = str(cache / "home")
    return env


def run_rust_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow_rust", "--source", str(source), "--out", str(out), *args],
        env=rust_env(cache, **env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = out / "report.json"
    assert proc.returncode == 0 and report.is_file(), f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return dict(json.loads(report.read_text()))
