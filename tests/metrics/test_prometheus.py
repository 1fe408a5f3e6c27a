"""A real Prometheus scrapes `mendflow metrics` while real mendflow events reach the real Prefect server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.fixtures.prefect import PrefectServer
from tests.metrics.helpers import alerts, emit_events, exporter, poll, prometheus, query

pytestmark = pytest.mark.slow

BUILD = {"stage": "B1", "attempt": 1, "url": "file:///x", "ci_build_duration": 12.5, "ci_tests_passed_total": 3,
         "ci_coverage_line_pct": 80.0, "ci_fail_reason": None}  # fmt: skip
PLANNED = {"spec_id": "s1", "testplanner_cases_total": 2, "tp_latency_ms": 1500, "tp_llm_tokens": 300,
           "planner": "llm", "targets": 1}  # fmt: skip
GENERATED = {"spec_id": "s1", "testbuilder_new_tests": 2, "tb_llm_tokens": 700, "tb_dropped": 0,
             "testbuilder_selfcheck_failures": 1, "generator": "llm", "branch": "b", "commit_sha": "c"}  # fmt: skip
FINISHED = {"outcome": "merged", "coverage_delta_pct": 4.5, "duration_sec": 42.0}


@pytest.fixture(scope="module")
def scraped(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Prometheus's URL; it scrapes an exporter that follows the session's Prefect server."""
    workdir = tmp_path_factory.mktemp("prometheus")
    with (
        exporter(prefect_server.api_url, workdir / "exporter.log") as metrics_url,
        prometheus(str(urlsplit(metrics_url).netloc), workdir) as url,
    ):
        yield url


def values(prometheus_url: str, promql: str) -> dict[str, float]:
    """``promql``'s samples keyed by their stage/outcome label (or "" when there is none)."""
    found = query(prometheus_url, promql)
    return {r["metric"].get("stage", r["metric"].get("outcome", "")): float(r["value"][1]) for r in found}


def test_each_event_kind_arrives_as_its_series(prefect_server: PrefectServer, scraped: str) -> None:
    repo = f"metrics/calc-{uuid.uuid4().hex[:8]}"
    emit_events(
        prefect_server.api_url,
        (repo, "build", "passed", BUILD),
        (repo, "testplanner", "planned", PLANNED),
        (repo, "testbuilder", "passed", GENERATED),
        (repo, "build", "passed", {**BUILD, "stage": "B2", "ci_build_duration": 20.0}),
        (repo, "pipeline", "merged", FINISHED),
    )
    selector = f'{{repo="{repo}"}}'
    poll(lambda: values(scraped, f"mendflow_stage_duration_seconds_count{selector}").get("pipeline"), what="series")
    assert values(scraped, f"mendflow_stage_duration_seconds_sum{selector}") == {
        "B1": 12.5, "B2": 20.0, "plan": 1.5, "pipeline": 42.0,
    }  # fmt: skip
    assert values(scraped, f"mendflow_builds_total{selector}") == {"passed": 2, "failed": 0, "errored": 0}
    assert values(scraped, f"mendflow_llm_tokens_total{selector}") == {"plan": 300, "testgen": 700}
    assert values(scraped, f"mendflow_testbuilder_selfcheck_failures_total{selector}") == {"": 1}
    assert values(scraped, f"mendflow_coverage_delta_points_last_run{selector}") == {"": 4.5}


def test_too_many_selfcheck_failures_fire_the_alert(prefect_server: PrefectServer, scraped: str) -> None:
    repo = f"metrics/loop-{uuid.uuid4().hex[:8]}"
    looping = {**GENERATED, "testbuilder_selfcheck_failures": 4}
    emit_events(prefect_server.api_url, (repo, "testbuilder", "failed", looping))
    firing = poll(
        lambda: [
            a for a in alerts(scraped)
            if a["labels"]["alertname"] == "MendflowSelfcheckFailures" and a["labels"]["repo"] == repo
            and a["state"] == "firing"
        ],
        what="firing MendflowSelfcheckFailures",
    )  # fmt: skip
    assert firing[0]["labels"]["mendflow_alert"] == "selfcheck_failures"


def test_a_new_repositorys_failed_builds_raise_the_failure_rate_alert(
    prefect_server: PrefectServer, scraped: str
) -> None:
    """The first event creates the repo's failed/errored series at 0, so increase() sees the failures after it."""
    repo = f"metrics/red-{uuid.uuid4().hex[:8]}"
    emit_events(prefect_server.api_url, (repo, "build", "passed", BUILD))
    poll(lambda: query(scraped, f'mendflow_builds_total{{repo="{repo}", outcome="failed"}} == 0'), what="zero series")
    emit_events(prefect_server.api_url, *[(repo, "build", "failed", {**BUILD, "ci_fail_reason": "tests"})] * 2)
    active = poll(
        lambda: [
            a for a in alerts(scraped)
            if a["labels"]["alertname"] == "MendflowBuildFailureRate" and a["labels"]["repo"] == repo
        ],
        what="active MendflowBuildFailureRate",
    )  # fmt: skip
    assert active[0]["state"] == "pending"  # held 10 minutes before it fires (promtool's unit test covers that)
