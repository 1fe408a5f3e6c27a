"""``mendflow reap``: delete orphaned stage Jobs and Pods left by crashed workers (Kubernetes launcher)."""

from __future__ import annotations

from typing import Annotated

import typer

from mendflow.cli import app
from mendflow.settings import get_settings


@app.command("reap")
def reap(
    older_than: Annotated[
        int | None, typer.Option(help="Age in seconds; default twice the build timeout plus grace.")
    ] = None,
) -> None:
    """Delete mendflow Jobs and Pods older than the limit in the jobs namespace."""
    from mendflow.launcher.kubernetes import reap as reap_orphans  # the kubernetes client is slow to import

    for name in reap_orphans(get_settings(), older_than_sec=older_than):
        typer.echo(f"deleted {name}")
