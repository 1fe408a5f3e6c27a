"""``mendflow index`` / ``mendflow search`` run as a real subprocess against the embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(args: list[str], state_dir: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(state_dir), "MENDFLOW_INDEX__BACKEND": "embedded"}
    code = "from mendflow.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_index_prints_changes_and_the_indexed_commit(sample_repo: Path, state_dir: Path) -> None:
    result = run_cli(["index", str(sample_repo)], state_dir)
    assert result.returncode == 0, result.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=sample_repo, capture_output=True, text=True).stdout
    assert f"indexed commit {head.strip()}" in result.stdout
    assert "files" in result.stdout and "symbols" in result.stdout


def test_search_json_returns_hits(sample_repo: Path, state_dir: Path) -> None:
    assert run_cli(["index", str(sample_repo)], state_dir).returncode == 0
    result = run_cli(["search", "divide zero", "-k", "3", "--json"], state_dir)
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) <= 3 and hits[0]["symbol"] == "Calculator.divide" and hits[0]["path"] == "calc/core.py"


def test_bad_ref_is_a_one_line_error(sample_repo: Path, state_dir: Path) -> None:
    result = run_cli(["index", str(sample_repo), "--ref", "no-such-branch"], state_dir)
    assert result.returncode == 2
    assert "no-such-branch" in result.stderr and len(result.stderr.strip().splitlines()) == 1
