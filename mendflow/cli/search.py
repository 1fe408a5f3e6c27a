"""``mendflow search`` and ``mendflow grep`` in typer's command list (``mendflow --help``).

``main()`` runs both from ``cli/query.py`` without importing typer; these entries only pass their arguments on.
"""

from __future__ import annotations

import typer

from mendflow.cli import query
from mendflow.cli.app import app

# Every argument goes to query.py's own parser, --help included.
_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@app.command("search", help=query.SEARCH_HELP, context_settings=_PASS_THROUGH, add_help_option=False)
def search(ctx: typer.Context) -> None:
    raise typer.Exit(query.run("search", list(ctx.args)))


@app.command("grep", help=query.GREP_HELP, context_settings=_PASS_THROUGH, add_help_option=False)
def grep(ctx: typer.Context) -> None:
    raise typer.Exit(query.run("grep", list(ctx.args)))
