from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def rust_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One job cache for the session's Rust runner tests: the first fetch fills cargo's registry cache."""
    return tmp_path_factory.mktemp("rust-job-cache")
