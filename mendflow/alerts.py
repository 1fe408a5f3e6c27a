"""The seed's alerts (000 §7), said once: thresholds, the Prometheus rules and the Prefect-side evaluation.

Two channels read these numbers and nothing else:

- Prometheus: ``render_rules()`` is the checked-in ``k8s/monitoring/mendflow-alerts.rules.yml`` (a test compares
  them), evaluated over what ``mendflow metrics`` exports; the series it reads are named here for that reason.
- Prefect: an OSS event trigger counts events but cannot compute a rate or compare payload numbers, so the
  ``alerts`` deployment (``prefect.yaml``) runs ``flows/alerts.py`` after each event in ``TRIGGER_EVENTS``;
  ``evaluate`` decides from that event (and, for the rate, the repository's last hour of build events read
  from the Prefect events API) and every alert that holds becomes one ``mendflow.alert.<name>`` event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import yaml

from mendflow.contracts import BuildStatus, PipelineOutcome
from mendflow.errors import ContractError

# The seed's numbers.
BUILD_FAILURE_RATE = 0.15  # more than 15 % of a repository's builds in the window did not pass
BUILD_FAILURE_WINDOW = timedelta(hours=1)
BUILD_FAILURE_HOLD = "10m"  # seed: "for 10 m"; Prometheus only (the Prefect flow decides once per event)
SELFCHECK_FAILURES_MAX = 3  # more than 3 self-check (repair) rounds in one test-generation run
COVERAGE_DROP_MAX_POINTS = 5.0  # B2 line coverage more than 5 points below B1's

# A build that did not pass counts as failed: FAILED (tests or lint) and ERRORED (it could not run) alike.
FAILED_BUILD_OUTCOMES = (BuildStatus.FAILED.value.lower(), BuildStatus.ERRORED.value.lower())

# The exported series the rules read (mendflow/metrics defines them with these names).
BUILDS_TOTAL = "mendflow_builds_total"
SELFCHECK_FAILURES_LAST_RUN = "mendflow_testbuilder_selfcheck_failures_last_run"
COVERAGE_DELTA_LAST_RUN = "mendflow_coverage_delta_points_last_run"

ALERT_EVENT_PREFIX = "mendflow.alert."
BUILD_EVENTS = tuple(f"mendflow.build.{s.value.lower()}" for s in BuildStatus)
TESTBUILDER_EVENTS = tuple(f"mendflow.testbuilder.{s.value.lower()}" for s in BuildStatus)
PIPELINE_EVENTS = tuple(f"mendflow.pipeline.{o.value}" for o in PipelineOutcome)


@dataclass(frozen=True)
class Alert:
    name: str  # event mendflow.alert.<name>; Prometheus alert Mendflow<Name>
    threshold: float
    expr: str
    hold: str
    summary: str
    triggers: tuple[str, ...]  # the events after which the Prefect flow evaluates it

    @property
    def prometheus_name(self) -> str:
        return "Mendflow" + "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def event(self) -> str:
        return ALERT_EVENT_PREFIX + self.name


def _failure_ratio(window: str) -> str:
    failed = "|".join(FAILED_BUILD_OUTCOMES)
    return (
        f'sum by (repo) (increase({BUILDS_TOTAL}{{outcome=~"{failed}"}}[{window}]))\n'
        f"  / sum by (repo) (increase({BUILDS_TOTAL}[{window}]))"
    )


def _promql_duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds}s"


BUILD_FAILURES = Alert(
    name="build_failure_rate",
    threshold=BUILD_FAILURE_RATE,
    expr=f"{_failure_ratio(_promql_duration(BUILD_FAILURE_WINDOW))} > {BUILD_FAILURE_RATE}",
    hold=BUILD_FAILURE_HOLD,
    summary=f"more than {100 * BUILD_FAILURE_RATE:g} % of {{{{ $labels.repo }}}}'s builds failed in the last hour",
    # Only a build that did not pass can push the rate over the threshold.
    triggers=tuple(f"mendflow.build.{outcome}" for outcome in FAILED_BUILD_OUTCOMES),
)
SELFCHECK_FAILURES = Alert(
    name="selfcheck_failures",
    threshold=SELFCHECK_FAILURES_MAX,
    expr=f"{SELFCHECK_FAILURES_LAST_RUN} > {SELFCHECK_FAILURES_MAX}",
    hold="0s",
    summary=f"more than {SELFCHECK_FAILURES_MAX} self-check failures in {{{{ $labels.repo }}}}'s last test generation",
    triggers=TESTBUILDER_EVENTS,
)
COVERAGE_DROP = Alert(
    name="coverage_drop",
    threshold=COVERAGE_DROP_MAX_POINTS,
    expr=f"{COVERAGE_DELTA_LAST_RUN} < -{COVERAGE_DROP_MAX_POINTS:g}",
    hold="0s",
    summary=f"line coverage of {{{{ $labels.repo }}}} fell more than {COVERAGE_DROP_MAX_POINTS:g} points from B1 to B2",
    triggers=PIPELINE_EVENTS,
)
ALERTS = (BUILD_FAILURES, SELFCHECK_FAILURES, COVERAGE_DROP)
TRIGGER_EVENTS = tuple(name for alert in ALERTS for name in alert.triggers)

RULES_HEADER = (
    "# Generated from mendflow/alerts.py (render_rules); edit the thresholds there, then\n"
    "#   uv run --frozen python -c \"from mendflow.alerts import render_rules; print(render_rules(), end='')\" \\\n"
    "#     > k8s/monitoring/mendflow-alerts.rules.yml\n"
    "# tests/k8s/test_monitoring.py fails while this file and the module disagree.\n"
)


def render_rules() -> str:
    """The Prometheus rule file for ``ALERTS``."""
    rules = [
        {
            "alert": alert.prometheus_name,
            "expr": alert.expr,
            **({"for": alert.hold} if alert.hold != "0s" else {}),
            "labels": {"severity": "warning", "mendflow_alert": alert.name},
            "annotations": {"summary": alert.summary, "value": "{{ $value }}"},
        }
        for alert in ALERTS
    ]
    body = yaml.dump({"groups": [{"name": "mendflow", "rules": rules}]}, Dumper=_RulesDumper, sort_keys=False)
    return RULES_HEADER + body


class _RulesDumper(yaml.SafeDumper):
    """Multi-line PromQL as a literal block, as a person would write it."""


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_RulesDumper.add_representer(str, _str)


@dataclass(frozen=True)
class Firing:
    """One alert that holds for one repository, as its event will carry it."""

    alert: Alert
    repo_id: str
    value: float
    detail: Mapping[str, Any]


class BadTriggerError(ContractError):
    """The triggering event lacks a number its rule needs (not mendflow's own shape)."""


def evaluate(event_name: str, repo_id: str, payload: Mapping[str, Any], outcomes: Iterable[str]) -> list[Firing]:
    """The alerts that hold after ``event_name``; ``outcomes``: the repo's build outcomes in the window."""
    fired: list[Firing] = []
    if event_name in BUILD_FAILURES.triggers:
        fired += _build_failure_rate(repo_id, list(outcomes))
    if event_name in SELFCHECK_FAILURES.triggers:
        rounds = _number(payload, "testbuilder_selfcheck_failures")
        if rounds is not None and rounds > SELFCHECK_FAILURES_MAX:
            fired.append(Firing(SELFCHECK_FAILURES, repo_id, rounds, {"spec_id": payload.get("spec_id")}))
    if event_name in COVERAGE_DROP.triggers:
        delta = _number(payload, "coverage_delta_pct")
        if delta is not None and delta < -COVERAGE_DROP_MAX_POINTS:
            fired.append(Firing(COVERAGE_DROP, repo_id, delta, {}))
    return fired


def _build_failure_rate(repo_id: str, outcomes: list[str]) -> list[Firing]:
    failed = sum(1 for outcome in outcomes if outcome in FAILED_BUILD_OUTCOMES)
    if not outcomes or failed / len(outcomes) <= BUILD_FAILURE_RATE:
        return []
    rate = round(failed / len(outcomes), 4)
    return [Firing(BUILD_FAILURES, repo_id, rate, {"failed": failed, "builds": len(outcomes)})]


def _number(payload: Mapping[str, Any], key: str) -> float | None:
    """The payload's number at ``key``; None when absent or null (e.g. no B2 coverage)."""
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadTriggerError(f"payload field {key} is {value!r}, not a number")
    return float(value)
