"""The version a commit's tags give it, as setuptools-scm's default scheme says (``mendflow.gitversion``)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from mendflow.gitversion import version_of
from tests.fixtures.repos import commit_files, new_repo


def _tagged(tmp_path: Path, tag: str) -> tuple[pygit2.Repository, str]:
    path = new_repo(tmp_path / "r", {"a.txt": "1"})
    repo = pygit2.Repository(str(path))
    repo.references.create(f"refs/tags/{tag}", repo.head.target)
    return repo, str(repo.head.target)


@pytest.mark.parametrize(("tag", "version"), [("v1.2.3", "1.2.3"), ("1.0", "1.0"), ("release-2.0.1", "2.0.1")])
def test_a_tagged_commit_is_its_tags_version(tmp_path: Path, tag: str, version: str) -> None:
    repo, sha = _tagged(tmp_path, tag)
    assert version_of(repo, sha) == version


def test_a_commit_after_a_tag_is_the_next_patchs_development_version(tmp_path: Path) -> None:
    repo, _ = _tagged(tmp_path, "v1.2.3")
    commit_files(tmp_path / "r", {"a.txt": "2"})
    commit_files(tmp_path / "r", {"a.txt": "3"})
    sha = str(repo.head.target)
    assert version_of(repo, sha) == f"1.2.4.dev2+g{sha[:7]}"


def test_a_history_without_a_version_tag_counts_its_commits(tmp_path: Path) -> None:
    repo, _ = _tagged(tmp_path, "latest")
    commit_files(tmp_path / "r", {"a.txt": "2"})
    sha = str(repo.head.target)
    assert version_of(repo, sha) == f"0.1.dev2+g{sha[:7]}"
