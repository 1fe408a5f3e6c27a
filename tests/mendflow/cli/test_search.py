"""``mendflow grep`` and ``mendflow search`` as real subprocesses on a real repository and embedded index."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from rag_indexer.store.embedded_read import SCHEMA_VERSION
from tests.fixtures.repos import RepoFactory

FILES = {
    "pkg/calc.py": (
        "class Calculator:\n"
        "    def divide(self, a, b):\n"
        "        if b == 0:\n"
        '            raise ZeroDivisionError("b is zero")\n'
        "        return a / b\n"
    ),
    "pkg/util.py": "def parse(text):\n    # zerodivisionerror is not raised here\n    return float(text)\n",
    "README.md": "# calc\n",
}


def run_cli(args: list[str], state_dir: Path, cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(state_dir)}
    code = "import sys; sys.argv[0] = 'mendflow'; from mendflow.cli import main; main()"
    return subprocess.run(
        [sys.executable, *flags, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def repo(make_repo: RepoFactory) -> Path:
    path = make_repo(dict(FILES), name="calc")
    pygit2.Repository(str(path)).config["mendflow.repoid"] = "acme/calc"
    return path


@pytest.fixture
def state_dir(tmp_path: Path, repo: Path) -> Path:
    state = tmp_path / "state"
    indexed = run_cli(["index", str(repo)], state, repo)
    assert indexed.returncode == 0, indexed.stderr
    return state


def test_grep_prints_path_line_and_text_of_each_match(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "ZeroDivisionError"], state_dir, repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'pkg/calc.py:4:            raise ZeroDivisionError("b is zero")\n'


def test_grep_ignore_case_matches_any_case(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "-i", "ZERODIVISIONERROR"], state_dir, repo)
    assert [line.split(":")[:2] for line in result.stdout.splitlines()] == [["pkg/calc.py", "4"], ["pkg/util.py", "2"]]


def test_grep_regex_matches_a_pattern(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "--regex", r"def \w+\(self"], state_dir, repo)
    assert result.stdout == "pkg/calc.py:2:    def divide(self, a, b):\n"


def test_grep_selects_the_repository_by_its_identity(repo: Path, state_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(["grep", "float", "--repo", "acme/calc"], state_dir, elsewhere)
    assert result.stdout == "pkg/util.py:3:    return float(text)\n"


def test_grep_without_a_match_exits_1_silently(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "no such text"], state_dir, repo)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")


def test_grep_outside_an_indexed_repository_is_a_one_line_error(state_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(["grep", "float"], state_dir, elsewhere)
    assert result.returncode == 2
    assert "no indexed repository" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_grep_bad_regex_is_a_one_line_error(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "--regex", "(unclosed"], state_dir, repo)
    assert result.returncode == 2
    assert "bad regular expression" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_grep_of_a_ref_not_indexed_is_a_one_line_error(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "float", "--ref", "release"], state_dir, repo)
    assert result.returncode == 2
    assert "ref 'release' of acme/calc is not indexed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_grep_migrates_an_index_of_an_older_schema_and_answers(repo: Path, state_dir: Path) -> None:
    """The read-only path leaves an index it cannot read to the full store, which brings it up to date."""
    database = state_dir / "index" / "index.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    result = run_cli(["grep", "ZeroDivisionError"], state_dir, repo)
    assert result.stdout == 'pkg/calc.py:4:            raise ZeroDivisionError("b is zero")\n'
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)


def test_grep_finds_a_work_tree_whose_identity_needs_pygit2(make_repo: RepoFactory, tmp_path: Path) -> None:
    """An origin URL behind ``url.*.insteadOf``: the git command reads it raw, so grep asks the full index."""
    work_tree = make_repo(dict(FILES), name="rewritten")
    config = pygit2.Repository(str(work_tree)).config
    config["url.https://github.com/.insteadOf"] = "hub:"
    pygit2.Repository(str(work_tree)).remotes.create("origin", "hub:acme/rewritten")
    state = tmp_path / "state"
    assert run_cli(["index", str(work_tree)], state, work_tree).returncode == 0
    result = run_cli(["grep", "float"], state, work_tree)
    assert result.stdout == "pkg/util.py:3:    return float(text)\n", result.stderr


def test_search_files_lists_each_file_once(repo: Path, state_dir: Path) -> None:
    result = run_cli(["search", "divide parse", "--files", "--json"], state_dir, repo)
    assert result.returncode == 0, result.stderr
    paths = [hit["path"] for hit in json.loads(result.stdout)]
    assert len(set(paths)) == len(paths) and sorted(paths[:2]) == ["pkg/calc.py", "pkg/util.py"]


# What a query never needs: the flows' Prefect, the full settings, typer (query.py parses its own arguments),
# numpy (vectors only), pygit2 (the work tree's identity comes from the git command).
NOT_FOR_QUERIES = ("prefect", "pydantic_settings", "typer", "numpy", "pygit2")


def imported_by(args: list[str], state_dir: Path, cwd: Path) -> set[str]:
    result = run_cli(args, state_dir, cwd, "-X", "importtime")
    assert result.returncode == 0, result.stderr
    return {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}


@pytest.mark.parametrize("args", [["grep", "float"], ["search", "divide"]])
def test_search_and_grep_import_only_what_a_query_needs(args: list[str], repo: Path, state_dir: Path) -> None:
    assert not {m for m in imported_by(args, state_dir, repo) if m.split(".")[0] in NOT_FOR_QUERIES}


def test_grep_on_the_embedded_index_imports_no_models(repo: Path, state_dir: Path) -> None:
    """pydantic and the index's models cost ~60 ms, more than the rest of a grep on SymPy."""
    imported = imported_by(["grep", "float"], state_dir, repo)
    assert not {m for m in imported if m.split(".")[0] == "pydantic" or m == "rag_indexer.models"}


def wait_for_pack(state_dir: Path) -> Path:
    """The grep pack a first grep had built in the background."""
    packs = state_dir / "index" / "grep" / "packs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if found := sorted(packs.glob("*.pack")) if packs.is_dir() else []:
            return found[0]
        time.sleep(0.05)
    pytest.fail("no grep pack was built within 60 s")


@pytest.mark.parametrize(
    "args",
    [
        ["grep", "ZeroDivisionError"],
        ["grep", "-i", "ZERODIVISIONERROR"],
        ["grep", "--regex", r"def \w+\(self"],
        ["grep", "--path", "pkg/u", "float"],
        ["grep", "float", "--ref", "HEAD"],
        ["grep", "--", "ZeroDivisionError"],
    ],
)
def test_a_second_grep_answers_from_the_pack_alike_without_the_index(
    args: list[str], repo: Path, state_dir: Path
) -> None:
    first = run_cli(args, state_dir, repo)
    wait_for_pack(state_dir)
    imported = imported_by(args, state_dir, repo)
    again = run_cli(args, state_dir, repo)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert "sqlite3" not in imported


def test_a_grep_by_identity_answers_from_the_pack(repo: Path, state_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_cli(["grep", "float", "--repo", "acme/calc"], state_dir, elsewhere)
    wait_for_pack(state_dir)
    assert "sqlite3" not in imported_by(["grep", "float", "--repo", "acme/calc"], state_dir, elsewhere)
    result = run_cli(["grep", "float", "--repo", "acme/calc"], state_dir, elsewhere)
    assert result.stdout == "pkg/util.py:3:    return float(text)\n"


def test_a_literal_grep_from_a_pack_imports_only_what_it_reads(repo: Path, state_dir: Path) -> None:
    """Python's start and ``re`` alone take ~13 ms of rg's ~14 ms on SymPy: a literal grep does without."""
    run_cli(["grep", "float"], state_dir, repo)
    wait_for_pack(state_dir)
    imported = imported_by(["grep", "float"], state_dir, repo)
    assert not imported & {"re", "typing", "sqlite3", "argparse", "pathlib", "subprocess", "json", "enum"}


def test_a_regex_grep_from_a_pack_compiles_without_importing_re(repo: Path, state_dir: Path) -> None:
    """``import re`` costs ~4 ms (its flag enum); its parser and compiler need none of that (re_core)."""
    args = ["grep", "--regex", r"def \w+\(te"]
    run_cli(args, state_dir, repo)
    wait_for_pack(state_dir)
    imported = imported_by(args, state_dir, repo)
    assert "_re_core._compiler" in imported and not imported & {"re", "enum", "functools", "importlib"}


def test_a_grep_after_a_reindex_finds_the_new_text_not_the_old_pack(repo: Path, state_dir: Path) -> None:
    run_cli(["grep", "float"], state_dir, repo)
    wait_for_pack(state_dir)
    (repo / "pkg" / "util.py").write_text("def parse(text):\n    return int(text)\n")
    subprocess.run(["git", "commit", "-qam", "int, not float"], cwd=repo, check=True)
    assert run_cli(["index", str(repo)], state_dir, repo).returncode == 0
    assert run_cli(["grep", "float"], state_dir, repo).returncode == 1
    assert run_cli(["grep", "int"], state_dir, repo).stdout == "pkg/util.py:2:    return int(text)\n"


def test_a_bad_regex_is_a_one_line_error_with_a_pack_too(repo: Path, state_dir: Path) -> None:
    run_cli(["grep", "float"], state_dir, repo)
    wait_for_pack(state_dir)
    result = run_cli(["grep", "--regex", "(unclosed"], state_dir, repo)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_grep_help_says_its_options(repo: Path, state_dir: Path) -> None:
    result = run_cli(["grep", "--help"], state_dir, repo)
    assert result.returncode == 0, result.stderr
    assert "--ignore-case" in result.stdout and "--regex" in result.stdout


def test_the_command_list_names_search_and_grep(repo: Path, state_dir: Path) -> None:
    result = run_cli(["--help"], state_dir, repo)
    assert "grep" in result.stdout and "search" in result.stdout
