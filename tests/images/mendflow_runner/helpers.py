"""Shared by the runner's tests: snapshot a real git repo and run the runner on it with real uv and ruff."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from mendflow.contracts import BuildReport
from tests.fixtures.repos import RepoFactory

RUNNER_DIR = Path(__file__).resolve().parents[3] / "images" / "ci-runner-python"
TOOLS_BIN = Path(sysconfig.get_path("scripts"))  # the project venv's uv and ruff

PYPROJECT = """\
[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["demo"]

[tool.pytest.ini_options]
markers = ["fast: quick tests"]
"""

DEMO_MODULE = """\
def add(a: int, b: int) -> int:
    return a + b


def sign(x: int) -> str:
    if x < 0:
        return "negative"
    return "non-negative"


class Box:
    def __init__(self, value: int) -> None:
        self.value = value

    def double(self) -> int:
        return self.value * 2
"""

PASSING_TEST = """\
import pytest

from demo import add, sign


@pytest.mark.fast
def test_add() -> None:
    assert add(1, 2) == 3


@pytest.mark.fast
def test_sign_positive() -> None:
    assert sign(3) == "non-negative"
"""


def demo_files(**overrides: str | None) -> dict[str, str | bytes | None]:
    files: dict[str, str | bytes | None] = {
        "pyproject.toml": PYPROJECT,
        "demo/__init__.py": DEMO_MODULE,
        "tests/test_demo.py": PASSING_TEST,
    }
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


def snapshot(repo: Path, dest: Path) -> Path:
    """The runner's input: ``git archive`` of HEAD, as the snapshot task makes it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "archive", "--format=tar.gz", "-o", str(dest), "HEAD"], cwd=repo, check=True)
    return dest


def runner_env(cache: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": f"{TOOLS_BIN}:/usr/bin:/bin",
        "HOME": str(cache.parent),
        "PYTHONPATH": str(RUNNER_DIR),
        "UV_CACHE_DIR": str(cache),
        "SSL_CERT_FILE": os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
        "MENDFLOW_JOB_REPO": "demo",
        "MENDFLOW_JOB_COMMIT": "0" * 40,
        "PYTHONDONTWRITEBYTECODE": "1",  # as every job has it: the images' ENV, the local launcher's
        **extra,
    }


def run_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow_runner", "--source", str(source), "--out", str(out), *args],
        env=runner_env(cache, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    report_path = out / "report.json"
    assert report_path.is_file(), f"no report.json; stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.returncode, json.loads(report_path.read_text())


def build(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path, **files: str | None) -> BuildReport:
    """The runner's report on the demo project with ``files`` changed (None removes one)."""
    repo = make_repo(demo_files(**files))
    rc, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache)
    assert rc == 0
    return BuildReport.model_validate(data)


def run_language_runner(package: str, source: Path, out: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """``python -m PACKAGE`` (a language's runner) on ``source``: it must exit 0 with a report, which is returned."""
    proc = subprocess.run(
        [sys.executable, "-m", package, "--source", str(source), "--out", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = out / "report.json"
    assert proc.returncode == 0 and report.is_file(), f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return dict(json.loads(report.read_text()))


def tree_files(root: Path, **overrides: str | None) -> dict[str, str | bytes | None]:
    """The files under ``root`` (keys are paths relative to it), some replaced (None removes one)."""
    files: dict[str, str | bytes | None] = {
        p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()
    }
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


def tree(root: Path, files: dict[str, str]) -> Path:
    """``files`` (paths relative to ``root``) written under ``root``, which is returned."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root
