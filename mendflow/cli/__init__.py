"""The ``mendflow`` command. Each sub-command lives in its own module and registers itself on ``cli/app.py``'s
typer app; ``search`` and ``grep`` run from ``cli/query.py`` without typer (see there why)."""

from __future__ import annotations

import sys

_COMMAND_MODULES = ("build", "run", "heal", "index", "search", "webhook", "plan", "gen", "reap", "metrics", "egress")
# Commands whose module is not named after them (search.py holds search and grep).
_MODULE_OF = {"grep": "search", "egress-proxy": "egress"}
_QUERIES = ("search", "grep")  # answered by cli/query.py, before typer is imported


def _register_commands(argv: list[str] | None = None) -> None:
    """Import the one module the command in ``argv`` needs, or all of them (no argv, help, a typo: click lists
    every command).

    The flow commands' modules import Prefect's dependencies, snapshotting and the store: a command pays only
    for its own.
    """
    import importlib

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
        code = _query(sys.argv) if sys.argv[1:2] and sys.argv[1] in _QUERIES else _typer(sys.argv)
    except KeyboardInterrupt:
        _say("aborted")
        sys.exit(130)
    except Exception as exc:
        from mendflow.cli.errors import one_line  # not at start-up: its imports cost a grep ~5 ms

        said = one_line(exc)
        if said is None:  # a bug: its traceback to report, and a code no verdict uses
            import traceback

            from mendflow.cli.errors import INTERNAL_EXIT

            traceback.print_exc()
            _say(f"[bold red]internal error:[/] a bug in mendflow, not a verdict (exit {INTERNAL_EXIT}); report it")
            sys.exit(INTERNAL_EXIT)
        line, exit_code = said
        if line:
            _say(f"[bold red]error:[/] {line}")
        sys.exit(exit_code)
    sys.exit(code)


def _query(argv: list[str]) -> int:
    if argv[1] == "grep":
        from mendflow.cli.fast_grep import answer

        code = answer(argv[2:])
        if code is not None:
            return code
    from mendflow.cli import query

    return query.run(argv[1], argv[2:])


def _typer(argv: list[str]) -> int:
    import typer

    from mendflow.cli.app import app

    _register_commands(argv)
    try:
        # Without standalone mode click returns the code of a typer.Exit instead of exiting with it.
        # prog_name: Python runs as `mendflow-py` when the native launcher hands a command over.
        code = app(standalone_mode=False, prog_name="mendflow")
    except typer.Abort:
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0


def _say(markup: str) -> None:
    """One line on stderr; rich is imported here, on the way out, not by every command's start-up."""
    from rich.console import Console

    Console(stderr=True).print(markup, highlight=False, soft_wrap=True, markup=True)
