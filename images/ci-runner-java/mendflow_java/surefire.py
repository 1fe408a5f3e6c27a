"""Surefire's XML reports (``target/surefire-reports/TEST-*.xml``, one per test class) read into counts and
failures, and a selection of tests turned back into Maven's ``-Dtest`` argument.

A test's id is ``FILE::method``: the test class's source file relative to the repository root
(``src/test/java/org/example/FooTest.java``, ``core/src/test/java/…`` in a reactor) and the method's name, so
``--select`` can run it again and the healer finds its file. A class that fails with no failed method (it does
not load, a ``@BeforeAll`` throws) is ``FILE`` itself, kind ``error``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

from mendflow_runner.testing import MAX_FAILURES, RunResults, cap_tail

SEPARATOR = "::"
TEST_SOURCES = PurePosixPath("src/test/java")
ROOT = PurePosixPath()
_FRAME = re.compile(r"\((?P<file>[^():]+\.java):(?P<line>\d+)\)")


class SelectionError(ValueError):
    """A ``--select`` id that is not ``FILE.java::method`` inside the repository."""


def source_of(module: PurePosixPath, classname: str) -> str:
    """The test source file of ``classname`` in ``module`` (the reactor module's directory, ``.`` at the root);
    a nested class is its outer class's file."""
    outer = classname.split("$", 1)[0]
    path = module / TEST_SOURCES / (outer.replace(".", "/") + ".java")
    return path.as_posix()


def read_reports(root: Path, module: PurePosixPath = ROOT) -> RunResults:
    """Every ``TEST-*.xml`` under ``root/module/target/surefire-reports`` read into one run."""
    run = RunResults()
    reports = root / module / "target" / "surefire-reports"
    for report in sorted(reports.glob("TEST-*.xml")) if reports.is_dir() else []:
        add_report(run, report.read_bytes(), module)
    return run


def add_report(run: RunResults, data: bytes, module: PurePosixPath = ROOT) -> None:
    """One surefire report's test cases added to ``run``; a report that does not parse is its suite's error."""
    try:
        suite = ET.fromstring(data)
    except ET.ParseError as exc:
        run.counts["total"] += 1
        run.counts["errors"] += 1
        node = f"{module.as_posix()}/target/surefire-reports"
        run.failed.append(node)
        _add_failure(run, {"node_id": node, "kind": "error", "exception": "ParseError", "message": str(exc)})
        return
    for case in suite.iter("testcase"):
        classname = case.get("classname") or suite.get("name") or ""
        name = case.get("name") or ""
        source = source_of(module, classname)
        method = name.split("(", 1)[0].strip()  # a parameterised test: "adds(int)[1]" → its method
        node = f"{source}{SEPARATOR}{method}" if method and method != classname else source
        run.counts["total"] += 1
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if outcome is None:
            run.counts["passed"] += 1
        elif outcome.tag == "skipped":
            run.counts["skipped"] += 1
        else:
            run.counts["failed" if outcome.tag == "failure" else "errors"] += 1
            if node not in run.failed:
                run.failed.append(node)
                _add_failure(run, _failure(node, outcome, source))


def _add_failure(run: RunResults, failure: dict[str, str]) -> None:
    if len(run.failures) < MAX_FAILURES:
        run.failures.append(failure)


def _failure(node: str, outcome: ET.Element, source: str) -> dict[str, str]:
    trace = outcome.text or ""
    file_name = PurePosixPath(source).name
    location = ""
    for match in _FRAME.finditer(trace):
        if match["file"] == file_name:
            location = f"{source}:{match['line']}"
            break
    return {
        "node_id": node,
        "kind": ("failed" if outcome.tag == "failure" else "error") if SEPARATOR in node else "error",
        "exception": (outcome.get("type") or "").rsplit(".", 1)[-1],
        "message": (outcome.get("message") or trace.strip().split("\n", 1)[0])[:500],
        "location": location,
        "traceback": cap_tail(trace),
    }


def selection(ids: list[str]) -> dict[str, list[str]]:
    """``FILE.java::method`` ids → Maven's ``-Dtest`` value per module (``.`` the root): ``Class#a+b,Other``."""
    per_module: dict[str, dict[str, list[str]]] = {}
    for node in ids:
        source, _, method = node.partition(SEPARATOR)
        path = PurePosixPath(source)
        parts = path.parts
        if (
            path.is_absolute()
            or ".." in parts
            or path.suffix != ".java"
            or not _contains(parts, TEST_SOURCES.parts)
            or (method and not method.isidentifier())
        ):
            raise SelectionError(
                f"{node!r} is not FILE.java::method under src/test/java "
                "(e.g. src/test/java/org/example/FooTest.java::adds)"
            )
        at = _index(parts, TEST_SOURCES.parts)
        module = PurePosixPath(*parts[:at]).as_posix() if at else "."
        classname = ".".join((*parts[at + len(TEST_SOURCES.parts) : -1], path.stem))
        methods = per_module.setdefault(module, {}).setdefault(classname, [])
        if method and method not in methods:
            methods.append(method)
    return {
        module: [f"{cls}#{'+'.join(methods)}" if methods else cls for cls, methods in classes.items()]
        for module, classes in per_module.items()
    }


def _index(parts: tuple[str, ...], sub: tuple[str, ...]) -> int:
    for i in range(len(parts) - len(sub) + 1):
        if parts[i : i + len(sub)] == sub:
            return i
    return -1


def _contains(parts: tuple[str, ...], sub: tuple[str, ...]) -> bool:
    return _index(parts, sub) >= 0
