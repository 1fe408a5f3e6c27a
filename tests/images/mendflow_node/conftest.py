from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def node_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One job cache for the session's Node runner tests: the first install fills npm's cache."""
    return tmp_path_factory.mktemp("node-job-cache")
