"""The heal benchmark's case generator on a tiny library: a rename case breaks the tests its parent passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.heal_corpus import Library, Project, build_library, init_repo, is_test_path, run_tests

CORE = """\
def shout(text, punctuation="!"):
    return text.upper() + punctuation


def greet(name):
    return shout(f"hello {name}")
"""
INIT = "from .core import greet, shout\n\n__all__ = ['greet', 'shout']\n"
TESTS = """\
from tinylib import greet
from tinylib.core import shout


def test_shout():
    assert shout("hi", punctuation="?") == "HI?"


def test_greet():
    assert greet("bob") == "HELLO BOB!"
"""


def make_library(root: Path) -> Path:
    (root / "tinylib").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tinylib" / "__init__.py").write_text(INIT)
    (root / "tinylib" / "core.py").write_text(CORE)
    (root / "tests" / "test_core.py").write_text(TESTS)
    init_repo(root, "tinylib as shipped")
    return root


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_a_rename_case_fails_where_its_parent_passes(tmp_path: Path) -> None:
    lib = Library("tinylib", "0", ("tinylib",))
    base = make_library(tmp_path / "tinylib")
    project = Project(base, lib)
    assert set(project.modules) == {"tinylib", "tinylib.core"}
    assert project.usage.calls["shout"] == [(1, frozenset({"punctuation"}))]

    result = build_library(lib, base, tmp_path / "out", sys.executable, per_library=1, categories=("rename",))

    assert result.error == "" and result.baseline and result.baseline.returncode == 0
    [case] = result.cases
    assert case.category == "rename" and case.failing_tests
    changed = git(case.repo, "diff", "--name-only", case.parent_sha, case.commit_sha).splitlines()
    assert changed and not any(is_test_path(p) for p in changed)
    assert git(case.repo, "rev-parse", "HEAD") == case.commit_sha
    old = case.symbol.rsplit(".", 1)[1]
    diff = git(case.repo, "diff", case.parent_sha, case.commit_sha)
    assert f"-def {old}(" in diff and f"'{old}'" not in git(case.repo, "show", "HEAD:tinylib/__init__.py")

    at_case = run_tests(Path(case.repo), sys.executable, lib)
    assert at_case.returncode == 1 and at_case.failing == case.failing_tests
    git(case.repo, "checkout", "-q", case.parent_sha)
    at_parent = run_tests(Path(case.repo), sys.executable, lib)
    assert at_parent.returncode == 0 and at_parent.failing == []


def test_a_reexport_case_drops_the_package_import_and_keeps_the_definition(tmp_path: Path) -> None:
    lib = Library("tinylib", "0", ("tinylib",))
    base = make_library(tmp_path / "tinylib")

    result = build_library(lib, base, tmp_path / "out", sys.executable, per_library=1, categories=("reexport",))

    [case] = result.cases
    assert case.category == "reexport" and case.symbol == "tinylib.greet"
    assert git(case.repo, "diff", "--name-only", case.parent_sha, case.commit_sha).splitlines() == [
        "tinylib/__init__.py"
    ]
    init = git(case.repo, "show", "HEAD:tinylib/__init__.py")
    assert "greet" not in init and "from .core import shout" in init
    assert git(case.repo, "show", "HEAD:tinylib/core.py") == CORE.strip()
    assert case.failing_tests == ["tests/test_core.py"]  # the import fails, so the whole file does
