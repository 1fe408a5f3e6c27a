"""A deployed flow run on a Prefect server, started and followed from a CI job: ``mendflow run --deployment``.

The job holds no mendflow credentials: it only talks to the Prefect API (``PREFECT_API_URL``, plus
``PREFECT_API_AUTH_STRING`` where the server uses basic auth). The flow runs on mendflow's worker.
"""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey
from prefect.client.schemas.objects import FlowRun, State
from prefect.exceptions import ObjectNotFound
from prefect.settings import get_current_settings

from mendflow.errors import InputError, RunNotFinishedError


def api_url() -> str:
    url = get_current_settings().api.url
    if not url:
        raise InputError(
            "PREFECT_API_URL is not set", hint="point it at the Prefect server the deployment was deployed to"
        )
    return url


def run_page(flow_run_id: UUID) -> str:
    settings = get_current_settings()
    root = settings.ui_url or api_url().rstrip("/").removesuffix("/api")
    return f"{root.rstrip('/')}/runs/flow-run/{flow_run_id}"


def start(deployment: str, parameters: dict[str, Any]) -> FlowRun:
    """Create a flow run of ``deployment`` ('<flow>/<deployment>'); the worker picks it up."""
    url = api_url()
    with get_client(sync_client=True) as client:
        try:
            found = client.read_deployment_by_name(deployment)
        except ObjectNotFound:
            raise InputError(
                f"no deployment {deployment!r} on {url}",
                hint="the name is '<flow>/<deployment>'; `prefect deployment ls` lists them",
            ) from None
        return client.create_flow_run_from_deployment(found.id, parameters=parameters)


def wait(flow_run: FlowRun, timeout: float | None, poll_seconds: float = 2.0) -> State:
    """Poll the run until its state is final; past ``timeout`` seconds raise (the run itself goes on)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while True:
            state = client.read_flow_run(flow_run.id).state
            if state is not None and state.is_final():
                return state
            if deadline is not None and time.monotonic() >= deadline:
                current = state.name if state else "not started"
                raise RunNotFinishedError(
                    f"flow run {flow_run.name} is still {current} after {timeout:.0f} s",
                    hint=f"it goes on; follow it at {run_page(flow_run.id)}",
                )
            time.sleep(poll_seconds)


def artifact_markdown(flow_run_id: UUID, key: str) -> str | None:
    """The markdown of the run's artifact ``key``, if the run published one."""
    this_run = ArtifactFilter(
        key=ArtifactFilterKey(any_=[key]), flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])
    )
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=this_run, limit=1)
    return str(found[0].data) if found else None
