"""Names a commit took away from a module, and their new homes found through the real embedded code index."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from mendflow.heal.changes import commit_changes
from mendflow.heal.symbols import index_moves, lost_names, with_moves
from mendflow.settings import get_settings
from rag_indexer.api import open_index
from tests.fixtures.repos import commit_files

pytestmark = pytest.mark.usefixtures("mendflow_env")

CORE = "def area(width, height):\n    return width * height\n"


def moves_after(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    """The index-found moves of a two-commit repository, described."""
    path = tmp_path / "repo"
    pygit2.init_repository(str(path), initial_head="main")
    parent = commit_files(path, dict(before), "before")
    commit = commit_files(path, dict(after), "after")
    repo = pygit2.Repository(str(path))
    changes = commit_changes(path, parent, commit)
    with open_index(get_settings(), repo="acme/shapes", ref=commit) as index:
        index.index(path, commit, repo_id="acme/shapes")
        moves = index_moves(repo, lost_names(repo, changes), index.definitions_of)
    return [m.describe() for m in with_moves(changes, moves).moves]


def test_a_dropped_reexport_is_followed_to_where_the_function_lives(tmp_path: Path) -> None:
    got = moves_after(
        tmp_path,
        {"shapes/__init__.py": "from shapes.core import area\n", "shapes/core.py": CORE},
        {"shapes/__init__.py": '"""Shapes."""\n'},
    )
    assert got == ["shapes.area moved to shapes.core.area (found in the code index)"]


def test_a_relative_reexport_is_followed_through_a_second_hop(tmp_path: Path) -> None:
    got = moves_after(
        tmp_path,
        {
            "src/shapes/__init__.py": "from .api import area\n",
            "src/shapes/api.py": "from ._core import area\n",
            "src/shapes/_core.py": CORE,
        },
        {"src/shapes/__init__.py": ""},
    )
    assert got == ["shapes.area moved to shapes._core.area (found in the code index)"]


def test_a_deleted_duplicate_points_at_the_identical_definition_left(tmp_path: Path) -> None:
    got = moves_after(tmp_path, {"geometry.py": CORE, "shapes.py": CORE}, {"shapes.py": "PI = 3.14\n"})
    assert got == ["shapes.area moved to geometry.area (found in the code index)"]


def test_a_definition_with_another_body_is_not_a_new_home(tmp_path: Path) -> None:
    other = CORE.replace("width * height", "width * height / 2")
    got = moves_after(tmp_path, {"geometry.py": other, "shapes.py": CORE}, {"shapes.py": "PI = 3.14\n"})
    assert got == []


def test_two_identical_homes_are_ambiguous(tmp_path: Path) -> None:
    before = {"a.py": CORE, "b.py": CORE, "shapes/__init__.py": "from a import area\n"}
    got = moves_after(tmp_path, before, {"shapes/__init__.py": ""})
    assert got == []  # a.area was re-exported, but b.area is the same code: no guess


def test_a_definition_in_test_code_is_not_a_home(tmp_path: Path) -> None:
    before = {"tests/test_helpers.py": CORE, "shapes.py": CORE}
    assert moves_after(tmp_path, before, {"shapes.py": "PI = 3.14\n"}) == []


def test_a_name_still_bound_under_a_try_is_not_lost(tmp_path: Path) -> None:
    after = "try:\n    from shapes.core import area\nexcept ImportError:\n    area = None\n"
    got = moves_after(
        tmp_path,
        {"shapes/__init__.py": "from shapes.core import area\n", "shapes/core.py": CORE},
        {"shapes/__init__.py": after},
    )
    assert got == []


def test_a_move_the_diff_already_saw_is_not_repeated(tmp_path: Path) -> None:
    got = moves_after(tmp_path, {"shapes.py": CORE}, {"shapes.py": "", "geometry.py": CORE})
    assert got == ["shapes.area moved to geometry.area"]
