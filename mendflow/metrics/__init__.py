"""``mendflow metrics``: a Prometheus endpoint fed by mendflow's Prefect events (seed 000 §7).

``table.py`` says which event feeds which series, ``exporter.py`` follows the event stream; the alert rules
over these series are ``mendflow/alerts.py``. Metric names: ``docs/metrics.md``.
"""

from __future__ import annotations

import asyncio

from prometheus_client import disable_created_metrics, start_http_server

from mendflow.errors import ConfigError
from mendflow.metrics.exporter import Exporter

__all__ = ["Exporter", "follow", "listen"]


def listen(host: str, port: int) -> Exporter:
    """An exporter whose ``/metrics`` is served on ``host:port`` (in a thread) from now on."""
    disable_created_metrics()  # *_created series would double what Prometheus stores, for nothing the rules read
    exporter = Exporter()
    try:
        start_http_server(port, addr=host, registry=exporter.registry)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", hint="pick another --port") from exc
    return exporter


def follow(exporter: Exporter) -> None:
    """Follow the event stream until the process is stopped."""
    asyncio.run(exporter.follow())
