"""The ``mendflow`` command. Each sub-command lives in its own module and registers itself on ``app``."""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from mendflow.errors import MendflowError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="mendflow: a self-healing CI loop on Prefect.")
err_console = Console(stderr=True)

_COMMAND_MODULES = ("build", "run", "index", "webhook", "plan", "gen", "reap")


def _register_commands() -> None:
    for name in _COMMAND_MODULES:
        importlib.import_module(f"mendflow.cli.{name}")


def main() -> None:
    """Entry point: a MendflowError becomes one line on stderr and its exit code; nothing else is swallowed."""
    _register_commands()
    try:
        # Without standalone mode click returns the code of a typer.Exit instead of exiting with it.
        code = app(standalone_mode=False)
    except MendflowError as exc:
        err_console.print(f"[bold red]error:[/] {exc.one_line()}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    except Exception as exc:  # click usage errors carry their own exit code
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    sys.exit(code if isinstance(code, int) else 0)
