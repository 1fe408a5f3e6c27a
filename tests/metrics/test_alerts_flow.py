"""The alerts flow against the real Prefect server, and the deployment trigger that starts it."""

from __future__ import annotations

import inspect
import uuid
from typing import Any
from uuid import UUID

import httpx
import pytest
import yaml

from flows.alerts import mendflow_alerts
from mendflow import alerts
from mendflow.events import resource_id
from tests.fixtures.prefect import PrefectServer
from tests.metrics.helpers import ROOT, emit_events, poll

BUILD = {"stage": "B1", "attempt": 1, "url": "", "ci_build_duration": 1.0, "ci_tests_passed_total": 1,
         "ci_coverage_line_pct": None, "ci_fail_reason": None}  # fmt: skip


def stored(server: PrefectServer, repo: str, prefix: str) -> list[dict[str, Any]]:
    body = {"filter": {"resource": {"id": [resource_id(repo)]}, "event": {"prefix": [prefix]}}, "limit": 50}
    return list(httpx.post(f"{server.api_url}/events/filter", json=body, timeout=10).json()["events"])


def builds_then_one_failure(server: PrefectServer, passed: int) -> tuple[str, UUID]:
    """``passed`` passing builds and then a failed one for a new repo, all stored; the failure's event id."""
    repo = f"alerts/calc-{uuid.uuid4().hex[:8]}"
    ids = emit_events(server.api_url, *[(repo, "build", "passed", BUILD)] * passed, (repo, "build", "failed", BUILD))
    poll(lambda: len(stored(server, repo, "mendflow.build.")) == passed + 1, what="stored builds")
    return repo, UUID(ids[-1])


@pytest.mark.slow
def test_a_failure_rate_over_15_percent_emits_the_alert_event(prefect_server: PrefectServer) -> None:
    repo, failure = builds_then_one_failure(prefect_server, passed=5)  # 1 in 6: 16.7 %
    mendflow_alerts(event_id=failure)
    (alert,) = poll(lambda: stored(prefect_server, repo, alerts.ALERT_EVENT_PREFIX), what="alert event")
    assert (alert["event"], alert["payload"]["value"], alert["payload"]["trigger_event"]) == (
        "mendflow.alert.build_failure_rate", 0.1667, str(failure),
    )  # fmt: skip


@pytest.mark.slow
def test_a_failure_rate_under_15_percent_emits_nothing(prefect_server: PrefectServer) -> None:
    _, failure = builds_then_one_failure(prefect_server, passed=6)  # 1 in 7: 14.3 %
    assert mendflow_alerts(event_id=failure) == []


def alerts_trigger() -> dict[str, Any]:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    (deployment,) = [d for d in config["deployments"] if d["entrypoint"] == "flows/alerts.py:mendflow_alerts"]
    (trigger,) = deployment["triggers"]
    return dict(trigger)


def test_the_deployment_trigger_expects_every_event_an_alert_depends_on() -> None:
    assert alerts_trigger()["expect"] == list(alerts.TRIGGER_EVENTS)


def test_the_deployment_trigger_passes_the_flow_its_parameters() -> None:
    assert set(alerts_trigger()["parameters"]) == set(inspect.signature(mendflow_alerts.fn).parameters)
