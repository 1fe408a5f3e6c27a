"""bench/mine_queries.py on a real git history: the shared set's rules, one per test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import mine_queries
from tests.fixtures.repos import commit_files


def git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", "-C", str(repo), *ident, *args], check=True, capture_output=True, text=True).stdout


def commit(repo: Path, subject: str, files: dict[str, str | None]) -> None:
    commit_files(repo, dict(files), subject)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("mine") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "initial import", {f"pkg/m{i}.py": f"x = {i}\n" for i in range(5)})
    commit(repo, "Fix parsing of empty input", {"pkg/m0.py": "x = 10\n", "tests/test_m0.py": "def test(): pass\n"})
    commit(repo, "Add a test for m1", {"tests/test_m1.py": "def test(): pass\n"})
    commit(repo, "chore: bump dependencies", {"pkg/m2.py": "x = 12\n"})
    commit(repo, 'Revert "Fix parsing of empty input"', {"pkg/m0.py": "x = 0\n"})
    commit(repo, "Rename everything", {f"pkg/m{i}.py": f"y = {i}\n" for i in range(4)})
    commit(repo, "Speed up gone", {"pkg/gone.py": "z = 1\n"})
    commit(repo, "Remove gone", {"pkg/gone.py": None})
    git(repo, "switch", "-q", "-c", "side")
    commit(repo, "Side change to m3", {"pkg/m3.py": "y = 33\n"})
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch side", "side")
    git(repo, "tag", "v1")
    commit(repo, "After the tag", {"pkg/m4.py": "y = 44\n"})
    return repo


@pytest.fixture(scope="module")
def mined(history: Path) -> dict[str, object]:
    rows = mine_queries.mine(history / ".git", "v1", (".py",), (), limit=500, seed=18)
    return {str(row["query"]): row["files"] for row in rows}


def test_a_commit_keeps_its_source_files_and_not_its_tests(mined: dict[str, object]) -> None:
    assert mined["Fix parsing of empty input"] == ["pkg/m0.py"]


def test_a_commit_changing_only_tests_is_dropped(mined: dict[str, object]) -> None:
    assert "Add a test for m1" not in mined


def test_chores_and_reverts_are_dropped(mined: dict[str, object]) -> None:
    assert not {"chore: bump dependencies", 'Revert "Fix parsing of empty input"'} & mined.keys()


def test_a_commit_changing_more_than_three_source_files_is_dropped(mined: dict[str, object]) -> None:
    assert "Rename everything" not in mined and "initial import" not in mined


def test_a_file_gone_at_the_tag_drops_its_commit(mined: dict[str, object]) -> None:
    assert "Speed up gone" not in mined


def test_merges_are_dropped_and_their_commits_kept(mined: dict[str, object]) -> None:
    assert "Merge branch side" not in mined and mined["Side change to m3"] == ["pkg/m3.py"]


def test_commits_after_the_tag_are_not_mined(mined: dict[str, object]) -> None:
    assert "After the tag" not in mined


def test_the_sample_is_the_same_for_the_same_seed(history: Path) -> None:
    first = mine_queries.mine(history / ".git", "v1", (".py",), (), limit=1, seed=7)
    assert first == mine_queries.mine(history / ".git", "v1", (".py",), (), limit=1, seed=7) and len(first) == 1
