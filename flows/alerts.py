"""Flow ``mendflow_alerts``: the seed's alerts on the Prefect side, run by the ``alerts`` deployment's trigger.

A Prefect OSS trigger can count events but not compute a rate or compare payload numbers, so the trigger
only starts this flow with the event's id; the rules themselves are ``mendflow/alerts.py``.
"""

# No `from __future__ import annotations`: see flows/reindex.py (served runs resolve string annotations without
# this module's namespace).

from typing import Annotated
from uuid import UUID

from prefect import flow
from pydantic import Field

from tasks.alerts import emit_alert, evaluate_alerts, read_trigger


@flow(name="mendflow-alerts", timeout_seconds=300)
def mendflow_alerts(
    event_id: Annotated[UUID, Field(description="The mendflow event that triggered this run ({{ event.id }}).")],
) -> list[str]:
    """Evaluate the alerts the event can set off; emit ``mendflow.alert.<name>`` for each that holds."""
    trigger = read_trigger(event_id)
    fired = evaluate_alerts(trigger)
    for firing in fired:
        emit_alert(trigger, firing)
    return [firing.alert.event for firing in fired]
