"""A Node test run's results read into counts and failures, whichever runner wrote them.

A test's id is ``FILE::NAME``: its file relative to the repository root and its full name, the titles of its
``describe`` blocks and its own joined by single spaces (what jest's and vitest's ``-t`` and mocha's ``--grep``
match). A file that fails before any of its tests runs (it does not load, compile or import) is ``FILE`` itself,
kind ``error``, like a Python file that fails to collect.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from mendflow_runner import testing
from mendflow_runner.testing import MAX_FAILURES, cap_tail

from mendflow_node import tap

SEPARATOR = "::"
COUNTS = ("total", "passed", "failed", "skipped", "errors")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A stack frame's file: absolute (jest, mocha), or relative to the working directory (tap's YAML ``stack``, whose
# top-level frames are the bare ``test/index.test.js:1566:7``).
_FRAME = re.compile(r"(?:\(|at |^[ \t]*)(?:file://)?(?P<path>[^():\s]+):(?P<line>\d+):(?P<col>\d+)\)?", re.MULTILINE)
_EXCEPTION = re.compile(r"^(?P<name>[A-Z]\w*(?:Error|Exception))(?: \[\w+\])?: ?(?P<message>.*)$")


class ResultsError(ValueError):
    """The runner's results file is missing or not what it should be."""


class SelectionError(ValueError):
    """A ``--select`` id that is not ``FILE::NAME`` inside the repository."""


@dataclass
class TestRun(testing.RunResults):
    read: bool = False  # per-test results were read (a bare script's run has only its exit code)

    def passed(self) -> None:
        self.counts["total"] += 1
        self.counts["passed"] += 1

    def skipped(self) -> None:
        self.counts["total"] += 1
        self.counts["skipped"] += 1

    def fail(self, node: str, text: str, root: Path, kind: str = "failed") -> None:
        if kind == "failed":
            self.counts["total"] += 1
            self.counts["failed"] += 1
        else:
            self.counts["errors"] += 1
        self.name_failure(node, text, root, kind)

    def name_failure(self, node: str, text: str, root: Path, kind: str = "failed") -> None:
        """A failing test, where the counts come from elsewhere (a summary), or were counted already."""
        if node in self.failed:
            return
        self.failed.append(node)
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(failure(node, kind, text, root))


def node_id(file: str, root: Path, titles: list[str]) -> str:
    rel = relative(file, root)
    name = " ".join(t for t in titles if t)
    return f"{rel}{SEPARATOR}{name}" if name else rel


def relative(file: str, root: Path) -> str:
    path = Path(file.removeprefix("file://"))
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()
    return PurePosixPath(file).as_posix()


def failure(node: str, kind: str, text: str, root: Path) -> dict[str, str]:
    clean = _ANSI.sub("", text)
    lines = [ln for ln in clean.splitlines() if ln.strip()]
    first = lines[0].strip() if lines else ""
    said = _EXCEPTION.match(first)
    exception, message = (
        (said["name"], said["message"]) if said else ("AssertionError" if kind == "failed" else "Error", first)
    )
    return {
        "node_id": node,
        "kind": kind,
        "exception": exception,
        "message": message[:500],
        "location": _location(clean, root),
        "traceback": cap_tail(clean),
    }


def _location(text: str, root: Path) -> str:
    """The first stack frame in the repository's own code: ``path:line``."""
    base = root.resolve()
    for match in _FRAME.finditer(text):
        path, relative_frame = base / match["path"], not match["path"].startswith("/")
        if relative_frame and not path.is_file():
            continue  # words before a colon and digits, not a file
        if "node_modules" not in path.parts and path.is_relative_to(base):
            return f"{path.relative_to(base).as_posix()}:{match['line']}"
    return ""


# -- jest and vitest: jest's JSON results (vitest's ``json`` reporter writes the same shape) -----------------


def from_jest_json(path: Path, root: Path) -> TestRun:
    data = _load(path)
    run = TestRun(read=True)
    for suite in data.get("testResults") or []:
        file = str(suite.get("name") or suite.get("testFilePath") or "")
        assertions = suite.get("assertionResults") or suite.get("testResults") or []
        for test in assertions:
            titles = [*(test.get("ancestorTitles") or []), str(test.get("title") or "")]
            status = test.get("status")
            if status == "passed":
                run.passed()
            elif status == "failed":
                run.fail(node_id(file, root, titles), "\n".join(test.get("failureMessages") or []), root)
            else:  # pending, skipped, todo, disabled
                run.skipped()
        if suite.get("status") == "failed" and not any(t.get("status") == "failed" for t in assertions):
            run.fail(
                node_id(file, root, []), str(suite.get("message") or suite.get("failureMessage") or ""), root, "error"
            )
    return run


# -- mocha: its ``json`` reporter ---------------------------------------------------------------------------


def mocha_json_from_stdout(stdout: str) -> str | None:
    """The json reporter's report where it printed it: mocha before 9 ignores ``--reporter-options output=`` and
    prints the report (``JSON.stringify(…, null, 2)``, after whatever the tests printed) to stdout."""
    start = stdout.rfind('{\n  "stats": {')
    if start < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(stdout, start)
    except json.JSONDecodeError:
        return None
    return json.dumps(data) if isinstance(data, dict) else None


def from_mocha_json(path: Path, root: Path) -> TestRun:
    data = _load(path)
    run = TestRun(read=True)
    for _ in data.get("passes") or []:
        run.passed()
    for _ in data.get("pending") or []:
        run.skipped()
    for test in data.get("failures") or []:
        err = test.get("err") or {}
        text = str(err.get("stack") or err.get("message") or "")
        title = str(test.get("fullTitle") or test.get("title") or "")
        hook = title.startswith('"before all" hook') or title.startswith('"after all" hook')
        run.fail(node_id(str(test.get("file") or ""), root, [title]), text, root, "error" if hook else "failed")
    return run


# -- node --test: mendflow's reporter (reporter.mjs), one JSON object a line -----------------------------


def from_node_events(path: Path, root: Path) -> TestRun:
    if not path.is_file():
        raise ResultsError(f"node:test's runner wrote no results ({path.name})")
    run = TestRun(read=True)
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict) or event.get("suite"):
            continue  # a describe block's own pass/fail repeats its tests'
        file, titles = str(event.get("file") or ""), [str(t) for t in event.get("titles") or []]
        if event.get("type") == "pass":
            run.skipped() if event.get("skip") else run.passed()
        elif event.get("type") == "fail":
            loaded = bool(file) and not (len(titles) == 1 and relative(titles[0], root) == relative(file, root))
            node = node_id(file, root, titles) if loaded else node_id(file or titles[0], root, [])
            run.fail(node, str(event.get("error") or ""), root, "failed" if loaded else "error")
    return run


# TAP's closing comments (tape, node:test's TAP reporter): "# tests 147", "# pass  145", "# fail 2".
_TAP_COUNT = re.compile(r"^# (?P<what>tests|pass|fail|skip|skipped|todo)\s+(?P<n>\d+)\s*$", re.MULTILINE)
# tap 15+ closes with one object of its own, fields after pass in no fixed order and only when not zero:
# "# { total: 6, pass: 3, fail: 1, todo: 1, skip: 1 }" (tap 18; its counts are assertions, as tape's are).
_TAP_SUMMARY = re.compile(r"^# \{ (?P<fields>total: \d+(?:, \w+: \d+)*) \}\s*$", re.MULTILINE)
_TAP_FIELD = re.compile(r"(?P<what>\w+): (?P<n>\d+)")
# tape's YAML names the failing assertion's place: "at: Test.<anonymous> (/src/test/a.js:5:5)" or "at: /src/a.js:5:5".
_TAPE_AT = re.compile(r"^\s*at: (?:.*\()?(?P<path>(?:file://)?/[^\s():]+):\d+:\d+\)?\s*$", re.MULTILINE)
# node:test's spec reporter (borp's default, and `node --test` on a terminal) closes with "tests 2", "pass 1"…,
# each after an information sign (U+2139).
_SPEC_COUNT = re.compile(r"^\u2139 (?P<what>tests|pass|fail|cancelled|skipped|todo) (?P<n>\d+)\s*$", re.MULTILINE)
# uvu closes each run with "  Total:     2", "  Passed:    1", "  Skipped:   1": its total leaves the skipped out.
_UVU_COUNT = re.compile(r"^  (?P<what>Total|Passed|Skipped):\s+(?P<n>\d+)\s*$", re.MULTILINE)
# @jsumners/line-reporter, a node:test reporter (the fastify family's, given to a borp the script runs after its
# runner), closes with "Passed: 3", "Failed: 1", "Total: 4": a skipped test is one that passed.
_LINE_REPORTER_COUNT = re.compile(r"^Passed: (?P<passed>\d+)\nFailed: (?P<failed>\d+)\nTotal: (?P<total>\d+)\s*$", re.M)
_TAP_KEYS = {"tests": "total", "total": "total", "pass": "passed", "fail": "failed", "cancelled": "errors"}
_TAP_KEYS |= dict.fromkeys(("skip", "skipped", "todo"), "skipped")


def from_tap(stdout: str, root: Path) -> TestRun:
    """The tests of a TAP stream with subtests (node-tap's), each with its id; else the counts of the TAP
    summaries a test script printed, node:test's spec summaries, uvu's or line-reporter's (summed: a script may
    run several suites), which name no test; not read when there is none."""
    text = _ANSI.sub("", stdout)
    roots = tap.parse(text)
    if tests := tap.outcomes(roots):
        return _from_tap_tests(tests, root)
    for counted in (_from_uvu_counts, _from_line_reporter_counts):
        if (run := counted(text)).read:
            return run
    found = [(m["what"], int(m["n"])) for pattern in (_TAP_COUNT, _SPEC_COUNT) for m in pattern.finditer(text)]
    for summary in _TAP_SUMMARY.finditer(text):
        found += [(m["what"], int(m["n"])) for m in _TAP_FIELD.finditer(summary["fields"])]
    if not any(what in ("tests", "total") for what, _ in found):
        return run
    run.read = True
    for what, n in found:
        if what in _TAP_KEYS:  # a field tap may add later is not a count mendflow knows
            run.counts[_TAP_KEYS[what]] += n
    for test in tap.tape_failures(roots):  # tape's summary counts assertions; its comments name the tests
        file = _asserted_in(test.text, root)
        run.name_failure(node_id(file, root, list(test.titles)) if file else test.titles[0], test.text, root)
    return run


def _asserted_in(diagnostics: str, root: Path) -> str:
    """The package's file tape's ``at:`` line puts the failing assertion in, else ''."""
    found = _TAPE_AT.search(diagnostics)
    file = relative(found["path"], root) if found else ""
    return file if file and not file.startswith("/") and "node_modules/" not in file else ""


def _from_line_reporter_counts(text: str) -> TestRun:
    run = TestRun()
    for found in _LINE_REPORTER_COUNT.finditer(text):
        run.read = True
        for what in ("total", "passed", "failed"):
            run.counts[what] += int(found[what])
    return run


def _from_uvu_counts(text: str) -> TestRun:
    found = [(m["what"], int(m["n"])) for m in _UVU_COUNT.finditer(text)]
    counts = {"Total": 0, "Passed": 0, "Skipped": 0}
    for what, n in found:
        counts[what] += n
    run = TestRun(read=any(what == "Total" for what, _ in found))
    run.counts["total"] += counts["Total"] + counts["Skipped"]
    run.counts["passed"] += counts["Passed"]
    run.counts["skipped"] += counts["Skipped"]
    run.counts["failed"] += counts["Total"] - counts["Passed"]
    return run


def _from_tap_tests(tests: list[tap.Outcome], root: Path) -> TestRun:
    run = TestRun(read=True)
    for test in tests:
        if test.status == "passed":
            run.passed()
        elif test.status == "skipped":
            run.skipped()
        else:
            file, titles = tap.file_and_titles(test.titles, root)
            node = node_id(file, root, titles) if file else " ".join(titles)
            # a file that failed before its first assertion did not load; node:test's top-level tests are no files
            kind = "error" if test.status == "error" and file and not titles else "failed"
            run.fail(node, test.text, root, kind)
    return run


def node_test_files(path: Path, root: Path) -> set[str]:
    """The files ``node --test`` ran as tests (relative to ``root``), from mendflow's reporter's events."""
    files: set[str] = set()
    if not path.is_file():
        return files
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("file"):
            files.add(relative(str(event["file"]), root))
    return files


def lcov_without(text: str, files: set[str], root: Path) -> str:
    """LCOV ``text`` without the records of ``files`` (relative to ``root``; an ``SF`` relative to it too)."""
    kept: list[str] = []
    record: list[str] = []
    for line in text.splitlines(keepends=True):
        record.append(line)
        if line.strip() == "end_of_record":
            source = next((ln.strip()[3:] for ln in record if ln.startswith("SF:")), "")
            if relative(source, root) not in files:
                kept.extend(record)
            record = []
    return "".join(kept + record)


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ResultsError(f"the test runner wrote no results ({path.name})")
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ResultsError(f"the test runner's results ({path.name}) are not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ResultsError(f"the test runner's results ({path.name}) are not a JSON object")
    return data


# -- --select -------------------------------------------------------------------------------------------


def selection(ids: list[str]) -> tuple[list[str], list[str]]:
    """``FILE::NAME`` ids → (files, names), for the runner's file arguments and its name filter."""
    files: list[str] = []
    names: list[str] = []
    for node in ids:
        file, _, name = node.partition(SEPARATOR)
        path = PurePosixPath(file)
        if not file or path.is_absolute() or ".." in path.parts:
            raise SelectionError(f"{node!r} is not FILE::NAME inside the repository")
        files += [file] if file not in files else []
        names += [name] if name and name not in names else []
    return files, names


def own_name_pattern(names: list[str]) -> str:
    """For ``node --test``, whose name filter (Node 20) sees a test's own name only: every tail of each full name,
    since the names of the suites around it cannot be told from words of its own."""
    tails = {" ".join(words[i:]) for name in names if (words := name.split(" ")) for i in range(len(words))}
    return name_pattern(sorted(tails))


def name_pattern(names: list[str]) -> str:
    """A regular expression matching exactly these full names (JavaScript and Python agree on this subset)."""
    return "^(" + "|".join(re.escape(n).replace("\\ ", " ") for n in names) + ")$"
