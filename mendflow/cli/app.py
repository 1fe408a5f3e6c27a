"""The typer application every command module registers itself on (``cli/__init__.py`` picks the modules)."""

from __future__ import annotations

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="mendflow: a self-healing CI loop on Prefect.",
)


@app.callback()
def _group() -> None:
    """A group even when one command is registered: `mendflow index PATH` must not read "index" as PATH."""
