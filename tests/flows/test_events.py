"""Each stage transition of a pipeline run is exactly one event on the repository's resource."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import PipelineOutcome
from mendflow.events import resource_id
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import private_home
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


@dataclass
class Regression:
    """A run on a commit whose test fails, and the events it left on its repository."""

    commit_sha: str
    events: list[dict[str, object]]


@pytest.fixture(scope="module")
def regression(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Regression:
    """Module-scoped: the run serves each test of what a regression's events say."""
    repo_id, since = f"events/red-{uuid.uuid4().hex[:8]}", datetime.now(UTC) - timedelta(seconds=5)
    with private_home(tmp_path_factory.mktemp("regression")) as make_repo:
        repo = make_repo(FAILING, "red")
        state = self_healing_pipeline(repo=str(repo), branch="main", repo_id=repo_id, return_state=True)
    sha = state.result(raise_on_failure=False).commit_sha
    return Regression(sha, events_of(prefect_server, repo_id, since, expected=5))


def test_a_regression_emits_build_verifier_and_pipeline_events_once(regression: Regression) -> None:
    assert Counter(str(e["event"]) for e in regression.events) == Counter(
        {
            "mendflow.build.failed": 2,  # B1, and the heal's flaky check re-running the failed test
            "mendflow.verifier.regression": 1,
            "mendflow.heal.not_healed": 1,  # an assertion no change explains: reported, not healed
            "mendflow.pipeline.regression": 1,
        }
    )


def test_events_name_the_commit_as_a_related_resource(regression: Regression) -> None:
    commit = {"prefect.resource.id": f"mendflow.commit.{regression.commit_sha}", "prefect.resource.role": "commit"}
    for event in regression.events:
        assert any(commit.items() <= r.items() for r in event["related"])  # type: ignore[attr-defined]
