"""What the CLI says for each kind of bad input: one line on stderr and its exit code, never a traceback.

typer bundles its own copy of click (``typer._click``), so click's own exception classes never match what a
typer app raises; the bundled ones are imported here, the one place that knows about it.
"""

from __future__ import annotations

from pydantic import ValidationError
from typer._click.exceptions import ClickException, NoArgsIsHelpError

from mendflow.errors import MendflowError

USAGE_EXIT = 2


def one_line(exc: BaseException) -> tuple[str, int] | None:
    """``(line, exit code)`` for an error the user can fix; None for anything else (a bug: let it show)."""
    if isinstance(exc, MendflowError):
        return exc.one_line(), exc.exit_code
    if isinstance(exc, NoArgsIsHelpError):
        return "", USAGE_EXIT  # click printed the help already
    if isinstance(exc, ClickException):
        return _flatten(exc.format_message()) + " (see --help)", USAGE_EXIT
    if isinstance(exc, ValidationError) and exc.title == "Settings":
        return bad_setting(exc), USAGE_EXIT
    return None


def bad_setting(exc: ValidationError) -> str:
    """The first invalid setting, named as its environment variable, and what it accepts."""
    error = exc.errors()[0]
    parts = [str(part) for part in error["loc"]]
    # An aliased field (BUILD_TIMEOUT_SEC) reports its alias, already a variable name; others their field path.
    variable = parts[0] if parts and parts[0].isupper() else "MENDFLOW_" + "__".join(parts).upper()
    return f"bad setting {variable}={error.get('input')!r}: {_flatten(error['msg'])}"


def _flatten(text: str) -> str:
    return " ".join(text.split())
