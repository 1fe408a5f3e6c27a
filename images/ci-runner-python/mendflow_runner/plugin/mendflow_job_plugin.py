"""pytest plugin the runner loads into the repo's pytest (``-p mendflow_job_plugin``).

It switches coverage.py's dynamic context to the pytest node id around each test (so coverage contexts name
tests the way later stages select them) and journals how many tests were collected, then each test's start and
outcome, to the file named by ``MENDFLOW_PYTEST_EVENTS``: a suite killed mid-test still tells which test was
running, and the runner reads the journal as it grows to print how many tests are through.
Stdlib + pytest + coverage only; it lives outside the package so the repo's venv can import it alone.
"""

from __future__ import annotations

import json
import os
from typing import Any

try:
    import coverage
except ImportError:  # pragma: no cover - the runner installs coverage
    coverage = None  # type: ignore[assignment]

_EVENTS = os.environ.get("MENDFLOW_PYTEST_EVENTS", "")


def _journal(**event: Any) -> None:
    if not _EVENTS:
        return
    with open(_EVENTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")
        fh.flush()


def _switch(context: str) -> None:
    cov = coverage.Coverage.current() if coverage is not None else None
    if cov is not None:
        cov.switch_context(context)


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
    _journal(
        event="report",
        nodeid=report.nodeid,
        when=report.when,
        outcome=report.outcome,
        memory_error=memory_error,
    )


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _journal(event="report", nodeid=report.nodeid, when="collect", outcome="failed", memory_error=False)
