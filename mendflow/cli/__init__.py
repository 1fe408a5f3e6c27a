"""The ``mendflow`` command. Each sub-command lives in its own module and registers itself on ``app``."""

from __future__ import annotations

import importlib
import sys

import typer

from mendflow.cli.errors import one_line

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="mendflow: a self-healing CI loop on Prefect.",
)


@app.callback()
def _group() -> None:
    """A group even when one command is registered: `mendflow index PATH` must not read "index" as PATH."""


_COMMAND_MODULES = ("build", "run", "heal", "index", "search", "webhook", "plan", "gen", "reap", "metrics", "egress")
# Commands whose module is not named after them (search.py holds search and grep).
_MODULE_OF = {"grep": "search", "egress-proxy": "egress"}


def _register_commands(argv: list[str] | None = None) -> None:
    """Import the one module the command in ``argv`` needs, or all of them (no argv, help, a typo: click lists
    every command).

    `mendflow search` and `grep` must answer in a fraction of a second: the flow commands' modules import
    Prefect's dependencies, snapshotting and the store, which cost more than the whole query.
    """
    name = argv[1] if argv and len(argv) > 1 else ""
    module = _MODULE_OF.get(name, name)
    if module in _COMMAND_MODULES:
        importlib.import_module(f"mendflow.cli.{module}")
        return
    for module in _COMMAND_MODULES:
        importlib.import_module(f"mendflow.cli.{module}")


def main() -> None:
    """Entry point: bad input of any kind becomes one line on stderr and its exit code (``cli/errors.py``)."""
    try:
        _register_commands(sys.argv)
        # Without standalone mode click returns the code of a typer.Exit instead of exiting with it.
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        _say("aborted")
        sys.exit(130)
    except Exception as exc:
        said = one_line(exc)
        if said is None:
            raise
        line, exit_code = said
        if line:
            _say(f"[bold red]error:[/] {line}")
        sys.exit(exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _say(markup: str) -> None:
    """One line on stderr; rich is imported here, on the way out, not by every command's start-up."""
    from rich.console import Console

    Console(stderr=True).print(markup, highlight=False, soft_wrap=True, markup=True)
