"""What every flow-running command does before Prefect starts: check the input, set up the defaults."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from mendflow import snapshot
from mendflow.cli import server as temporary_server
from mendflow.errors import ConfigError, InputError
from mendflow.settings import get_settings
from mendflow.store import open_store

URL_SCHEMES = ("http", "https", "ssh", "git", "file")
# scp-like syntax git accepts: [user@]host:path, e.g. git@github.com:owner/name.git
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:[^/\s].*$")
_REPO_HINT = "give a git repository's path or a clone URL such as https://host/owner/name.git or git@host:owner/name"


class LauncherName(StrEnum):
    """``--launcher``'s choices: a mistyped one is a usage error naming them, before settings are read."""

    LOCAL = "local"
    KUBERNETES = "kubernetes"


def _is_url(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


def check_url(url: str) -> str:
    """``url`` when git could clone it: a known scheme with a host and a path, or the scp-like form."""
    if _SCP_LIKE.match(url):
        return url
    parts = urlsplit(url)
    has_host = bool(parts.hostname) or parts.scheme == "file"
    if parts.scheme not in URL_SCHEMES or not has_host or parts.path.strip("/") == "" or any(c.isspace() for c in url):
        raise InputError(f"{url!r} is not a clone URL", hint=_REPO_HINT)
    return url


def repo_location(repo: str) -> str:
    if not repo.strip():
        raise InputError("the repository is empty", hint=_REPO_HINT)
    if _is_url(repo):
        return check_url(repo)
    path = Path(repo).expanduser()
    if not path.exists():
        raise InputError(f"{repo}: no such path", hint=_REPO_HINT)
    return str(path.resolve())


def prepare(
    repo: str, commit: str | None, branch: str | None, launcher: LauncherName | None, verbose: bool = False
) -> str:
    """Validate input and settings in a second, before Prefect is started; return the repo location."""
    location = repo_location(repo)
    if launcher:
        os.environ["MENDFLOW_LAUNCHER"] = launcher.value  # settings are the one place configuration is read
        get_settings.cache_clear()
    settings = get_settings()
    if not _is_url(location):  # a URL is fetched once, by the flow
        snapshot.resolve_commit(snapshot.resolve_repo(location, settings), commit or branch)
    open_store(settings.resolved_store_url(), settings).check()
    # Without PREFECT_API_URL a temporary local server runs the flow; on a busy 2-core machine it needs more
    # than Prefect's default 20 s to come up. There is no internet for its telemetry either.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:
        # Read when Prefect configures logging, in this process and in the temporary server.
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    load_prefect(verbose, temporary_server.start_unless_configured())
    return location


def load_prefect(verbose: bool, server: temporary_server.TemporaryServer | None) -> None:
    """Import Prefect and check its settings and API, so that a mistake there is one line, not a traceback.

    Prefect prints a bad setting at import, then fails again at first use; the import is hushed and the
    settings are checked here instead. Unless ``verbose``, Prefect's console log is hushed too: the progress
    display and the one-line outcome are what a person reads (the run's log stays on the Prefect server).
    ``server``, a temporary server started before the import, is used unless Prefect's settings name an API.
    """
    with contextlib.redirect_stderr(io.StringIO()):
        import prefect  # noqa: F401
    from prefect.logging.handlers import PrefectConsoleHandler
    from prefect.settings import Settings as PrefectSettings

    PrefectSettings()  # raises the ValidationError the CLI turns into "bad setting PREFECT_…"
    if not verbose:  # Prefect may have configured logging before the variable above was set
        for handler in logging.getLogger().handlers:
            if isinstance(handler, PrefectConsoleHandler):
                handler.setLevel(logging.CRITICAL)
    if server is not None:
        temporary_server.use_or_stop(server)
    _check_api()


def check_api_url(url: str) -> str:
    """``url`` when it can be a Prefect API URL (the commands serving a Prefect server need one)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"PREFECT_API_URL={url!r} is not an http(s) URL", hint="e.g. http://host:4200/api")
    return url


def _check_api() -> None:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        return  # the temporary server
    check_api_url(url)
    with get_client(sync_client=True) as client:
        failure = client.api_healthcheck()
    if failure is not None:
        raise ConfigError(
            f"the Prefect API at {url} cannot be reached: {' '.join(str(failure).split())[:200]}",
            hint="start it with `prefect server start`, or unset PREFECT_API_URL for a temporary one",
        )
