"""``mendflow metrics``: serve the Prometheus endpoint fed by mendflow's Prefect events."""

from __future__ import annotations

from typing import Annotated

import typer

from mendflow.cli.app import app
from mendflow.errors import ConfigError


@app.command("metrics")
def metrics(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the /metrics endpoint.")] = 9464,
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
) -> None:
    """Export stage durations, build outcomes, self-check failures, coverage delta and LLM tokens to Prometheus."""
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        # Without it Prefect would start a private in-process server that no flow emits to.
        raise ConfigError(
            "PREFECT_API_URL is not set", hint="point it at the Prefect server, e.g. http://host:4200/api"
        )
    from mendflow.metrics import follow, listen  # prometheus-client and the events client: only when serving

    exporter = listen(host, port)
    typer.echo(f"mendflow metrics: http://{host}:{port}/metrics, events from {PREFECT_API_URL.value()}", err=True)
    follow(exporter)
