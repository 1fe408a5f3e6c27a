"""Which tests a repository's own command collects, said as pytest arguments.

mendflow runs every Python suite with pytest: its journal gives per-test results, and node ids let later stages
run single tests again. A repository that configures pytest is collected as it configures. One that configures
no pytest but whose tox or nox test command is ``python -m unittest`` (markdown's ``coverage run -m unittest
discover tests``) is collected by unittest's rules instead: unittest's start directory and file pattern, and
classes only where they subclass ``unittest.TestCase`` (pytest's unittest plugin collects those whatever
``python_classes`` says). Under pytest's own rules such a suite may not pass: a helper class named ``Test…``
with an ``__init__`` (markdown's ``TestSuite``) is a collection error under pytest 9, a ``test.py`` is no test
file (decorator's ``src/tests/test.py``).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from . import repo_config

DEFAULT_PATTERN = "test*.py"  # unittest's
PYTEST_FILES = ("test_*.py", "*_test.py")  # pytest's default python_files
_TEST_CASE = re.compile(r"^class\s+\w+\([^)]*TestCase\b[^)]*\)\s*:", re.MULTILINE)
SKIPPED_DIRS = {"node_modules", "venv", "__pycache__", "build", "dist", "site-packages"}


@dataclass(frozen=True)
class UnittestRules:
    """``python -m unittest discover``'s start directory and pattern, run under pytest."""

    start: str = "."
    pattern: str = DEFAULT_PATTERN

    def options(self) -> list[str]:
        """What changes pytest's collection to unittest's (also right when node ids are selected)."""
        return ["-o", f"python_files={self.pattern}", "-o", "python_classes="]

    def paths(self) -> list[str]:
        """Where a whole-suite run starts (nothing: pytest's own start, the repository)."""
        return [] if self.start == "." else [self.start]


def rules(root: Path) -> UnittestRules | None:
    """unittest's rules when the repository runs its tests with unittest, else None (pytest's own rules).

    It does when it configures no pytest and its tox or nox test command is unittest, or when it declares no
    command either and has a unittest test file only unittest's pattern finds (decorator's ``test.py``, run by
    ``unittest.main()``). Test files mendflow writes (``test_*.py``) match both patterns, so they change nothing.
    """
    if repo_config.configures_pytest(root):
        return None
    for words in repo_config.test_commands(root):
        if (found := from_command(words, root)) is not None:
            return found
    return UnittestRules() if _has_unittest_only_file(root) else None


def _has_unittest_only_file(root: Path) -> bool:
    """Whether a file unittest's pattern finds and pytest's do not defines a ``TestCase`` (walked as a collector
    walks: hidden and vendored directories left out). Importing unittest is not enough: pytest suites import
    ``unittest.mock``."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in filter(_unittest_only_name, files):
            if _TEST_CASE.search(Path(folder, name).read_text(encoding="utf-8", errors="replace")):
                return True
    return False


def _unittest_only_name(name: str) -> bool:
    return fnmatch.fnmatchcase(name, DEFAULT_PATTERN) and not any(fnmatch.fnmatchcase(name, p) for p in PYTEST_FILES)


def from_command(words: list[str], root: Path) -> UnittestRules | None:
    """The rules of a ``… -m unittest [discover] …`` command (``python``, ``coverage run`` or any wrapper)."""
    at = next((i for i in range(len(words) - 1) if words[i] == "-m" and words[i + 1] == "unittest"), None)
    if at is None:
        return None
    args = words[at + 2 :]
    if args and args[0] == "discover":
        return _discover(args[1:], root)
    if not [a for a in args if not a.startswith("-")]:  # bare `python -m unittest` discovers from "."
        return UnittestRules()
    return None  # named modules, classes or methods: unittest's loading, which no pytest rule says


def _discover(args: list[str], root: Path) -> UnittestRules | None:
    """``discover [-s START] [-p PATTERN] [-t TOP] [START [PATTERN [TOP]]]``; flags such as ``-v`` pass."""
    named: dict[str, str] = {}
    positional: list[str] = []
    words = iter(args)
    for word in words:
        option = {"-s": "start", "--start-directory": "start", "-p": "pattern", "--pattern": "pattern"}.get(word)
        if option is not None:
            named[option] = next(words, "")
        elif word in ("-t", "--top-level-directory", "-k"):
            next(words, None)
        elif not word.startswith("-"):
            positional.append(word)
    start = named.get("start") or (positional[0] if positional else ".")
    pattern = named.get("pattern") or (positional[1] if len(positional) > 1 else DEFAULT_PATTERN)
    start = _inside(start, root)
    return UnittestRules(start, pattern) if start is not None and pattern else None


def _inside(start: str, root: Path) -> str | None:
    """``start`` as a path inside the repository, normalised (``./tests/`` → ``tests``); None when outside."""
    normal = posixpath.normpath(start.replace("\\", "/"))
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        return None
    return normal if (root / normal).is_dir() else None
