"""The real-repositories benchmark's half-removed protocol on tiny repos."""

from __future__ import annotations

from pathlib import Path

import pygit2

from bench.real_repos import remove_half
from tests.fixtures.repos import RepoFactory, commit_files

SINGLE = """\
import os
import sys


def test_one():
    assert os.sep


def test_two():
    assert sys.argv


def test_three():
    pass
"""


def test_every_second_test_file_goes_except_one_a_remaining_file_imports(make_repo: RepoFactory) -> None:
    files = {
        "tests/__init__.py": "",
        "tests/test_a.py": "from .test_b import helper\n\n\ndef test_a():\n    assert helper()\n",
        "tests/test_b.py": "def helper():\n    return 1\n\n\ndef test_b():\n    pass\n",
        "tests/test_c.py": "def test_c():\n    pass\n",
        "tests/test_d.py": "def test_d():\n    pass\n",
    }
    repo = make_repo(files)
    assert remove_half(repo) == "1 of 4 test files"
    assert sorted(p.name for p in (repo / "tests").glob("test_*.py")) == ["test_a.py", "test_b.py", "test_c.py"]


def test_a_single_file_suite_loses_every_second_test_and_the_imports_only_they_used(make_repo: RepoFactory) -> None:
    repo = make_repo({"test_single.py": SINGLE})
    assert remove_half(repo) == "1 of 3 tests in test_single.py"
    text = (repo / "test_single.py").read_text()
    assert "def test_two" not in text and "import sys" not in text and "def test_three" in text


GUARDED = """\
import os

try:
    from unittest.mock import Mock
except ImportError:
    from mock import Mock


def test_one():
    assert os.sep


def test_two():
    assert Mock()
"""


def test_a_guarded_import_only_removed_tests_used_goes_too(make_repo: RepoFactory) -> None:
    repo = make_repo({"test_single.py": GUARDED})
    assert remove_half(repo) == "1 of 2 tests in test_single.py"
    text = (repo / "test_single.py").read_text()
    assert "Mock" not in text and "try:" not in text and "import os" in text


def test_a_published_file_the_packages_gitignore_names_is_committed_as_shipped(tmp_path: Path) -> None:
    # cyclopts 5.5.2's sdist ships README.md, which its own .gitignore (`/*.md`) names.
    pygit2.init_repository(str(tmp_path), initial_head="main")
    commit_files(tmp_path, {".gitignore": "/*.md\n", "README.md": "# x\n"}, "as published", ignored_too=True)
    assert sorted(entry.path for entry in pygit2.Repository(str(tmp_path)).index) == [".gitignore", "README.md"]
