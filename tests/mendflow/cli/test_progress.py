"""``mendflow build`` and ``mendflow run`` show each stage on stderr while stdout keeps the --json shape.

stderr is a pipe here, as in a CI log: the display is one plain line per phase or stage (on a terminal it is a
rich bar: tests/mendflow/test_progress.py draws one on a pty).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from mendflow.contracts import BuildReport, PipelineResult
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import EXAMPLE, commit_files
from tests.flows.sample_repos import PASSING

pytestmark = pytest.mark.slow


def mendflow(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    # No mendflow setting of this process but the suite's short Pynguin search (tests/conftest.py).
    own = ("MENDFLOW_", "BUILD_TIMEOUT")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own) or k.startswith("MENDFLOW_PYNGUIN__")}
    env |= {"MENDFLOW_STATE_DIR": str(state), "MENDFLOW_RETRY_DELAYS_SEC": "[0]", "MENDFLOW_LLM__BASE_URL": ""}
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", *args], capture_output=True, text=True, env=env, timeout=900, check=False
    )


@pytest.fixture(scope="module")
def built(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One real build of a one-test repository, with --json."""
    repo = tmp_path_factory.mktemp("build") / "shapes"
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, PASSING, "initial")
    result = mendflow("build", str(repo), "--json", state=repo.parent / "state")
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_build_shows_each_phase_and_the_tests_count(built: subprocess.CompletedProcess[str]) -> None:
    assert built.stderr.splitlines() == [
        "build: dependencies (2/5)",
        "build: lint (3/5)",
        "build: tests (4/5)",
        "build: tests 1/1 done",
        "build: coverage (5/5)",
    ]


def test_build_json_is_the_report_and_nothing_else(built: subprocess.CompletedProcess[str]) -> None:
    report = BuildReport.model_validate_json(built.stdout)
    assert built.stdout == report.model_dump_json(indent=2) + "\n"


def test_run_shows_b1_planning_generation_per_module_b2_and_merge(
    prefect_server: PrefectServer, tmp_path: Path
) -> None:
    repo = tmp_path / "calc"
    shutil.copytree(EXAMPLE, repo)
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, {}, "calc: initial import")

    result = mendflow("run", str(repo), "--branch", "main", "--json", state=tmp_path / "state")

    assert result.returncode == 0, result.stderr[-3000:]
    shown = result.stderr.splitlines()
    milestones = ["B1: tests (4/5)", "plan (25%)", "B2: dependencies (2/5)", "merge (95%)", "done (100%)"]
    assert [shown.index(line) for line in milestones] == sorted(shown.index(line) for line in milestones)
    counts = [
        m.groups() for line in shown if (m := re.fullmatch(r"tests: generate (\d+)/(\d+) modules \(\d+%\)", line))
    ]
    assert len(counts) > 1 and counts[-1][0] == counts[-1][1]  # one line per module, up to all of them
    assert result.stdout == PipelineResult.model_validate_json(result.stdout).model_dump_json(indent=2) + "\n"
