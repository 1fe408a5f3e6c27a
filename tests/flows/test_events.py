"""Each stage transition of a pipeline run is exactly one event on the repository's resource."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import PipelineOutcome
from mendflow.events import resource_id
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import RepoFactory
from tests.flows.sample_repos import FAILING

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mendflow_env")]


def events_of(server: PrefectServer, repo_id: str, since: datetime, expected: int) -> list[dict[str, object]]:
    """The server's events on the repository, once ``expected`` arrived (and nothing more within 2 s)."""
    body = {"filter": {"resource": {"id": [resource_id(repo_id)]}, "occurred": {"since": since.isoformat()}}}
    found: list[dict[str, object]] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = httpx.post(f"{server.api_url}/events/filter", json={**body, "limit": 50}).json()["events"]
        if len(found) >= expected:
            time.sleep(2)  # a duplicate would arrive with its twin
            return list(httpx.post(f"{server.api_url}/events/filter", json={**body, "limit": 50}).json()["events"])
        time.sleep(0.5)
    return found


def test_a_merged_run_emits_one_event_per_transition(prefect_server: PrefectServer, calc_repo: Path) -> None:
    repo_id, since = f"events/calc-{uuid.uuid4().hex[:8]}", datetime.now(UTC) - timedelta(seconds=5)
    result = self_healing_pipeline(repo=str(calc_repo), branch="main", repo_id=repo_id)
    assert result.outcome is PipelineOutcome.MERGED
    names = Counter(str(e["event"]) for e in events_of(prefect_server, repo_id, since, expected=6))
    assert names == Counter(
        {
            "mendflow.build.passed": 2,  # B1 and B2
            "mendflow.testplanner.planned": 1,
            "mendflow.testbuilder.passed": 1,
            "mendflow.merge.merged": 1,
            "mendflow.pipeline.merged": 1,
        }
    )


def test_a_regression_emits_build_verifier_and_pipeline_events_once(
    prefect_server: PrefectServer, make_repo: RepoFactory
) -> None:
    repo_id, since = f"events/red-{uuid.uuid4().hex[:8]}", datetime.now(UTC) - timedelta(seconds=5)
    self_healing_pipeline(repo=str(make_repo(FAILING, name="red")), branch="main", repo_id=repo_id, return_state=True)
    found = events_of(prefect_server, repo_id, since, expected=5)
    assert Counter(str(e["event"]) for e in found) == Counter(
        {
            "mendflow.build.failed": 2,  # B1, and the heal's flaky check re-running the failed test
            "mendflow.verifier.regression": 1,
            "mendflow.heal.not_healed": 1,  # an assertion no change explains: reported, not healed
            "mendflow.pipeline.regression": 1,
        }
    )


def test_events_name_the_commit_as_a_related_resource(prefect_server: PrefectServer, make_repo: RepoFactory) -> None:
    repo_id, since = f"events/rel-{uuid.uuid4().hex[:8]}", datetime.now(UTC) - timedelta(seconds=5)
    state = self_healing_pipeline(
        repo=str(make_repo(FAILING, name="rel")), branch="main", repo_id=repo_id, return_state=True
    )
    sha = state.result(raise_on_failure=False).commit_sha
    related = [r for e in events_of(prefect_server, repo_id, since, expected=3) for r in e["related"]]  # type: ignore[attr-defined]
    assert {"prefect.resource.id": f"mendflow.commit.{sha}", "prefect.resource.role": "commit"}.items() <= related[
        0
    ].items()
