"""A process worker on "another machine" runs a deployment: nothing of the deploying checkout is left.

`prefect deploy` runs in a clone of mendflow whose `origin` is a bare repository (the default code source, no
MENDFLOW_CODE_* set); that clone is then deleted, and the worker starts in an unrelated directory. The run
can only find its flow by the deployment's `git_clone` pull step (the old `set_working_directory` to the
deploying checkout would point at a directory that no longer exists).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
from prefect.client.schemas.objects import FlowRun, StateType

from tests.deploy.conftest import (
    SourceRepo,
    _start,
    code_snapshot,
    create_pools,
    git,
    poll,
    prefect_cli,
)
from tests.fixtures.prefect import PrefectServer, stop

pytestmark = pytest.mark.slow

FINAL = {StateType.COMPLETED, StateType.FAILED, StateType.CRASHED, StateType.CANCELLED}
DEPLOYMENT = "ci-build/default"


@dataclass
class Elsewhere:
    remote: Path  # the bare repository workers clone
    worker_dir: Path
    worker_log: Path


@pytest.fixture(scope="module")
def elsewhere(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Elsewhere]:
    root = tmp_path_factory.mktemp("any-worker")
    remote = root / "mendflow.git"
    git(root, "clone", "-q", "--bare", str(code_snapshot(root / "snapshot")), str(remote))
    checkout = root / "deploying-checkout"
    git(root, "clone", "-q", str(remote), str(checkout))
    create_pools(prefect_server)
    unset = {"MENDFLOW_CODE_REPO", "MENDFLOW_CODE_BRANCH"} & set(os.environ)
    assert not unset, f"{unset} set in the environment: this test is about the default (origin) source"
    prefect_cli(prefect_server, "deploy", "--name", DEPLOYMENT, cwd=checkout)
    shutil.rmtree(checkout)
    shutil.rmtree(root / "snapshot")

    worker_dir = root / "worker"
    worker_dir.mkdir()
    env = {**os.environ, **prefect_server.env, "MENDFLOW_STATE_DIR": str(worker_dir / "state")}
    env["PREFECT_WORKER_QUERY_SECONDS"] = "2"
    env["PREFECT_LOGGING_LEVEL"] = "INFO"  # the pull steps log at INFO; the server fixture's default hides them
    log = worker_dir / "worker.log"
    cmd = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "mendflow-process", "--type", "process"]
    proc = _start(cmd, env, log, cwd=worker_dir)
    yield Elsewhere(remote, worker_dir, log)
    stop(proc)


@pytest.fixture(scope="module")
def finished_run(elsewhere: Elsewhere, source_repo: SourceRepo) -> FlowRun:
    sha = source_repo.commit("run by a worker elsewhere")
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name(DEPLOYMENT)
        run = client.create_flow_run_from_deployment(
            deployment.id, parameters={"repo": str(source_repo.path), "commit": sha, "branch": "main"}
        )

    def finished() -> FlowRun | None:
        with get_client(sync_client=True) as client:
            current = client.read_flow_run(run.id)
        return current if current.state and current.state.type in FINAL else None

    try:
        return poll(f"flow run {run.name} to finish", finished, timeout=600, every=2)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nworker log:\n{elsewhere.worker_log.read_text()[-4000:]}") from None


def test_a_worker_in_another_directory_completes_the_run(finished_run: FlowRun, elsewhere: Elsewhere) -> None:
    assert finished_run.state is not None
    assert finished_run.state.type is StateType.COMPLETED, elsewhere.worker_log.read_text()[-4000:]


def test_the_run_got_its_code_by_cloning_the_remote(finished_run: FlowRun) -> None:
    def clone_logged() -> bool | None:  # the run's logs are shipped in batches, possibly after its final state
        with get_client(sync_client=True) as client:
            logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[finished_run.id])))
        return True if any(log.message == "Executing deployment step: git_clone" for log in logs) else None

    assert poll("the run's log of its git_clone pull step", clone_logged, timeout=30)
