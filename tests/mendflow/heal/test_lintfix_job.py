"""``fix_lint`` end to end: a real git repository, the real CI runner in fix mode in the local sandbox, a real
file store. The repo's own ruff config decides what is fixed; formatting only when the repo chose ruff."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow import source as sources
from mendflow.heal.lintfix import LintFix, fix_lint
from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings
from mendflow.store.file import FileStore
from tests.fixtures.repos import RepoFactory

pytestmark = pytest.mark.slow

TEST = "tests/test_calc.py"
CALC = "def add(a, b):\n    return a + b\n"
UNTIDY = "import os\nfrom calc import add\ndef test_add( ):\n    assert add(1,2)==3\n"
RUFF_CONFIG = '[project]\nname = "calc"\nversion = "0"\n\n[tool.ruff.lint]\nselect = ["E", "F", "I"]\n'


def _fix(tmp_path: Path, repo: Path, paths: list[str]) -> LintFix:
    settings = Settings(_env_file=None, state_dir=tmp_path / "state", cache_dir=tmp_path / "cache")
    store = FileStore(tmp_path / "store")
    source = sources.resolve(str(repo), None, None, store, settings)
    return fix_lint(source, paths, "B1", store=store, launcher=LocalLauncher(settings), settings=settings)


def test_a_test_file_is_fixed_and_formatted_by_the_repos_ruff_config(tmp_path: Path, make_repo: RepoFactory) -> None:
    repo = make_repo({"pyproject.toml": RUFF_CONFIG, "calc.py": CALC, TEST: UNTIDY})
    fix = _fix(tmp_path, repo, [TEST])
    assert fix.fixed == {TEST: "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
    assert fix.clean


def test_without_a_ruff_config_only_bug_level_rules_are_fixed_and_nothing_is_formatted(
    tmp_path: Path, make_repo: RepoFactory
) -> None:
    repo = make_repo({"pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n', "calc.py": CALC, TEST: UNTIDY})
    fix = _fix(tmp_path, repo, [TEST])
    assert fix.fixed == {TEST: "from calc import add\ndef test_add( ):\n    assert add(1,2)==3\n"}


def test_a_finding_no_safe_fix_removes_is_left_and_reported(tmp_path: Path, make_repo: RepoFactory) -> None:
    long_line = 'def test_long():\n    assert "' + "x" * 130 + '"\n'  # formatted already, and no fix shortens it
    repo = make_repo({"pyproject.toml": RUFF_CONFIG, TEST: long_line})
    fix = _fix(tmp_path, repo, [TEST])
    assert fix.fixed == {} and [f.split(" ")[1] for f in fix.remaining[TEST]] == ["E501"]
