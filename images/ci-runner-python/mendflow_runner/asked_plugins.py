"""The pytest plugins and test libraries a repository's tests ask for by name, where nothing it ships declares them:
a fixture or a mark that only one well-known plugin defines, or an import of a well-known library only tests use.
An sdist often leaves out the requirement files its CI installs: aiohttp-cors 0.8.1's tests take
``aiohttp_client`` (pytest-aiohttp) and its sdist names no test requirement, so 70 of its 99 tests errored on a
fixture not found; canvasapi 3.6.0's 73 test files import ``requests_mock``, which its sdist's requirements (its
``tests_requirements.txt`` left out) never name. The job installs such a distribution only where the venv lacks
its module (``deps.Installer._add_runner_tools``), so one the repository declares keeps its version.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from pathlib import Path

from . import discovery, django_suite
from .discovery import SKIPPED_DIRS, is_test_file

_MOCK = ("pytest_mock", "pytest-mock")
_AIOHTTP = ("pytest_aiohttp", "pytest-aiohttp")
# A fixture's name -> (the plugin's module, its distribution). Only names no other common plugin defines, but for
# the ``ALTERNATIVES``.
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
# Another plugin's module that defines the same fixture: a repository that declares that one is served (pytest-base-url
# 2.1.0 declares pytest-localserver, whose `httpserver` has `serve_content`; pytest-httpserver's took its place).
ALTERNATIVES = {"pytest_httpserver": ("pytest_localserver",), "pytest_benchmark": ("pytest_codspeed",)}
# setuptools 82 dropped ``pkg_resources``, which the tests or the code they run of a package of an earlier day may
# import (jupyter-contrib-core 0.4.2's application: "No module named 'pkg_resources'"): the setuptools of that day.
OLD_SETUPTOOLS = "setuptools<82"
_PKG_RESOURCES = re.compile(r"^[ \t]*(?:import|from)[ \t]+pkg_resources\b", re.MULTILINE)
# A module the tests import -> its distribution: libraries only tests use, whose module names nothing else takes.
IMPORTS = {
    "aioresponses": "aioresponses",
    "ddt": "ddt",
    # not test-only, but the framework a Django app's tests run on, which its sdist may leave to tox's factor deps
    # (django-loginas 0.3.14, django-adminplus 0.6: `dj42: django>=4.2,<4.3`; "No module named 'django'")
    "django": "django",
    "dirty_equals": "dirty-equals",
    "flaky": "flaky",
    "freezegun": "freezegun",
    "httpretty": "httpretty",
    "hypothesis": "hypothesis",
    "inline_snapshot": "inline-snapshot",
    "mock": "mock",
    "moto": "moto",
    "parameterized": "parameterized",
    "pyfakefs": "pyfakefs",
    "pytest_asyncio": "pytest-asyncio",
    "pytest_cases": "pytest-cases",
    "pytest_httpserver": "pytest-httpserver",
    "pytest_httpx": "pytest-httpx",
    "pytest_mock": "pytest-mock",
    "requests_mock": "requests-mock",
    "responses": "responses",
    "respx": "respx",
    "syrupy": "syrupy",
    "testfixtures": "testfixtures",
    "time_machine": "time-machine",
    "trustme": "trustme",
    "vcr": "vcrpy",
}
# A mark's name -> its plugin: without it, pytest runs an ``async def`` test as a coroutine it never awaits, or
# stops at a mark it does not know under ``--strict-markers`` (zict 3.0.0's ``repeat``: 6 modules errored).
MARKS = {
    "asyncio": ("pytest_asyncio", "pytest-asyncio"),
    "trio": ("pytest_trio", "pytest-trio"),
    "repeat": ("pytest_repeat", "pytest-repeat"),
    "order": ("pytest_order", "pytest-order"),
    "timeout": ("pytest_timeout", "pytest-timeout"),
    "django_db": ("pytest_django", "pytest-django"),
}

_FIXTURE_NAMES = "|".join(sorted(FIXTURES))
_IMPORTED = rf"^[ \t]*(?:import|from)[ \t]+(?:{'|'.join(sorted(IMPORTS))})\b"
_NAMED = re.compile(rf"\b(?:{_FIXTURE_NAMES})\b|\bmark\.(?:{'|'.join(sorted(MARKS))})\b|{_IMPORTED}", re.MULTILINE)
_DEFINED = re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+({_FIXTURE_NAMES})[ \t]*\(", re.MULTILINE)


def asked_plugins(root: Path) -> dict[str, str]:
    """What the tests under ``root`` ask for where the repository does not define that name itself (a
    conftest's own ``mocker`` fixture, a ``mock.py`` of its own): module -> distribution, and ``pkg_resources`` ->
    ``OLD_SETUPTOOLS`` where any of its files imports it. Only test files that
    name one are parsed (mendflow's own 532 files: 0.3 s, most of it parsing nine test files)."""
    asked: set[str] = set()  # fixtures and marks
    imported: set[str] = set()
    defined: set[str] = set()
    modules: set[str] = set()  # the repository's own module names, which its imports of that name find
    for path in _python_files(root):
        modules.add(path.parent.name if path.name == "__init__.py" else path.stem)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            if _PKG_RESOURCES.search(text):  # any file's: the tests run the package's code too
                imported.add("pkg_resources")
            if not _NAMED.search(text):  # most files name none
                continue
            defined.update(_DEFINED.findall(text))
            if path.name == "conftest.py" or is_test_file(path.name):
                tree = ast.parse(text)
                asked |= _asked(tree)
                imported |= _imported(tree)
        except (OSError, SyntaxError, ValueError):
            continue
    found = {FIXTURES.get(name) or MARKS[name] for name in asked - defined}
    found |= {django_suite.PLUGIN} if discovery.django(root) is not None else set()
    libraries = {**IMPORTS, "pkg_resources": OLD_SETUPTOOLS}
    return dict(sorted(found | {(name, libraries[name]) for name in imported - modules}))


def imported_unconditionally(root: Path, modules: set[str]) -> set[str]:
    """Those of ``modules`` a conftest.py or a test file imports at module level, outside any ``try`` (an import
    the tests can do without is guarded so): without it that file stops at collection. Only files that name one
    on an import line are parsed."""
    if not modules:
        return set()
    named = re.compile(rf"^(?:import|from)[ \t]+({'|'.join(map(re.escape, sorted(modules)))})\b", re.MULTILINE)
    found: set[str] = set()
    for path in _python_files(root):
        if path.name != "conftest.py" and not is_test_file(path.name):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            if set(named.findall(text)) - found:
                found |= _import_tops(ast.parse(text).body) & modules
        except (OSError, SyntaxError, ValueError):
            continue
    return found


def _import_tops(nodes: Iterable[ast.AST]) -> set[str]:
    """The top packages the absolute imports among ``nodes`` name."""
    tops: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            tops.add(node.module.split(".")[0])
    return tops


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


def _imported(tree: ast.AST) -> set[str]:
    """The test libraries imported, absolutely (``from . import mock`` is the repository's own)."""
    return _import_tops(ast.walk(tree)) & IMPORTS.keys()


def _takes_fixtures(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test function, or a fixture (``@pytest.fixture``, ``@fixture(...)``)."""
    return node.name.startswith("test") or any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _is_pytest_mark(node: ast.expr) -> bool:
    """``pytest.mark`` (or ``mark`` imported from pytest)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "mark" and isinstance(node.value, ast.Name) and node.value.id == "pytest"
    return isinstance(node, ast.Name) and node.id == "mark"
