"""A flow run cancelled from Prefect while its stage runs as a pod on the real node.

The flow is served the way Prefect's runner serves a deployment; the cancel is what a user does in the UI or with
`prefect flow-run cancel`: the run goes Cancelling, the runner terminates the flow's process, and the stage's Job and
pod must go with it while the run ends Cancelled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.exceptions import ObjectNotFound

from mendflow.settings import Settings
from tests.deploy.conftest import poll
from tests.fixtures.kube_node import RealNode
from tests.fixtures.prefect import stop
from tests.fixtures.repos import SLOW_PROJECT, RepoFactory
from tests.real_node.conftest import PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENT = "ci-build/real-node-cancel"
SERVE = "from flows.ci import ci_build\nci_build.serve(name='real-node-cancel')\n"


@pytest.fixture
def served(node_env: Settings, tmp_path: Path) -> Iterator[UUID]:
    """ci_build served by Prefect's runner with the node's settings (inherited from this process's environment)."""
    env = {**os.environ, "PREFECT_RUNNER_POLL_FREQUENCY": "1", "MENDFLOW_STATE_DIR": str(tmp_path / "state")}
    log = tmp_path / "runner.log"
    with log.open("wb") as out:
        runner = subprocess.Popen(
            [sys.executable, "-c", SERVE],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield deployment_id(runner, log)
    finally:
        stop(runner)


def deployment_id(runner: subprocess.Popen[bytes], log: Path) -> UUID:
    def served() -> UUID | None:
        if runner.poll() is not None:
            raise AssertionError(f"the runner exited serving {DEPLOYMENT}:\n{log.read_text()[-3000:]}")
        with get_client(sync_client=True) as client:
            try:
                return client.read_deployment_by_name(DEPLOYMENT).id
            except ObjectNotFound:  # until the runner has registered it
                return None

    return poll(f"{DEPLOYMENT} to be served", served, timeout=60, every=0.5)


def cancelled(run_id: UUID) -> bool | None:
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(run_id).state
    return True if state is not None and state.type is StateType.CANCELLED else None


def test_a_flow_run_cancelled_mid_stage_deletes_its_job_and_ends_cancelled(
    real_node: RealNode, node_namespace: str, pod_log: PodLog, served: UUID, make_repo: RepoFactory
) -> None:
    repo = make_repo(SLOW_PROJECT, name="slow")
    with get_client(sync_client=True) as client:
        run = client.create_flow_run_from_deployment(served, parameters={"repo": str(repo), "stage": "B1"})
    pod_log.running_pod(timeout=180)  # the runner's poll, the flow's start and B1's dependency phase

    cancelled_at = time.monotonic()
    cancel = subprocess.run(
        [sys.executable, "-m", "prefect", "flow-run", "cancel", str(run.id)], capture_output=True, text=True, timeout=60
    )
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr

    poll("the run to be Cancelled", lambda: cancelled(run.id), timeout=90, every=0.5)
    assert wait_gone(real_node, node_namespace) == []
    took = time.monotonic() - cancelled_at
    assert took < 90  # the pod stopped: it was not left to sleep out its 300 s
    sys.stderr.write(f"\ncancel -> run Cancelled, Job and pod gone: {took:.1f}s\n")
