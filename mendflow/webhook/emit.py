"""Turn an accepted push into the Prefect event ``git.push``, and know that the server took it.

``prefect.events.emit_event`` queues the event for a background thread and swallows failures, so a webhook
using it would answer 202 for events the server never saw. We build the same ``Event`` and POST it to the
API's ``/events`` route, which answers 204 once the event is published to the server's event bus.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx
from prefect.client.orchestration import get_client
from prefect.events import Event
from prefect.events.schemas.events import Resource

from mendflow.webhook.errors import EmitError
from mendflow.webhook.push import PushEvent

EVENT_NAME = "git.push"
# Fixed namespace: the same delivery always maps to the same event id, and the Prefect server drops an
# event id it has already seen, so even a lost dedup database cannot fire a trigger twice for one delivery.
_EVENT_NAMESPACE = uuid.UUID("0c7b3c1e-5f0a-4d4e-9a53-6d656e64666c")

Emitter = Callable[[PushEvent, str], Awaitable[uuid.UUID]]


def resource_id(repo_name: str) -> str:
    return f"git.repo.{repo_name}"


def build_event(push: PushEvent, delivery_key: str) -> Event:
    return Event(
        id=uuid.uuid5(_EVENT_NAMESPACE, delivery_key),
        event=EVENT_NAME,
        resource=Resource(
            {
                "prefect.resource.id": resource_id(push.repo_name),
                "prefect.resource.name": push.repo_name,
                "git.provider": push.provider,
            }
        ),
        payload={**push.payload(), "delivery": delivery_key},
    )


async def post_event(push: PushEvent, delivery_key: str) -> uuid.UUID:
    """Send the event; raise ``EmitError`` unless the API confirmed it."""
    event = build_event(push, delivery_key)
    try:
        async with get_client() as client:
            response = await client.request("POST", "/events", json=[event.model_dump(mode="json")])
            response.raise_for_status()
    except httpx.HTTPError as exc:
        raise EmitError(
            f"the Prefect API did not accept the {EVENT_NAME} event: {exc}",
            hint="check PREFECT_API_URL and that the server is up; the provider may redeliver",
        ) from exc
    return event.id
