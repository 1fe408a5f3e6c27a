from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mendflow_go import warm

from tests.images.mendflow_go.helpers import go_env


@pytest.fixture(scope="session")
def go_std_seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The image's standard library seed, built as the image builds it (``python -m mendflow_go.warm``)."""
    target = tmp_path_factory.mktemp("go-std") / "seed"
    env = go_env(tmp_path_factory.mktemp("go-seed-home"), golangci=False)
    subprocess.run([sys.executable, "-m", "mendflow_go.warm", str(target)], env=env, check=True, timeout=1800)
    return target


@pytest.fixture(scope="session")
def go_cache(tmp_path_factory: pytest.TempPathFactory, go_std_seed: Path) -> Path:
    """One job cache for the session's Go runner tests, started as a new repository's is (from the seed); the
    first build fills the module cache and adds its own packages."""
    cache = tmp_path_factory.mktemp("go-job-cache")
    assert warm.seed(cache / "go" / "build", {warm.SEED_ENV: str(go_std_seed)})
    return cache
