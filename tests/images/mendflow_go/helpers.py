"""Shared by the Go runner's tests: the Go example as a real git repo, run through ``python -m mendflow_go`` with
the real toolchain."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from tests.fixtures.cache import build_cache
from tests.images.mendflow_runner.helpers import RUNNER_DIR, run_language_runner, runner_env

GO_RUNNER_DIR = RUNNER_DIR.parent / "ci-runner-go"
EXAMPLE = RUNNER_DIR.parents[1] / "examples" / "go-ratelimit"


def example_files(**overrides: str | None) -> dict[str, str | bytes | None]:
    """The Go example's files, some replaced (None removes one)."""
    files: dict[str, str | bytes | None] = {p.name: p.read_text() for p in sorted(EXAMPLE.iterdir()) if p.is_file()}
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


def golangci_lint() -> str | None:
    built = build_cache() / "bin"  # scripts/build-go-tools.sh
    return shutil.which("golangci-lint") or shutil.which("golangci-lint", path=str(built))


def go_env(cache: Path, golangci: bool = True, **extra: str) -> dict[str, str]:
    """The Go image's environment: its toolchain on PATH (golangci-lint too, unless ``golangci`` is False)."""
    go_bin = Path(shutil.which("go") or "/usr/local/go/bin/go").resolve().parent
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    linter = golangci_lint() if golangci else None
    env["PATH"] = ":".join([str(go_bin), *([str(Path(linter).parent)] if linter else []), env["PATH"]])
    env["PYTHONPATH"] = f"{RUNNER_DIR}:{GO_RUNNER_DIR}"
    env["HOME"] = extra.get("HOME", str(cache / "home"))
    if proxy := os.environ.get("GOPROXY"):
        env.setdefault("GOPROXY", proxy)
    return env


def run_go_runner(
    source: Path, out: Path, cache: Path, *args: str, golangci: bool = True, **env: str
) -> dict[str, Any]:
    return run_language_runner("mendflow_go", source, out, go_env(cache, golangci, **env), *args)
