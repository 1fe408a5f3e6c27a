import os

import pytest

from mendflow.settings import get_settings

# The suite checks what the loop does with the tests it generates, not how far a longer search gets: every
# module's Pynguin search is 5 s (users' default: 20 s up to 60 s), in this process and every command and server
# the tests start. Pynguin is the loop's longest step: this saves ~40 s per offline loop on the example.
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_SEC", "5")
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_MAX_SEC", "5")

# Real services, each started once per session by its fixture module.
pytest_plugins = [
    f"tests.fixtures.{name}" for name in ("repos", "prefect", "s3", "kube", "kube_node", "weaviate", "llm_server")
]


@pytest.fixture
def mendflow_env(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """Fresh mendflow settings for one test: a private state dir, the seed's back-off shortened to nothing."""
    monkeypatch.setenv("MENDFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MENDFLOW_RETRY_DELAYS_SEC", "[0, 0, 0]")
    monkeypatch.setenv("BUILD_TIMEOUT_SEC", "300")
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()
