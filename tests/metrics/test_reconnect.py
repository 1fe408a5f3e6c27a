"""`mendflow metrics` outlives the Prefect server it follows: a restart loses no event and counts none twice.

Neither does a connect: Prefect replays the last minute from its database, which an event reaches only when the
server's persister flushes its batch.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.fixtures.prefect import _wait_healthy, free_port
from tests.metrics.helpers import emit_events, exporter, poll, running

pytestmark = pytest.mark.slow

BUILD = {"stage": "B1", "attempt": 1, "url": "", "ci_build_duration": 1.0, "ci_tests_passed_total": 1,
         "ci_coverage_line_pct": None, "ci_fail_reason": None}  # fmt: skip


@contextmanager
def restartable_prefect_server(home: Path, **settings: str) -> Iterator[tuple[str, Callable[[], None]]]:
    """A private Prefect server (SQLite under ``home``): its API URL and ``restart``, which keeps port and data."""
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}, "PREFECT_HOME": str(home), **settings}
    args = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    api_url = f"http://127.0.0.1:{port}/api"
    with ExitStack() as stack:

        def start() -> None:
            log = home / f"server-{len(list(home.glob('server-*.log')))}.log"
            _wait_healthy(api_url, stack.enter_context(running(args, log, env)), log)

        def restart() -> None:
            stack.close()  # SIGTERM, as a rollout would
            start()

        start()
        yield api_url, restart


def sample(metrics_url: str, name: str, **labels: str) -> float | None:
    """The exporter's current value of one series, read from its /metrics page."""
    try:
        text = httpx.get(metrics_url, timeout=2).text
    except httpx.HTTPError:
        return None
    found = [
        s.value for family in text_string_to_metric_families(text) for s in family.samples
        if s.name == name and s.labels == labels
    ]  # fmt: skip
    return found[0] if found else None


def builds(metrics_url: str, repo: str, outcome: str) -> float | None:
    return sample(metrics_url, "mendflow_builds_total", repo=repo, outcome=outcome)


def test_a_prefect_server_restart_loses_and_doubles_nothing(tmp_path: Path) -> None:
    repo = f"metrics/restart-{uuid.uuid4().hex[:8]}"
    with (
        restartable_prefect_server(tmp_path) as (api_url, restart),
        exporter(api_url, tmp_path / "exporter.log") as metrics,
    ):
        emit_events(api_url, (repo, "build", "passed", BUILD))
        poll(lambda: builds(metrics, repo, "passed") == 1, what="the first event")
        restart()
        # Prefect's subscriber reconnects itself when the server is back soon enough, else the exporter's loop
        # does (a second connect): either way the stream after the restart replays the last minute, which
        # holds the first event again, and it is counted once.
        emit_events(api_url, (repo, "build", "failed", BUILD))
        poll(lambda: builds(metrics, repo, "failed") == 1, what="the event after the restart")
        assert builds(metrics, repo, "passed") == 1


def test_an_event_published_before_a_connect_and_written_after_it_is_counted(tmp_path: Path) -> None:
    early, late = (f"metrics/{when}-{uuid.uuid4().hex[:8]}" for when in ("early", "late"))
    flush_on_the_second_event = {
        "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "2",
        "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL": "600",
    }
    with restartable_prefect_server(tmp_path, **flush_on_the_second_event) as (api_url, _):
        emit_events(api_url, (early, "build", "passed", BUILD))
        with exporter(api_url, tmp_path / "exporter.log", MENDFLOW_METRICS_CATCH_UP_SEC="20") as metrics:
            emit_events(api_url, (late, "build", "passed", BUILD))  # live, and it writes both
            poll(lambda: builds(metrics, late, "passed") == 1, what="the event after connecting")
            poll(lambda: builds(metrics, early, "passed") == 1, what="the event before connecting")
