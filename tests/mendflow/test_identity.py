"""Repository identity: owner/name from the configured id, the clone URL or origin, else local/<dir>."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from mendflow.errors import InputError
from mendflow.identity import CONFIGURED_ID_KEY, hosted_path, normalize, repo_id, work_tree_id
from tests.fixtures.repos import RepoFactory

FILES = {"README.md": "demo\n"}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/acme/calc.git", "acme/calc"),
        ("https://token@github.com/acme/calc", "acme/calc"),
        ("git@github.com:acme/calc.git", "acme/calc"),
        ("ssh://git@gitlab.example/grp/sub/calc.git", "grp/sub/calc"),
        ("https://git.example/calc.git", "git.example/calc"),
    ],
)
def test_hosted_urls_give_their_path(url: str, expected: str) -> None:
    assert hosted_path(url) == expected


@pytest.mark.parametrize("url", ["/srv/git/calc.git", "file:///srv/git/calc.git", "relative/calc"])
def test_local_paths_are_not_hosted(url: str) -> None:
    assert hosted_path(url) is None


def test_origin_remote_names_a_local_checkout(make_repo: RepoFactory) -> None:
    repo = pygit2.Repository(str(make_repo(FILES, name="app")))
    repo.remotes.create("origin", "https://github.com/acme/app.git")
    assert repo_id(repo) == "acme/app"


def test_two_checkouts_named_app_of_different_owners_differ(tmp_path: Path) -> None:
    first = pygit2.init_repository(str(tmp_path / "one" / "app"))
    first.remotes.create("origin", "git@github.com:acme/app.git")
    second = pygit2.init_repository(str(tmp_path / "two" / "app"))
    second.remotes.create("origin", "git@github.com:other/app.git")
    assert (repo_id(first), repo_id(second)) == ("acme/app", "other/app")


def test_configured_id_wins(make_repo: RepoFactory) -> None:
    repo = pygit2.Repository(str(make_repo(FILES, name="app")))
    repo.remotes.create("origin", "https://github.com/acme/app.git")
    repo.config[CONFIGURED_ID_KEY] = "platform/app-mirror"
    assert repo_id(repo) == "platform/app-mirror"


def test_a_repo_without_remote_is_local(make_repo: RepoFactory) -> None:
    assert repo_id(pygit2.Repository(str(make_repo(FILES, name="calc")))) == "local/calc"


@pytest.mark.parametrize("bad", ["calc", "", "/", "a/../b/.."])
def test_an_id_needs_owner_and_name(bad: str) -> None:
    with pytest.raises(InputError, match="is not a repository id"):
        normalize(bad)


def test_the_git_command_reads_the_same_identity_as_pygit2(make_repo: RepoFactory) -> None:
    path = make_repo({**FILES, "pkg/mod.py": "x = 1\n"}, name="app")
    repo = pygit2.Repository(str(path))
    assert work_tree_id(path / "pkg") == repo_id(repo) == "local/app"
    repo.remotes.create("origin", "git@github.com:acme/app.git")
    assert work_tree_id(path / "pkg") == repo_id(repo) == "acme/app"
    repo.config[CONFIGURED_ID_KEY] = "platform/app-mirror"
    assert work_tree_id(path) == repo_id(repo) == "platform/app-mirror"


def test_no_work_tree_has_no_identity(tmp_path: Path) -> None:
    assert work_tree_id(tmp_path) is None
