from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for the session's runner tests: the first install fills it, later ones reuse it."""
    return tmp_path_factory.mktemp("uv-cache")
