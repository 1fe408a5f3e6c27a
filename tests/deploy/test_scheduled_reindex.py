"""The scheduled re-index on a real Prefect server: the schedule creates a run, and the run completes.

The server is this test's own, with the scheduler's loop at one second (the default minute would only slow it);
the flow is served as Prefect's runner serves a deployment, on an interval schedule.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    DeploymentFilter,
    DeploymentFilterName,
)
from prefect.client.schemas.objects import FlowRun
from prefect.settings import PREFECT_API_URL, temporary_settings

from mendflow.index.served import remember
from mendflow.settings import Settings
from mendflow.store import open_store
from tests.fixtures.prefect import start_server, stop
from tests.fixtures.repos import RepoFactory, local_source

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SERVE = (
    "from datetime import timedelta\nfrom flows.reindex import reindex_repo\n"
    "reindex_repo.serve(name='every-5s', interval=timedelta(seconds=5))\n"
)


def completed_scheduled_run(deadline: float) -> FlowRun | None:
    only_ours = DeploymentFilter(name=DeploymentFilterName(any_=["every-5s"]))
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            runs = client.read_flow_runs(deployment_filter=only_ours)
            done = [r for r in runs if r.state is not None and r.state.is_completed()]
            if done:
                return done[0]
            time.sleep(1)
    return None


def test_the_schedule_creates_a_reindex_run_that_completes(tmp_path: Path, make_repo: RepoFactory) -> None:
    repo = make_repo({"pkg/__init__.py": "def answer() -> int:\n    return 42\n"}, name="served")
    settings = Settings(_env_file=None, state_dir=tmp_path / "state")  # type: ignore[call-arg]
    remember(open_store(settings.resolved_store_url(), settings), local_source(repo))
    (tmp_path / "prefect").mkdir()
    server, env = start_server(tmp_path / "prefect", PREFECT_API_SERVICES_SCHEDULER_LOOP_SECONDS="1")
    job_env = {**os.environ, **env, "MENDFLOW_STATE_DIR": str(settings.state_dir), "PREFECT_RUNNER_POLL_FREQUENCY": "1"}
    served = subprocess.Popen([sys.executable, "-c", SERVE], env=job_env, cwd=ROOT, start_new_session=True)
    try:
        with temporary_settings(updates={PREFECT_API_URL: env["PREFECT_API_URL"]}):
            run = completed_scheduled_run(time.monotonic() + 150)
            assert run is not None, "no scheduled run completed in 150 s"
            with get_client(sync_client=True) as client:
                artifacts = client.read_artifacts(
                    artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id]))
                )
        assert run.auto_scheduled
        assert any(a.key and "served" in a.key for a in artifacts)  # the served repository was indexed
    finally:
        stop(served)
        stop(server)
