from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def go_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One job cache for the session's Go runner tests: the first build fills the module and build caches."""
    return tmp_path_factory.mktemp("go-job-cache")
