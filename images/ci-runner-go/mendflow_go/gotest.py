"""``go test -json`` events read into counts and failures, and a selection of tests turned back into ``go test``.

A test's id is ``DIR::TestName``: its package's directory relative to the repository root (``.`` for the root)
and the top-level test function, so a failure names the directory the healer reads and ``--select`` can run it
again. Subtests count in their parent (``-run`` selects top-level functions). A package that fails with no failed
test (it does not compile, its ``TestMain`` or ``init`` panics, the suite times out) is a failure of ``DIR`` itself,
like a Python file that fails to collect.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from mendflow_runner.coverage_formats import go_path
from mendflow_runner.testing import MAX_FAILURES, cap_tail

SEPARATOR = "::"
_TEST_NAME = re.compile(r"^(Test|Example|Fuzz)\w*$")
# t.Error/t.Fatal lines: "    limit_test.go:12: got 3, want 4"
_AT = re.compile(r"^\s+([\w.\-/]+_test\.go):(\d+): (.*)$")
# A failed testscript (github.com/rogpeppe/go-internal's cmd/testscript): its script and line, relative to the
# package, under the "testscript.go:609: WORK=$WORK" it logs first: "    FAIL: testdata/env_var_with_go.txt:16: no
# match for `^GOPROXY=...$` found in stdout"
_SCRIPT_AT = re.compile(r"^\s*FAIL: (\S+):(\d+): (.*)$")
_PANIC = re.compile(r"^panic: (.*)$")


class SelectionError(ValueError):
    """A ``--select`` id that is not ``DIR::TestName`` inside the repository."""


@dataclass
class GoTestRun:
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    no_tests: bool = False  # every package said "no test files", or -run matched nothing
    running: str = ""  # the test that had started and not ended when the events stopped (a timeout, a kill)


@dataclass
class _Test:
    output: list[str] = field(default_factory=list)
    action: str = ""
    said_by: list[str] = field(default_factory=list)  # per output line: the subtest that printed it, or ""
    subtest_actions: dict[str, str] = field(default_factory=dict)

    def failure_text(self) -> list[str]:
        """Its output without that of the subtests that passed: their ``t.Log`` lines say nothing about the
        failure (a ``_test.go:N:`` among them would be taken for its place)."""
        passed = {name for name, action in self.subtest_actions.items() if action in ("pass", "skip")}
        return [line for line, by in zip(self.output, self.said_by, strict=True) if by not in passed]


def directory(import_path: str, modules: dict[str, str]) -> str:
    """A package's import path → its directory in the repository (``.`` for the root)."""
    return go_path(import_path, modules) or import_path


def read_events(text: str, modules: dict[str, str]) -> GoTestRun:
    tests: dict[tuple[str, str], _Test] = {}
    packages: dict[str, _Test] = {}
    blamed: dict[str, str] = {}  # a package that could not be set up → the import path its build failed on
    for line in text.splitlines():
        event = _event(line)
        if event is None:
            continue
        # A build's events name "pkg [pkg.test]" (the package as compiled for its tests): the same package.
        pkg = str(event.get("Package") or event.get("ImportPath") or "").split(" [", 1)[0]
        test, action = str(event.get("Test") or ""), str(event.get("Action") or "")
        if test and "/" not in test:
            entry = tests.setdefault((pkg, test), _Test())
        elif test:  # a subtest: it counts in its parent, and what it prints is its parent's
            entry = tests.setdefault((pkg, test.split("/", 1)[0]), _Test())
            if action == "output":
                entry.output.append(str(event.get("Output") or ""))
                entry.said_by.append(test)
            elif action in ("pass", "fail", "skip"):
                entry.subtest_actions[test] = action
            continue
        else:
            entry = packages.setdefault(pkg, _Test())
        if action in ("output", "build-output"):
            entry.output.append(str(event.get("Output") or ""))
            entry.said_by.append("")
        elif action in ("pass", "fail", "skip", "run", "build-fail"):
            entry.action = action
        if failed_build := str(event.get("FailedBuild") or ""):
            blamed[pkg] = failed_build.split(" [", 1)[0]
    _merge_foreign_builds(packages, blamed, modules)
    return _tally(tests, packages, modules)


def _merge_foreign_builds(packages: dict[str, _Test], blamed: dict[str, str], modules: dict[str, str]) -> None:
    """A test package that cannot load another package (a module missing from go.sum) gets that build's output
    as its own: ``go test -json`` files it under the other's import path, outside the repository (yaml.v3's
    gopkg.in/check.v1), where it would be a failure of no directory and its package one of no words."""
    for pkg, other in blamed.items():
        if other != pkg and go_path(other, modules) is None and (foreign := packages.pop(other, None)) is not None:
            own = packages.setdefault(pkg, _Test())
            own.output[:0], own.said_by[:0] = foreign.output, foreign.said_by


def _event(line: str) -> dict[str, object] | None:
    if not line.startswith("{"):
        return None  # a build error printed outside the JSON stream (older toolchains)
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _tally(tests: dict[tuple[str, str], _Test], packages: dict[str, _Test], modules: dict[str, str]) -> GoTestRun:
    run = GoTestRun()
    actions = [t.action for t in tests.values()]
    run.counts = {
        "total": len(tests),
        "passed": actions.count("pass"),
        "failed": actions.count("fail"),
        "skipped": actions.count("skip"),
        "errors": 0,
    }
    details: dict[str, dict[str, str]] = {}
    failed_pkgs = {pkg for (pkg, _), t in tests.items() if t.action == "fail"}
    for (pkg, name), t in sorted(tests.items()):
        node = f"{directory(pkg, modules)}{SEPARATOR}{name}"
        if t.action == "fail":
            run.failed.append(node)
            details[node] = _failure(node, "failed", t.failure_text())
        elif t.action == "run":
            run.running = node
    for pkg, p in sorted(packages.items()):
        if p.action in ("fail", "build-fail") and pkg not in failed_pkgs and pkg:
            node = directory(pkg, modules)
            if node not in run.failed:
                run.failed.append(node)
                run.counts["errors"] += 1
                details[node] = _failure(node, "error", p.output)
    run.failures = [details[n] for n in run.failed[:MAX_FAILURES]]
    run.no_tests = not tests and not run.failed
    return run


def _failure(node: str, kind: str, output: list[str]) -> dict[str, str]:
    text = "".join(line for line in output if not line.startswith(("=== RUN", "=== PAUSE", "=== CONT")))
    # no "panic:" line: the test failed itself (t.Fail, a testscript), like a t.Error one; go-internal v1.16.0's
    # testscript failures were said to panic
    exception, message, location = ("TestFailure", "", "") if kind == "failed" else ("BuildError", "", "")
    for line in text.splitlines():
        if (at := _AT.match(line) or _SCRIPT_AT.match(line)) and not message:
            exception, message, location = "TestFailure", at[3].strip(), f"{_dir_of(node)}{at[1]}:{at[2]}"
        elif (panic := _PANIC.match(line)) and not message:
            exception, message = "panic", panic[1].strip()
    if not message:
        # "# pkg" heads a package's build output: the compiler's words follow it
        passed_over = ("---", "FAIL", "ok ", "# ")
        said = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(passed_over)]
        message = said[0] if said else ""
    return {
        "node_id": node,
        "kind": kind,
        "exception": exception,
        "message": message[:500],
        "location": location,
        "traceback": cap_tail(text),
    }


def _dir_of(node: str) -> str:
    where = node.split(SEPARATOR, 1)[0]
    return "" if where == "." else f"{where}/"


def selection(ids: list[str]) -> tuple[list[str], str]:
    """``DIR::TestName`` ids → (package patterns, ``-run`` regexp) for one ``go test``."""
    dirs: list[str] = []
    names: list[str] = []
    for node in ids:
        where, sep, name = node.partition(SEPARATOR)
        path = PurePosixPath(where)
        if not sep or not _TEST_NAME.match(name) or path.is_absolute() or ".." in path.parts:
            raise SelectionError(f"{node!r} is not DIR::TestName inside the repository")
        pattern = "." if where in ("", ".") else f"./{path.as_posix()}"
        if pattern not in dirs:
            dirs.append(pattern)
        if name not in names:
            names.append(name)
    return dirs, f"^({'|'.join(names)})$"
