"""Committing kept tests with pygit2: on the spec branch, idempotent, never stacking attempts."""

from __future__ import annotations

import pygit2

from mendflow.gitops import commit_files
from tests.fixtures.repos import RepoFactory


def test_same_files_give_the_same_commit(make_repo: RepoFactory) -> None:
    path = make_repo({"a.py": "x = 1\n"})
    repo = pygit2.Repository(str(path))
    parent = str(repo.head.target)

    first = commit_files(repo, parent, "agt/testbuilder/ts-1", {"tests/test_a.py": "def test_a(): pass\n"}, "m")
    second = commit_files(repo, parent, "agt/testbuilder/ts-1", {"tests/test_a.py": "def test_a(): pass\n"}, "m")

    assert first == second
    assert str(repo.head.target) == parent  # the checked-out branch and work tree are untouched


def test_new_files_replace_the_earlier_attempt_instead_of_stacking(make_repo: RepoFactory) -> None:
    path = make_repo({"a.py": "x = 1\n"})
    repo = pygit2.Repository(str(path))
    parent = str(repo.head.target)
    commit_files(repo, parent, "agt/testbuilder/ts-1", {"tests/test_a.py": "def test_a(): pass\n"}, "m")

    sha = commit_files(repo, parent, "agt/testbuilder/ts-1", {"tests/test_a.py": "def test_b(): pass\n"}, "m")

    tip = repo.branches.local["agt/testbuilder/ts-1"].peel(pygit2.Commit)
    assert str(tip.id) == sha and [str(p.id) for p in tip.parents] == [parent]


def test_a_file_given_as_none_is_removed(make_repo: RepoFactory) -> None:
    path = make_repo({"a.py": "x = 1\n", "tests/test_a_mendflow.py": "def test_a(): pass\n"})
    repo = pygit2.Repository(str(path))

    sha = commit_files(repo, str(repo.head.target), "agt/testbuilder/ts-1", {"tests/test_a_mendflow.py": None}, "m")

    assert [e.name for e in repo[sha].peel(pygit2.Commit).tree] == ["a.py"]
