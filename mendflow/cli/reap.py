"""``mendflow reap``: remove what crashed runs left behind, on the configured launcher."""

from __future__ import annotations

from typing import Annotated

import typer

from mendflow.cli.app import app
from mendflow.settings import get_settings


@app.command("reap")
def reap(
    older_than: Annotated[
        int | None,
        typer.Option(min=0, help="Age in seconds; default twice the build timeout (plus the image pull grace)."),
    ] = None,
) -> None:
    """Delete mendflow Jobs and Pods (kubernetes) or local jobs' processes, cgroups and directories past the age."""
    settings = get_settings()
    if settings.launcher == "kubernetes":
        from mendflow.launcher.kubernetes import reap as reap_orphans  # the kubernetes client is slow to import

        reaped = reap_orphans(settings, older_than_sec=older_than)
    else:
        from mendflow.launcher.local import LocalLauncher

        reaped = LocalLauncher(settings).reap(older_than)
    for name in reaped:
        typer.echo(f"deleted {name}")
