"""What the CLI says for each kind of bad input: one line on stderr and its exit code, never a traceback.

typer bundles its own copy of click (``typer._click``), so click's own exception classes never match what a
typer app raises; the bundled ones are imported here, the one place that knows about it. They and pydantic are
imported only once an error is being explained: ``mendflow grep`` starts without either.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mendflow.errors import MendflowError

if TYPE_CHECKING:  # pydantic_settings costs ~70 ms to import; only a settings error needs it (then it is loaded)
    from pydantic import ValidationError
    from pydantic_settings import BaseSettings

USAGE_EXIT = 2
# A bug in mendflow (sysexits' EX_SOFTWARE): never one of the verdicts' codes (build's 1 is FAILED), nor 69,
# a service mendflow needs that failed (``MendflowError``).
INTERNAL_EXIT = 70


def one_line(exc: BaseException) -> tuple[str, int] | None:
    """``(line, exit code)`` for an error the user can fix; None for anything else (a bug: let it show)."""
    if isinstance(exc, MendflowError):
        return exc.one_line(), exc.exit_code
    from pydantic import ValidationError
    from typer._click.exceptions import ClickException, NoArgsIsHelpError

    if isinstance(exc, NoArgsIsHelpError):
        return "", USAGE_EXIT  # click printed the help already
    if isinstance(exc, ClickException):
        return _flatten(exc.format_message()) + " (see --help)", USAGE_EXIT
    if isinstance(exc, ValidationError) and (settings := settings_class(exc)) is not None:
        return bad_setting(exc, settings), USAGE_EXIT
    return None


def settings_class(exc: ValidationError) -> type[BaseSettings] | None:
    """The settings class an error is about (mendflow's ``Settings``, ``WebhookSettings``, Prefect's…).

    Settings are read from the environment, so their errors are the user's to fix; a data model's are not.
    Two classes may share a name (mendflow's and Prefect's ``Settings``): the one with the field wins.
    """
    named = [cls for cls in _all_settings() if cls.__name__ == exc.title]
    loc = exc.errors()[0]["loc"]
    first = str(loc[0]) if loc else ""
    return next((cls for cls in named if first in cls.model_fields or _aliases(cls, first) != [first]), None) or (
        named[0] if named else None
    )


def _all_settings() -> list[type[BaseSettings]]:
    from pydantic_settings import BaseSettings

    found: list[type[BaseSettings]] = []
    pending = list(BaseSettings.__subclasses__())
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += cls.__subclasses__()
    return sorted(found, key=lambda cls: not cls.__module__.startswith("mendflow"))


def bad_setting(exc: ValidationError, settings: type[BaseSettings] | None = None) -> str:
    """The first invalid setting, named as the environment variable that holds it, and what it accepts."""
    error = exc.errors()[0]
    variable = _variable(settings, [str(part) for part in error["loc"]], error.get("input"))
    return f"bad setting {variable}={error.get('input')!r}: {_flatten(error['msg'])}"


def _variable(settings: type[BaseSettings] | None, parts: list[str], value: Any) -> str:
    config = settings.model_config if settings is not None else {}
    prefix, delimiter = config.get("env_prefix") or "MENDFLOW_", config.get("env_nested_delimiter") or "__"
    if parts and parts[0].isupper():  # an aliased field reports its first alias, already a variable name
        aliases = _aliases(settings, parts[0])
        # Name the alias the user actually set (BUILD_TIMEOUT_SEC) rather than the first one.
        return next((a for a in aliases if os.environ.get(a) == value), parts[0])
    return (prefix + delimiter.join(parts)).upper()


def _aliases(settings: type[BaseSettings] | None, first: str) -> list[str]:
    for field in settings.model_fields.values() if settings is not None else ():
        choices = getattr(field.validation_alias, "choices", None) or []
        names = [c for c in choices if isinstance(c, str)]
        if first in names:
            return names
    return [first]


def _flatten(text: str) -> str:
    return " ".join(text.split())
