"""`mendflow run --deployment … --wait` as a CI job runs it: a real server, `prefect deploy`, a process worker.

The exit code is the gate: 0 when the run completes, 1 for a regression, 5 when the run did not finish in time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from tests.deploy.conftest import TARGET, Deployed, SourceRepo, run_for_commit
from tests.fixtures.prefect import PrefectServer
from tests.flows.sample_repos import FAILING

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("worker")]


def mendflow(server: PrefectServer, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "run", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **server.env, **env},
        timeout=900,
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The error line (after the line naming the run, when one was created)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.stderr.rstrip().endswith(errors[0]), result.stderr
    return errors[0]


def test_a_completed_run_exits_0_and_prints_its_result(prefect_server: PrefectServer, source_repo: SourceRepo) -> None:
    sha = source_repo.commit("gated from CI")
    args = [str(source_repo.path), "--commit", sha, "--branch", "main", "--deployment", TARGET, "--wait"]
    result = mendflow(prefect_server, *args, "--timeout", "600")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "/runs/flow-run/" in result.stderr  # where to look in the UI
    assert sha[:12] in result.stdout  # the run's pipeline-result artifact


def test_a_regression_exits_1_and_the_run_is_failed(
    prefect_server: PrefectServer, deployed: Deployed, make_repo: Callable[..., Path]
) -> None:
    red = make_repo(FAILING, name="red")
    sha = str(pygit2.Repository(str(red)).head.target)
    result = mendflow(prefect_server, str(red), "--commit", sha, "--branch", "main", "--deployment", TARGET, "--wait")
    assert result.returncode == 1, result.stderr[-3000:]
    run = run_for_commit(deployed.target_id, sha)
    assert run is not None and run.state is not None
    assert run.state.is_failed() and run.state.name == "Regression"


def test_a_run_past_the_timeout_exits_5_and_goes_on(prefect_server: PrefectServer, source_repo: SourceRepo) -> None:
    sha = source_repo.commit("too slow to wait for")
    args = [str(source_repo.path), "--commit", sha, "--deployment", TARGET, "--wait", "--timeout", "0"]
    result = mendflow(prefect_server, *args)
    assert result.returncode == 5
    assert "still" in one_line_error(result) and "/runs/flow-run/" in result.stderr


def test_without_wait_it_returns_once_the_run_is_created(
    prefect_server: PrefectServer, deployed: Deployed, source_repo: SourceRepo
) -> None:
    sha = source_repo.commit("fire and forget")
    result = mendflow(prefect_server, str(source_repo.path), "--commit", sha, "--deployment", TARGET)
    assert result.returncode == 0, result.stderr[-3000:]
    assert run_for_commit(deployed.target_id, sha) is not None


def test_an_unknown_deployment_is_a_one_line_error(prefect_server: PrefectServer, source_repo: SourceRepo) -> None:
    result = mendflow(prefect_server, str(source_repo.path), "--deployment", "nope/default", "--wait")
    assert result.returncode == 2
    assert "nope/default" in one_line_error(result)


def test_without_a_prefect_server_it_says_which_setting_is_missing(
    prefect_server: PrefectServer, source_repo: SourceRepo
) -> None:
    result = mendflow(prefect_server, str(source_repo.path), "--deployment", TARGET, PREFECT_API_URL="")
    assert result.returncode == 2
    assert "PREFECT_API_URL" in one_line_error(result)


def test_wait_without_a_deployment_is_refused(prefect_server: PrefectServer, source_repo: SourceRepo) -> None:
    result = mendflow(prefect_server, str(source_repo.path), "--wait")
    assert result.returncode == 2
    assert "--deployment" in one_line_error(result)
