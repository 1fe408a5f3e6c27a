"""Pushing a merged branch back to the repository it came from: fast-forward only."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from mendflow.gitops import MergeError, push_branch
from tests.fixtures.repos import RepoFactory, commit_files


def clone_pair(make_repo: RepoFactory, tmp_path: Path) -> tuple[pygit2.Repository, pygit2.Repository, Path]:
    """A bare 'origin' and a clone of it, with a work tree to commit in."""
    work = make_repo({"a.txt": "1\n"}, name="work")
    origin = pygit2.clone_repository(work.as_uri(), str(tmp_path / "origin.git"), bare=True)
    clone = pygit2.clone_repository(origin.path, str(tmp_path / "clone"))
    return origin, clone, tmp_path / "clone"


def test_a_fast_forward_push_moves_the_remote_branch(make_repo: RepoFactory, tmp_path: Path) -> None:
    origin, clone, path = clone_pair(make_repo, tmp_path)
    new = commit_files(path, {"b.txt": "2\n"})
    push_branch(clone, "main", force=False)
    assert str(origin.branches.local["main"].target) == new


def test_a_branch_that_moved_on_the_remote_is_never_overwritten(make_repo: RepoFactory, tmp_path: Path) -> None:
    origin, clone, path = clone_pair(make_repo, tmp_path)
    other = pygit2.clone_repository(origin.path, str(tmp_path / "other"))
    moved = commit_files(tmp_path / "other", {"c.txt": "3\n"})
    push_branch(other, "main", force=False)
    commit_files(path, {"b.txt": "2\n"})
    with pytest.raises(MergeError, match="cannot push main to origin"):
        push_branch(clone, "main", force=False)
    assert str(origin.branches.local["main"].target) == moved
