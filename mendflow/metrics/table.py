"""Which mendflow event feeds which metric: ``METRICS`` names the series, ``ROWS`` maps events onto them.

The verb follows the metric's type: a Counter is increased by the row's value, a Histogram observes it, a Gauge
is set to it. Every series carries ``repo`` (``owner/name``, from the event's resource); the payload fields
are the ones ``mendflow/events.py`` lists. Anything that does not fit is refused whole (``BadPayloadError``):
an event updates all of its rows or none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from mendflow import alerts
from mendflow.contracts import BuildStatus, PipelineOutcome
from mendflow.errors import ContractError

Payload = Mapping[str, Any]
Value = Callable[[Payload], float | None]  # None: nothing to record (e.g. a run without B2 has no delta)
Labels = Callable[[str, Payload], dict[str, str]]
Metric = Counter | Gauge | Histogram

BUILD_OUTCOMES = tuple(s.value.lower() for s in BuildStatus)
PIPELINE_OUTCOMES = tuple(o.value for o in PipelineOutcome)
BUILD_STAGES = ("B1", "B2", "build")


class BadPayloadError(ContractError):
    """An event whose payload lacks a field its rows read, or carries something that is not a number."""


@dataclass(frozen=True)
class Spec:
    kind: type[Metric]
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()
    # Label values created at zero when a repository is first seen: Prometheus's increase() cannot see the
    # first step of a series that is born non-zero, so the failure rate would miss a new repo's first failure.
    zeros: tuple[Mapping[str, str], ...] = field(default=())


DURATION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)

METRICS: dict[str, Spec] = {
    "mendflow_events_total": Spec(Counter, "mendflow events received, by name.", ("event",)),
    "mendflow_stage_duration_seconds": Spec(
        Histogram, "Duration of a stage (B1, B2, build, plan) or a whole pipeline run.", ("stage",),
        buckets=DURATION_BUCKETS,
    ),
    alerts.BUILDS_TOTAL: Spec(
        Counter, "Builds by outcome; failure rate = failed+errored over all.", ("outcome",),
        zeros=tuple({"outcome": o} for o in BUILD_OUTCOMES),
    ),
    "mendflow_pipeline_runs_total": Spec(
        Counter, "Pipeline runs by outcome.", ("outcome",), zeros=tuple({"outcome": o} for o in PIPELINE_OUTCOMES)
    ),
    "mendflow_testbuilder_selfcheck_failures_total": Spec(Counter, "Self-check (repair) rounds of the test builder."),
    "mendflow_testbuilder_selfcheck_failures_per_run": Spec(
        Histogram, "Self-check failures in one test-generation run.", buckets=(0, 1, 2, 3, 4, 5, 8)
    ),
    alerts.SELFCHECK_FAILURES_LAST_RUN: Spec(Gauge, "Self-check failures in the repo's last test-generation run."),
    "mendflow_testbuilder_new_tests_total": Spec(Counter, "Generated tests kept by the test builder."),
    "mendflow_coverage_delta_points": Spec(
        Histogram, "B2 minus B1 line coverage of a run, in points.", buckets=(-20, -10, -5, -2, -1, 0, 1, 2, 5, 10, 20)
    ),
    alerts.COVERAGE_DELTA_LAST_RUN: Spec(Gauge, "B2 minus B1 line coverage of the repo's last run, in points."),
    "mendflow_llm_tokens_total": Spec(Counter, "LLM tokens spent, by stage (plan, testgen).", ("stage",)),
}  # fmt: skip


def one(_: Payload) -> float:
    return 1.0


def number(key: str, scale: float = 1.0, optional: bool = False) -> Value:
    """The payload's number at ``key`` (times ``scale``); absent or null is refused unless ``optional``."""

    def read(payload: Payload) -> float | None:
        value = payload.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise BadPayloadError(f"payload field {key} is {value!r}, not a number")
        return float(value) * scale

    return read


def repo_only(_: str, __: Payload) -> dict[str, str]:
    return {}


def stage(name: str) -> Labels:
    return lambda _, __: {"stage": name}


def outcome(event: str, _: Payload) -> dict[str, str]:
    return {"outcome": event.rsplit(".", 1)[-1]}


def event_name(event: str, _: Payload) -> dict[str, str]:
    return {"event": event}


def build_stage(_: str, payload: Payload) -> dict[str, str]:
    if payload.get("stage") not in BUILD_STAGES:
        raise BadPayloadError(f"payload field stage is {payload.get('stage')!r}, not one of {BUILD_STAGES}")
    return {"stage": str(payload["stage"])}


@dataclass(frozen=True)
class Row:
    events: tuple[str, ...]  # exact event names; () is every well-formed mendflow event
    metric: str
    value: Value = one
    labels: Labels = repo_only


BUILDS = tuple(f"mendflow.build.{o}" for o in BUILD_OUTCOMES)
PLANNED = ("mendflow.testplanner.planned",)
TESTBUILDER = tuple(f"mendflow.testbuilder.{o}" for o in BUILD_OUTCOMES)
PIPELINE = tuple(f"mendflow.pipeline.{o}" for o in PIPELINE_OUTCOMES)
SELFCHECK = number("testbuilder_selfcheck_failures")
COVERAGE_DELTA = number("coverage_delta_pct", optional=True)

ROWS: tuple[Row, ...] = (
    Row((), "mendflow_events_total", labels=event_name),
    Row(BUILDS, alerts.BUILDS_TOTAL, labels=outcome),
    Row(BUILDS, "mendflow_stage_duration_seconds", number("ci_build_duration"), build_stage),
    Row(PLANNED, "mendflow_stage_duration_seconds", number("tp_latency_ms", scale=0.001), stage("plan")),
    Row(PLANNED, "mendflow_llm_tokens_total", number("tp_llm_tokens"), stage("plan")),
    Row(TESTBUILDER, "mendflow_llm_tokens_total", number("tb_llm_tokens"), stage("testgen")),
    Row(TESTBUILDER, "mendflow_stage_duration_seconds", number("tb_duration_sec", optional=True), stage("testgen")),
    Row(TESTBUILDER, "mendflow_testbuilder_selfcheck_failures_total", SELFCHECK),
    Row(TESTBUILDER, "mendflow_testbuilder_selfcheck_failures_per_run", SELFCHECK),
    Row(TESTBUILDER, alerts.SELFCHECK_FAILURES_LAST_RUN, SELFCHECK),
    Row(TESTBUILDER, "mendflow_testbuilder_new_tests_total", number("testbuilder_new_tests")),
    Row(PIPELINE, "mendflow_pipeline_runs_total", labels=outcome),
    Row(PIPELINE, "mendflow_stage_duration_seconds", number("duration_sec"), stage("pipeline")),
    Row(PIPELINE, "mendflow_coverage_delta_points", COVERAGE_DELTA),
    Row(PIPELINE, alerts.COVERAGE_DELTA_LAST_RUN, COVERAGE_DELTA),
)

# Names become label values: only mendflow's own shape (mendflow.<step>.<outcome>) is counted.
EVENT_NAME = re.compile(r"mendflow\.[a-z0-9_]{1,40}\.[a-z0-9_]{1,40}")


@dataclass(frozen=True)
class Update:
    metric: str
    labels: dict[str, str]
    value: float


def updates(event: str, repo_id: str, payload: Payload) -> list[Update]:
    """What one event does to the metrics; raises BadPayloadError (and changes nothing) when it does not fit."""
    if not EVENT_NAME.fullmatch(event):
        raise BadPayloadError(f"event name {event!r} is not mendflow.<step>.<outcome>")
    found: list[Update] = []
    for row in ROWS:
        if row.events and event not in row.events:
            continue
        value = row.value(payload)
        if value is None:
            continue
        if METRICS[row.metric].kind is Counter and value < 0:
            raise BadPayloadError(f"{row.metric} cannot decrease (value {value})")
        found.append(Update(row.metric, {"repo": repo_id, **row.labels(event, payload)}, value))
    return found
