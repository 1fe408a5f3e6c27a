"""What every flow-running command does before Prefect starts: check the input, set up the defaults."""

from __future__ import annotations

import os
from pathlib import Path

from mendflow import snapshot
from mendflow.errors import InputError
from mendflow.settings import get_settings
from mendflow.store import open_store


def _is_url(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


def repo_location(repo: str) -> str:
    if not repo.strip():
        raise InputError("the repository is empty", hint="give the path of a git repository or a clone URL")
    if _is_url(repo):
        return repo
    path = Path(repo).expanduser()
    if not path.exists():
        raise InputError(f"{repo}: no such path", hint="give the path of a git repository or a clone URL")
    return str(path.resolve())


def prepare(repo: str, commit: str | None, branch: str | None, launcher: str | None) -> str:
    """Validate input and settings in a second, before Prefect is started; return the repo location."""
    location = repo_location(repo)
    if launcher:
        os.environ["MENDFLOW_LAUNCHER"] = launcher  # settings are the one place configuration is read
        get_settings.cache_clear()
    settings = get_settings()
    if not _is_url(location):  # a URL is fetched once, by the flow
        snapshot.resolve_commit(snapshot.resolve_repo(location, settings), commit or branch)
    open_store(settings.resolved_store_url(), settings).check()
    # Without PREFECT_API_URL, Prefect starts a temporary local server; on a busy 2-core machine it needs more
    # than its default 20 s to come up. There is no internet for its telemetry either.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from mendflow.cli.server import tie_temporary_server  # imports Prefect's server: only flow commands pay

    tie_temporary_server()
    return location
