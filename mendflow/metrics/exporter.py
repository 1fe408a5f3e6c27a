"""The exporter: follow the Prefect server's ``mendflow.*`` events and keep ``table.METRICS`` up to date.

It must outlive the Prefect server it follows: Prefect's subscriber retries a dropped socket a few times, and
past that this loop opens a new one, with a growing pause. A new subscriber replays the last minute, so event
ids already counted are remembered here (Prefect's own memory of them dies with its subscriber). That replay is
read from the server's database, which an event reaches a few seconds after it is published: one published just
before a (re)connect is in neither the replay nor the live stream, so each connect reads that minute again once
the server has written it (``Settings.metrics_catch_up_sec``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.events import Event
from prefect.events.clients import get_events_subscriber
from prefect.events.filters import EventFilter, EventNameFilter, EventOccurredFilter
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from mendflow.errors import InputError
from mendflow.events import REPO_RESOURCE_PREFIX
from mendflow.identity import normalize
from mendflow.metrics.table import METRICS, BadPayloadError, Metric, Spec, Update, updates
from mendflow.settings import get_settings

log = logging.getLogger(__name__)

SEEN_IDS = 100_000  # far more than a minute's replay holds
RECONNECT_PAUSE_SEC = (1, 2, 5, 10, 30)
REPLAY = timedelta(minutes=1)  # what Prefect's subscriber replays on connect
MENDFLOW_EVENTS = EventNameFilter(prefix=["mendflow."])


class Exporter:
    """mendflow's metrics on their own registry (so two exporters, or Prefect's own metrics, never clash)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.metrics = {name: _create(name, spec, self.registry) for name, spec in METRICS.items()}
        self.ignored = Counter(
            "mendflow_exporter_events_ignored", "Events left out, by reason.", ("reason",), registry=self.registry
        )
        self.connected = Gauge(
            "mendflow_exporter_stream_connected", "1 while the event stream is open.", registry=self.registry
        )
        self.connects = Counter(
            "mendflow_exporter_stream_connects", "Event stream (re)connections.", registry=self.registry
        )
        self._repos: set[str] = set()
        self._seen: OrderedDict[UUID, None] = OrderedDict()
        self._gauge_set_at: dict[tuple[str, frozenset[tuple[str, str]]], datetime] = {}

    def record(self, event: Event) -> None:
        """Apply one event; a replayed one is skipped, one that does not fit is counted and left out."""
        if event.id in self._seen:
            return
        self._seen[event.id] = None
        if len(self._seen) > SEEN_IDS:
            self._seen.popitem(last=False)
        repo_id = _repo(event.resource.id)
        if repo_id is None:
            self.ignored.labels(reason="not_a_repository").inc()
            return
        try:
            found = updates(event.event, repo_id, event.payload)
        except BadPayloadError as exc:
            log.warning("ignored %s %s: %s", event.event, event.id, exc.one_line())
            self.ignored.labels(reason="bad_payload").inc()
            return
        self._first_sight(repo_id)
        for update in found:
            if not self._older_than_gauge(update, event.occurred):
                _apply(self.metrics[update.metric], update)

    def _older_than_gauge(self, update: Update, occurred: datetime) -> bool:
        """Whether ``update`` sets a gauge a later event has set: a caught-up event arrives after newer ones."""
        if not isinstance(self.metrics[update.metric], Gauge):
            return False
        series = (update.metric, frozenset(update.labels.items()))
        if series in self._gauge_set_at and self._gauge_set_at[series] > occurred:
            return True
        self._gauge_set_at[series] = occurred
        return False

    async def follow(self) -> None:
        """Follow the event stream for as long as the process lives."""
        failures = 0
        while True:
            try:
                await self._follow_once()
                failures = 0  # a clean end (server shut down): start again promptly
            except Exception as exc:  # any failure of the stream is retried: the exporter must not die
                log.warning("event stream lost (%s: %s); reconnecting", type(exc).__name__, exc)
                failures += 1
            finally:
                self.connected.set(0)
            await asyncio.sleep(RECONNECT_PAUSE_SEC[min(failures, len(RECONNECT_PAUSE_SEC) - 1)])

    async def _follow_once(self) -> None:
        connecting_at = datetime.now(UTC)
        async with get_events_subscriber(
            filter=EventFilter(event=MENDFLOW_EVENTS), reconnect_on_clean_close=True
        ) as subscriber:
            self.connected.set(1)
            self.connects.inc()
            log.info("following mendflow events")
            catch_up = asyncio.create_task(self._catch_up(since=connecting_at - REPLAY))
            try:
                async for event in subscriber:
                    self.record(event)
            finally:
                catch_up.cancel()

    async def _catch_up(self, since: datetime) -> None:
        """Once the server has written what was published around the connect, count what the stream missed."""
        await asyncio.sleep(get_settings().metrics_catch_up_sec)
        window = EventFilter(event=MENDFLOW_EVENTS, occurred=EventOccurredFilter(since=since, until=datetime.now(UTC)))
        try:
            async with get_client() as client:
                page = await client.read_events(filter=window, limit=50)
                while True:
                    for event in page.events:
                        self.record(event)
                    if not page.next_page:
                        break
                    page = await client.read_events_page(str(page.next_page))
        except Exception as exc:  # the stream goes on: a failed catch-up only leaves its gap open
            log.warning("catch-up after connecting failed (%s: %s)", type(exc).__name__, exc)

    def _first_sight(self, repo_id: str) -> None:
        if repo_id in self._repos:
            return
        self._repos.add(repo_id)
        for name, spec in METRICS.items():
            metric = self.metrics[name]
            for labels in spec.zeros:
                metric.labels(repo=repo_id, **labels)


def _repo(resource_id: str) -> str | None:
    """``owner/name`` of a ``mendflow.repo.<owner>/<name>`` resource; None for anything else."""
    if not resource_id.startswith(REPO_RESOURCE_PREFIX):
        return None
    repo_id = resource_id.removeprefix(REPO_RESOURCE_PREFIX)
    try:
        return repo_id if normalize(repo_id) == repo_id else None
    except InputError:
        return None


def _create(name: str, spec: Spec, registry: CollectorRegistry) -> Metric:
    labels = ("repo", *spec.labels)
    if spec.kind is Histogram:
        return Histogram(name, spec.help, labels, buckets=spec.buckets, registry=registry)
    # prometheus-client appends _total to a Counter's name itself.
    return spec.kind(name.removesuffix("_total"), spec.help, labels, registry=registry)


def _apply(metric: Metric, update: Update) -> None:
    child = metric.labels(**update.labels)
    if isinstance(child, Counter):
        child.inc(update.value)
    elif isinstance(child, Histogram):
        child.observe(update.value)
    else:
        child.set(update.value)
