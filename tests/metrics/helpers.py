"""Real parts for the metrics tests: the `mendflow metrics` process, a Prometheus server, events emitted for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx

from tests.fixtures.prefect import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "k8s" / "monitoring" / "mendflow-alerts.rules.yml"
T = TypeVar("T")

# mendflow.events.emit in a process of its own: it flushes Prefect's event worker on exit, and it can point
# at any server (the tests' session server or a private one that is restarted).
_EMIT = """
import json, sys
from mendflow.events import emit
for repo_id, step, outcome, payload in json.load(sys.stdin):
    print(emit(repo_id, "0123456789abcdef0123456789abcdef01234567", step, outcome, **payload).id)
"""


def emit_events(api_url: str, *events: tuple[str, str, str, dict[str, Any]]) -> list[str]:
    """Emit ``(repo_id, step, outcome, payload)`` events through mendflow.events; their ids."""
    done = subprocess.run(
        [sys.executable, "-c", _EMIT],
        input=json.dumps(events),
        capture_output=True,
        text=True,
        env={**os.environ, "PREFECT_API_URL": api_url},
        timeout=120,
        check=True,
    )
    return done.stdout.split()


def poll(probe: Callable[[], T | None], timeout: float = 60, what: str = "condition") -> T:
    """The first truthy answer of ``probe``, asked every 0.5 s until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"no {what} within {timeout} s")


def _get(url: str) -> str | None:
    try:
        response = httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
    return response.text if response.status_code == 200 else None


@contextmanager
def running(args: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A process for the duration of the block, stopped (its whole group) afterwards."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, start_new_session=True
        )
    try:
        yield proc
    finally:
        stop(proc)


@contextmanager
def exporter(api_url: str, log: Path, **env: str) -> Iterator[str]:
    """``mendflow metrics`` following ``api_url``; yields its /metrics URL once the event stream is open."""
    port = free_port()
    args = [sys.executable, "-m", "mendflow.cli", "metrics", "--port", str(port)]
    with running(args, log, {"PREFECT_API_URL": api_url, **env}):
        url = f"http://127.0.0.1:{port}/metrics"
        poll(lambda: "mendflow_exporter_stream_connected 1.0" in (_get(url) or ""), what=f"open stream ({log})")
        yield url


@contextmanager
def prometheus(target: str, workdir: Path) -> Iterator[str]:
    """Debian's Prometheus scraping ``target`` (host:port) every second with mendflow's rules; yields its URL."""
    port = free_port()
    config = workdir / "prometheus.yml"
    config.write_text(
        json.dumps(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(RULES)],
                "scrape_configs": [{"job_name": "mendflow", "static_configs": [{"targets": [target]}]}],
            }
        )
    )
    args = [
        "/usr/bin/prometheus",
        f"--config.file={config}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with running(args, workdir / "prometheus.log"):
        url = f"http://127.0.0.1:{port}"
        poll(lambda: _get(f"{url}/-/ready"), what="ready Prometheus")
        yield url


def query(prometheus_url: str, promql: str) -> list[dict[str, Any]]:
    """The instant vector ``promql`` evaluates to now."""
    response = httpx.get(f"{prometheus_url}/api/v1/query", params={"query": promql}, timeout=5)
    response.raise_for_status()
    return list(response.json()["data"]["result"])


def alerts(prometheus_url: str) -> list[dict[str, Any]]:
    """Active alerts (pending or firing)."""
    response = httpx.get(f"{prometheus_url}/api/v1/alerts", timeout=5)
    response.raise_for_status()
    return list(response.json()["data"]["alerts"])
