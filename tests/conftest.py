import os
from typing import Any

import pytest

from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings

# The suite checks what the loop does with the tests it generates, not how far a longer search gets: every
# module's Pynguin search is 5 s (users' default: 20 s up to 60 s), in this process and every command and server
# the tests start. Pynguin is the loop's longest step: this saves ~40 s per offline loop on the example.
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_SEC", "5")
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_MAX_SEC", "5")

# Real services, each started once per session by its fixture module.
pytest_plugins = [
    f"tests.fixtures.{name}" for name in ("repos", "prefect", "s3", "kube", "kube_node", "weaviate", "llm_server")
]


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scheduler of whole scopes, where a scope is one test, except tests that share something costly, which
    run on one worker: the real node (one per machine: it holds /run/mendflow-node.lock), and each language runner's
    session cache, filled once. (xdist's ``--dist loadgroup`` cannot do it: it renames test ids in a way pytest 9.2
    no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_fixture_group(nodeid) or nodeid

    return SharedFixtureScheduling(config, log)


def shared_fixture_group(nodeid: str) -> str | None:
    parts = nodeid.split("::", 1)[0].split("/")
    if parts[:2] == ["tests", "real_node"]:
        return "tests/real_node"
    return "/".join(parts[:3]) if len(parts) > 3 and parts[:2] == ["tests", "images"] else None


# The dependency caches the session's jobs made in the launcher's default base: each test repository's is new and
# never used again, and a run of the suite leaves gigabytes of them on a disk it shares with the next run.
_CACHES_BEFORE = pytest.StashKey[set[str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without xdist
        session.config.stash[_CACHES_BEFORE] = _default_launcher().cache_names()


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_CACHES_BEFORE, None)
    if before is not None:
        launcher = _default_launcher()
        launcher.remove_caches(launcher.cache_names() - before)


def _default_launcher() -> LocalLauncher:
    return LocalLauncher(Settings())
