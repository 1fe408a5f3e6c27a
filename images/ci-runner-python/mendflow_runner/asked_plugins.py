"""The pytest plugins a repository's tests ask for by name, where nothing it ships declares them: a fixture or a
mark that only one well-known plugin defines. An sdist often leaves out the requirement files its CI installs:
aiohttp-cors 0.8.1's tests take ``aiohttp_client`` (pytest-aiohttp) and its sdist names no test requirement, so
70 of its 99 tests errored on a fixture not found. The job installs such a plugin only where the venv lacks its
module (``deps.Installer._add_runner_tools``), so a plugin the repository declares keeps its version.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from .discovery import SKIPPED_DIRS, is_test_file

_MOCK = ("pytest_mock", "pytest-mock")
_AIOHTTP = ("pytest_aiohttp", "pytest-aiohttp")
# A fixture's name -> (the plugin's module, its distribution). Only names no other common plugin defines.
FIXTURES = {
    **dict.fromkeys(("mocker", "class_mocker", "module_mocker", "package_mocker", "session_mocker"), _MOCK),
    **dict.fromkeys(("aiohttp_client", "aiohttp_server", "aiohttp_raw_server", "aiohttp_unused_port"), _AIOHTTP),
    "httpx_mock": ("pytest_httpx", "pytest-httpx"),
    "requests_mock": ("requests_mock", "requests-mock"),
    "respx_mock": ("respx", "respx"),
    "httpserver": ("pytest_httpserver", "pytest-httpserver"),
    "benchmark": ("pytest_benchmark", "pytest-benchmark"),
    "time_machine": ("time_machine", "time-machine"),
    "fs": ("pyfakefs", "pyfakefs"),
    "datadir": ("pytest_datadir", "pytest-datadir"),
    "shared_datadir": ("pytest_datadir", "pytest-datadir"),
}
# A mark's name -> its plugin: without it, pytest runs an ``async def`` test as a coroutine it never awaits.
MARKS = {"asyncio": ("pytest_asyncio", "pytest-asyncio"), "trio": ("pytest_trio", "pytest-trio")}

_FIXTURE_NAMES = "|".join(sorted(FIXTURES))
_NAMED = re.compile(rf"\b(?:{_FIXTURE_NAMES})\b|\bmark\.(?:{'|'.join(sorted(MARKS))})\b")
_DEFINED = re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+({_FIXTURE_NAMES})[ \t]*\(", re.MULTILINE)


def asked_plugins(root: Path) -> dict[str, str]:
    """The plugins the tests under ``root`` ask for where no Python file of the repository defines that name
    itself (a conftest's own ``mocker`` fixture, a plugin module of its own): module -> distribution. Only test
    files that name one are parsed (mendflow's own 532 files: 0.3 s, most of it parsing nine test files)."""
    asked: set[str] = set()
    defined: set[str] = set()
    for path in _python_files(root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            if not _NAMED.search(text):  # most files name none
                continue
            defined.update(_DEFINED.findall(text))
            if path.name == "conftest.py" or is_test_file(path.name):
                asked |= _asked(ast.parse(text))
        except (OSError, SyntaxError, ValueError):
            continue
    return dict(FIXTURES.get(name) or MARKS[name] for name in sorted(asked - defined))


def _python_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return found


def _asked(tree: ast.AST) -> set[str]:
    """The plugin fixtures a test or a fixture takes (not a helper's parameter that shares a name), and the plugin
    marks used (``pytest.mark.asyncio``)."""
    asked: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _takes_fixtures(node):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            asked.update(a.arg for a in arguments if a.arg in FIXTURES)
        elif isinstance(node, ast.Attribute) and node.attr in MARKS and _is_pytest_mark(node.value):
            asked.add(node.attr)
    return asked


def _takes_fixtures(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test function, or a fixture (``@pytest.fixture``, ``@fixture(...)``)."""
    return node.name.startswith("test") or any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _is_pytest_mark(node: ast.expr) -> bool:
    """``pytest.mark`` (or ``mark`` imported from pytest)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "mark" and isinstance(node.value, ast.Name) and node.value.id == "pytest"
    return isinstance(node, ast.Name) and node.id == "mark"
