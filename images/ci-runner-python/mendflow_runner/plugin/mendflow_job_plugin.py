"""pytest plugin the runner loads into the repo's pytest (``-p mendflow_job_plugin``).

When ``MENDFLOW_TEST_CONTEXTS`` is set (the test builder's coverage gate), it switches coverage.py's dynamic
context to the pytest node id around each test, so coverage data says which test ran which line. A build does
not ask: on a suite of 40,000 parametrised tests (packaging) the contexts alone made a report of 200 MB. It
always journals how many tests were collected, then each test's start and
outcome, to the file named by ``MENDFLOW_PYTEST_EVENTS``: a suite killed mid-test still tells which test was
running, and the runner reads the journal as it grows to print how many tests are through.

For each failure it also journals what a person (or the healer) needs to act on it: on the failed report, the
text pytest prints (cut to ``TEXT_MAX`` bytes, its end kept), its crash line and the test's own location; when
pytest hands the exception over (``pytest_exception_interact``), the exception's class, its first line and the
deepest traceback frame inside the repository. Paths under the repository are written relative to it.
Stdlib + pytest + coverage only; it lives outside the package so the repo's venv can import it alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import traceback
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import coverage
except ImportError:  # pragma: no cover - the runner installs coverage
    coverage = None  # type: ignore[assignment]

# The data file the runner names for the measuring coverage.py, which took it as it started: the tests' own
# coverage commands find none, as on a developer's machine (beartype 0.23.1's test runs `coverage run` and
# `coverage report` in a temp dir; the report combined the runner's data files there, and deleted them). A
# subprocess coverage.py measures (``[run] patch = subprocess``) has the name in the configuration it is handed.
os.environ.pop("COVERAGE_FILE", None)

# The tests see the command line of the `pytest` their CI runs: under `coverage run -m pytest`, sys.argv[0] is
# pytest's __main__.py, and argparse names its program after it (typed-argument-parser 1.12.0: 46 tests expect
# "usage: pytest").
if Path(sys.argv[0]).name == "__main__.py" and Path(sys.argv[0]).parent.name == "pytest":
    sys.argv[0] = os.path.join(os.path.dirname(sys.executable), "pytest")

_EVENTS = os.environ.get("MENDFLOW_PYTEST_EVENTS", "")
_CONTEXTS = bool(os.environ.get("MENDFLOW_TEST_CONTEXTS"))  # testing.CONTEXTS_VARIABLE (stdlib only here)
TEXT_MAX = 4096  # bytes of a failure's text kept (its end: the error is there)
LINE_MAX = 500  # characters of a message's first line
_ROOT = Path.cwd()  # the runner starts pytest in the repository's root


def _journal(**event: Any) -> None:
    if not _EVENTS:
        return
    with open(_EVENTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")
        fh.flush()


def _switch(context: str) -> None:
    cov = coverage.Coverage.current() if coverage is not None and _CONTEXTS else None
    if cov is not None:
        cov.switch_context(context)


def _relative(text: str) -> str:
    return text.replace(f"{_ROOT}{os.sep}", "")


def first_line(text: str) -> str:
    lines = [line.strip() for line in _relative(text).splitlines() if line.strip()]
    return lines[0][:LINE_MAX] if lines else ""


def cap_tail(text: str, limit: int = TEXT_MAX) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, keeping its end (where the error is)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    marker = "[…]\n"
    return marker + data[-(limit - len(marker.encode())) :].decode("utf-8", "ignore")


def _in_repo(filename: str) -> str | None:
    try:
        rel = Path(filename).resolve().relative_to(_ROOT.resolve())
    except (OSError, ValueError):
        return None
    if rel.parts and (rel.parts[0] in (".venv", "venv", ".tox", ".nox") or "site-packages" in rel.parts):
        return None
    return rel.as_posix()


def deepest_repo_frame(exc: BaseException) -> str:
    """``path:line`` of the deepest frame of ``exc``'s traceback in a file of the repository ('' if none)."""
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        rel = _in_repo(frame.filename)
        if rel is not None and frame.lineno:
            found = f"{rel}:{frame.lineno}"
    if not found and isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        rel = _in_repo(exc.filename)
        found = f"{rel}:{exc.lineno}" if rel else ""
    return found


def _cause(exc: BaseException) -> BaseException:
    """A collection error wraps what went wrong (the ImportError, the SyntaxError): that is the exception."""
    if type(exc).__name__ == "CollectError":
        inner = exc.__cause__ or exc.__context__
        if inner is not None:
            return inner
    return exc


def _report_location(report: Any) -> str:
    location = getattr(report, "location", None)
    if not location or not location[0]:
        return ""
    path, line = location[0], location[1]
    return f"{path}:{line + 1}" if isinstance(line, int) else str(path)


def _failure_fields(report: Any) -> dict[str, Any]:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    try:
        text = report.longreprtext
    except Exception:  # a repr that cannot print itself must not break the suite
        text = ""
    return {
        "crash": first_line(str(getattr(crash, "message", "") or "")),
        "text": cap_tail(_relative(text)),
        "location": _report_location(report),
    }


# A marker the repository registers for tests that need the Internet, by its name or its description's words.
_INTERNET_NAMES = frozenset({"internet", "network", "online", "requires_internet", "requires_network"})
_NEEDS_INTERNET = re.compile(
    r"\binternet\b|\bnetwork (?:access|connection|connectivity)\b|\b(?:requires?|needs?) (?:an? |the )?network\b", re.I
)


def internet_markers(registered: list[str]) -> list[str]:
    """The names of the markers, among pytest's ``markers`` lines (``name: description``, ``name(args): …``),
    that the repository registers as needing the Internet."""
    names = []
    for line in registered:
        name, _, description = line.partition(":")
        name = name.split("(")[0].strip()
        if name in _INTERNET_NAMES or _NEEDS_INTERNET.search(description):
            names.append(name)
    return names


# pytest-perf's experiments time the repository against its upstream code, which they install from the git
# remote's URL: never possible without a network (importlib_metadata 10.2.0's exercises.py, jaraco's skeleton).
_UPSTREAM_EXPERIMENT = "pytest_perf.plugin"


@pytest.hookimpl(trylast=True)  # after the repository's own hooks have marked its items
def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """A test that needs the Internet is skipped, saying so: a job's tests run without a network, so it would fail
    whatever the commit changed. Such a test is one the repository marks so (email-validator 2.4.0's ``network``
    marker: "requires Internet access"), or a pytest-perf experiment."""
    names = internet_markers(config.getini("markers"))
    for item in items:
        if (reason := _needs_internet(item, names)) is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def _needs_internet(item: Any, markers: list[str]) -> str | None:
    """Why ``item`` cannot pass without the Internet, or None."""
    if type(item).__module__ == _UPSTREAM_EXPERIMENT:
        return "a pytest-perf experiment: it installs the code it compares with from the network; a job has none"
    marked = next((name for name in markers if item.get_closest_marker(name) is not None), None)
    if marked is not None:
        return f"marked {marked!r}, which the repository registers as needing the Internet: a job has none"
    return None


def pytest_configure(config: Any) -> None:
    """The markers pytest-cov registers, when it is installed: the runner blocks it (``-p no:cov``, coverage.py
    measures), and a suite that marks tests ``no_cover`` under ``filterwarnings = error`` or
    ``--strict-markers`` would stop at collection (python-dateutil: no test ran)."""
    if importlib.util.find_spec("pytest_cov") is not None:
        config.addinivalue_line("markers", "no_cover: disable coverage for this test.")


def _collected_by_pytest(*args: Any, **kwargs: Any) -> None:
    """``unittest.main()`` while pytest collects: the module's TestCases are pytest's to run."""


@pytest.hookimpl(hookwrapper=True)  # the old-style wrapper: the repository's pytest may predate 8's wrapper=True
def pytest_collection(session: Any) -> Iterator[None]:
    """A test module that calls ``unittest.main()`` unguarded runs it when pytest imports the module (toposort
    1.10's, which its own Makefile runs as a script): unittest parsed pytest's arguments, exited 2, and no test
    ran. While pytest collects, that call does nothing; pytest collects and runs the module's TestCases."""
    main = unittest.main
    unittest.main = _collected_by_pytest  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        unittest.main = main  # type: ignore[misc]


def pytest_collection_finish(session: Any) -> None:
    _journal(event="collected", count=len(session.items))  # after -m/-k deselection: what will run


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _journal(event="start", nodeid=nodeid)
    _switch(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _switch("")


def pytest_runtest_logreport(report: Any) -> None:
    memory_error = False
    if report.failed and getattr(report, "longrepr", None) is not None:
        crash = getattr(report.longrepr, "reprcrash", None)
        memory_error = str(getattr(crash, "message", "")).startswith("MemoryError")
    extra = _failure_fields(report) if report.failed else {}
    if type(report).__name__ == "SubtestReport":  # a subTest's report, under its test's node id
        extra["subtest"] = True
    _journal(
        event="report",
        nodeid=report.nodeid,
        when=report.when,
        outcome=report.outcome,
        memory_error=memory_error,
        **extra,
    )


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _journal(
            event="report",
            nodeid=report.nodeid,
            when="collect",
            outcome="failed",
            memory_error=False,
            **_failure_fields(report),
        )


def pytest_exception_interact(node: Any, call: Any, report: Any) -> None:
    excinfo = getattr(call, "excinfo", None)
    if excinfo is None or not getattr(report, "failed", False):
        return
    exc = _cause(excinfo.value)
    _journal(
        event="exception",
        nodeid=report.nodeid,
        when=getattr(call, "when", ""),
        exception=type(exc).__name__,
        message=first_line(str(exc)),
        location=deepest_repo_frame(exc),
    )
