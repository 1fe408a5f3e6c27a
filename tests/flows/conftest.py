from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from tests.fixtures.repos import commit_files

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "calc"


@pytest.fixture
def calc_repo(tmp_path: Path) -> Path:
    """A git copy of the shipped example, on branch main."""
    repo = tmp_path / "calc"
    shutil.copytree(EXAMPLE, repo)
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, {}, "calc: initial import")
    return repo
