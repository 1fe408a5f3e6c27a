"""The ``mendflow`` command. Each sub-command lives in its own module and registers itself on ``app``."""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from mendflow.cli.errors import one_line

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="mendflow: a self-healing CI loop on Prefect.",
)
err_console = Console(stderr=True)

_COMMAND_MODULES = ("build", "run", "heal", "index", "webhook", "plan", "gen", "reap", "metrics", "egress")


def _register_commands() -> None:
    for name in _COMMAND_MODULES:
        importlib.import_module(f"mendflow.cli.{name}")


def main() -> None:
    """Entry point: bad input of any kind becomes one line on stderr and its exit code (``cli/errors.py``)."""
    try:
        _register_commands()
        # Without standalone mode click returns the code of a typer.Exit instead of exiting with it.
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    except Exception as exc:
        said = one_line(exc)
        if said is None:
            raise
        line, exit_code = said
        if line:
            err_console.print(f"[bold red]error:[/] {line}", highlight=False, soft_wrap=True, markup=True)
        sys.exit(exit_code)
    sys.exit(code if isinstance(code, int) else 0)
