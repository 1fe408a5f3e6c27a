"""What one event does to the exported series (the table), and what the exporter refuses without dying."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from prefect.events import Event

from mendflow.events import resource_id
from mendflow.metrics import Exporter

GENERATED = {"spec_id": "s1", "testbuilder_new_tests": 2, "tb_llm_tokens": 700, "testbuilder_selfcheck_failures": 4}


def event(name: str, payload: dict[str, Any], repo: str = "acme/calc", ago_sec: float = 0) -> Event:
    occurred = datetime.now(UTC) - timedelta(seconds=ago_sec)
    return Event(event=name, resource={"prefect.resource.id": resource_id(repo)}, payload=payload, occurred=occurred)


def value(exporter: Exporter, name: str, **labels: str) -> float | None:
    return exporter.registry.get_sample_value(name, {"repo": "acme/calc", **labels})


def test_a_test_builder_event_feeds_tokens_and_selfcheck_series() -> None:
    exporter = Exporter()
    exporter.record(event("mendflow.testbuilder.failed", GENERATED))
    assert [
        value(exporter, "mendflow_llm_tokens_total", stage="testgen"),
        value(exporter, "mendflow_testbuilder_selfcheck_failures_total"),
        value(exporter, "mendflow_testbuilder_selfcheck_failures_last_run"),
        value(exporter, "mendflow_testbuilder_selfcheck_failures_per_run_bucket", le="3.0"),
        value(exporter, "mendflow_testbuilder_selfcheck_failures_per_run_bucket", le="4.0"),
    ] == [700, 4, 4, 0, 1]


def test_a_payload_that_does_not_fit_changes_nothing_and_is_counted() -> None:
    exporter = Exporter()
    exporter.record(event("mendflow.testbuilder.passed", {**GENERATED, "testbuilder_selfcheck_failures": "many"}))
    assert (value(exporter, "mendflow_llm_tokens_total", stage="testgen"), exporter.registry.get_sample_value(
        "mendflow_exporter_events_ignored_total", {"reason": "bad_payload"}
    )) == (None, 1)  # fmt: skip


def test_an_event_seen_twice_counts_once() -> None:
    exporter, again = Exporter(), event("mendflow.pipeline.merged", {"duration_sec": 5, "coverage_delta_pct": None})
    exporter.record(again)
    exporter.record(again)
    assert value(exporter, "mendflow_pipeline_runs_total", outcome="merged") == 1


def test_an_event_on_another_resource_is_left_out() -> None:
    exporter = Exporter()
    exporter.record(Event(event="mendflow.build.passed", resource={"prefect.resource.id": "git.repo.acme/calc"}))
    assert exporter.registry.get_sample_value("mendflow_exporter_events_ignored_total", {"reason": "not_a_repository"})


def test_a_caught_up_event_older_than_the_last_run_counts_but_leaves_its_gauge() -> None:
    exporter = Exporter()
    exporter.record(event("mendflow.testbuilder.passed", {**GENERATED, "testbuilder_selfcheck_failures": 1}))
    exporter.record(
        event("mendflow.testbuilder.passed", {**GENERATED, "testbuilder_selfcheck_failures": 4}, ago_sec=30)
    )
    assert (
        value(exporter, "mendflow_testbuilder_selfcheck_failures_total"),
        value(exporter, "mendflow_testbuilder_selfcheck_failures_last_run"),
    ) == (5, 1)
