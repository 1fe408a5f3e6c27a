"""The seed's alerts as thin Prefect tasks: read the triggering event, decide (``mendflow/alerts.py``), emit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.events.filters import (
    EventFilter,
    EventIDFilter,
    EventNameFilter,
    EventOccurredFilter,
    EventResourceFilter,
)
from prefect.events.schemas.events import Event, ReceivedEvent

from mendflow import alerts, events
from mendflow.errors import MendflowError

# A trigger's run normally starts seconds after its event; a re-run by hand may come days later.
TRIGGER_LOOKBACK = timedelta(days=7)


class TriggerEventNotFoundError(MendflowError):
    """The event a run was started for is not (yet) readable from the Prefect events API."""


@dataclass(frozen=True)
class Trigger:
    """The event an alerts run was started for: which repository and commit, when, and what it said."""

    event_id: UUID
    name: str
    repo_id: str
    commit_sha: str
    occurred: datetime
    payload: dict[str, Any]


# The event reaches the database a moment after it reaches the trigger: retry the read briefly.
@task(name="read-trigger-event", cache_policy=NO_CACHE, retries=5, retry_delay_seconds=2)
def read_trigger(event_id: UUID) -> Trigger:
    """The triggering event, read back from the Prefect events API by its id."""
    since = datetime.now().astimezone() - TRIGGER_LOOKBACK
    found = _read(EventFilter(id=EventIDFilter(id=[event_id]), occurred=EventOccurredFilter(since=since)))
    if not found:
        raise TriggerEventNotFoundError(f"event {event_id} is not in the Prefect events API")
    return _trigger(found[0])


@task(name="evaluate-alerts", cache_policy=NO_CACHE)
def evaluate_alerts(trigger: Trigger) -> list[alerts.Firing]:
    """The alerts that hold after the trigger; the failure rate reads the repository's builds in the window."""
    outcomes = _build_outcomes(trigger) if trigger.name in alerts.BUILD_FAILURES.triggers else []
    return alerts.evaluate(trigger.name, trigger.repo_id, trigger.payload, outcomes)


@task(name="emit-alert", cache_policy=NO_CACHE)
def emit_alert(trigger: Trigger, firing: alerts.Firing) -> None:
    """One ``mendflow.alert.<name>`` event on the repository, naming the event that set it off."""
    events.emit(
        firing.repo_id, trigger.commit_sha, "alert", firing.alert.name,
        value=firing.value, threshold=firing.alert.threshold, trigger_event=str(trigger.event_id),
        trigger_name=trigger.name, **firing.detail,
    )  # fmt: skip
    get_run_logger().warning("%s: %s = %s", firing.repo_id, firing.alert.event, firing.value)


def _build_outcomes(trigger: Trigger) -> list[str]:
    """Outcomes of the repository's build events in the window that ends with the trigger (included)."""
    window = EventFilter(
        occurred=EventOccurredFilter(since=trigger.occurred - alerts.BUILD_FAILURE_WINDOW, until=trigger.occurred),
        event=EventNameFilter(name=list(alerts.BUILD_EVENTS)),
        resource=EventResourceFilter(id=[events.resource_id(trigger.repo_id)]),
    )
    by_id = {event.id: event.event for event in _read(window)}
    by_id[trigger.event_id] = trigger.name  # `until` is inclusive only to the server's clock resolution
    return [name.rsplit(".", 1)[-1] for name in by_id.values()]


def _read(where: EventFilter) -> list[ReceivedEvent]:
    """Every page of events the filter matches."""
    with get_client(sync_client=True) as client:
        page = client.read_events(filter=where, limit=50)  # the server's page size cap
        found = list(page.events)
        while page.next_page:
            page = client.read_events_page(str(page.next_page))
            found += page.events
    return found


def _trigger(event: Event) -> Trigger:
    commit = next((r for r in event.related if r.get("prefect.resource.role") == "commit"), None)
    commit_sha = commit.id.removeprefix(events.COMMIT_RESOURCE_PREFIX) if commit else ""
    return Trigger(
        event_id=event.id,
        name=event.event,
        repo_id=event.resource.id.removeprefix(events.REPO_RESOURCE_PREFIX),
        commit_sha=commit_sha,
        occurred=event.occurred,
        payload=dict(event.payload),
    )
