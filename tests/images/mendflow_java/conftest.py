from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def java_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One job cache for the session's Java runner tests: the first dependency phase fills its local repository."""
    return tmp_path_factory.mktemp("java-job-cache")
