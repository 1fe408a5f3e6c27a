"""``cargo test``'s output (libtest's human format, the stable one) read into counts and failures, and a selection
of tests turned back into ``cargo test`` arguments.

A test's id is ``SOURCE::path::to::test``: the root source file of the target it is compiled in (``src/lib.rs``,
``tests/api.rs``, ``crates/core/src/lib.rs``) and libtest's name for it, so ``--select`` can run it again and the
healer finds its file. A doctest is ``SOURCE::doc::<libtest's name>``. A target whose binary fails with no failed
test (it aborted, a test killed the process) is ``SOURCE`` itself, kind ``error``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from mendflow_runner.testing import MAX_FAILURES, RunResults, cap_tail

SEPARATOR = "::"
DOC = "doc"
_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<source>\S+) \(")
_DOCTESTS = re.compile(r"^\s*Doc-tests (?P<crate>\S+)")
# libtest-mimic (``harness = false`` targets) pads names to one width and heads a failure ``---- NAME ----``.
_RESULT = re.compile(r"^test (?P<name>.+?) +\.\.\. (?P<outcome>ok|FAILED|ignored(?:, .*)?)$")
_STDOUT = re.compile(r"^---- (?P<name>.+?) (?:stdout )?----$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # a harness that colours its words even when not on a terminal
_PANIC = re.compile(r"^thread '(?P<thread>[^']*)' (?:\(\d+\) )?panicked at (?P<where>[^:]+:\d+)(?::\d+)?:?$")
_SUMMARY = re.compile(r"^test result: ")


class SelectionError(ValueError):
    """A ``--select`` id that is not ``SOURCE::test`` inside the repository."""


def read(output: str, doc_sources: dict[str, str]) -> RunResults:
    """``doc_sources``: crate name → its library's root source (doctests are named by crate)."""
    run = RunResults()
    source, ended = "", True
    failing: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in _COLOUR.sub("", output).splitlines():
        if started := _target(line, doc_sources):
            if not ended:
                _crashed(run, source, failing)
            source, ended, current = started, False, None
        elif match := _RESULT.match(line):
            node = f"{source}{SEPARATOR}{match['name']}"
            outcome = match["outcome"]
            run.counts["total"] += 1
            key = "passed" if outcome == "ok" else "failed" if outcome == "FAILED" else "skipped"
            run.counts[key] += 1
            if outcome == "FAILED":
                run.failed.append(node)
        elif match := _STDOUT.match(line):
            current = failing.setdefault(f"{source}{SEPARATOR}{match['name']}", [])
        elif _SUMMARY.match(line):
            ended, current = True, None
        elif line.strip() == "failures:":
            current = None
        elif current is not None:
            current.append(line)
    if not ended and source:
        _crashed(run, source, failing)
    run.failures = [_failure(node, "failed", failing.get(node, [])) for node in run.failed[:MAX_FAILURES]]
    return run


def doctests_ran(output: str) -> int:
    """How many doctests ran (passed or failed) in a ``cargo test`` output."""
    in_doc, ran = False, 0
    for line in _COLOUR.sub("", output).splitlines():
        if started := _RUNNING.match(line) or _DOCTESTS.match(line):
            in_doc = started.re is _DOCTESTS
        elif in_doc and (match := _RESULT.match(line)) and not match["outcome"].startswith("ignored"):
            ran += 1
    return ran


def _target(line: str, doc_sources: dict[str, str]) -> str:
    """The target a ``Running``/``Doc-tests`` line starts, as test ids begin with it ('' for other lines)."""
    if match := _RUNNING.match(line):
        return match["source"]
    if doc := _DOCTESTS.match(line):
        return f"{doc_sources.get(doc['crate'], doc['crate'])}{SEPARATOR}{DOC}"
    return ""


def _crashed(run: RunResults, source: str, failing: dict[str, list[str]]) -> None:
    """A target that printed no result line: its binary died (an abort, a signal, the time budget)."""
    target = source.split(SEPARATOR, 1)[0]
    run.running = target
    if target not in run.failed:
        run.failed.append(target)
        run.counts["errors"] += 1


def _failure(node: str, kind: str, lines: list[str]) -> dict[str, str]:
    text = "\n".join(lines).strip()
    location, message = "", ""
    said = [ln for ln in lines if ln.strip()]
    for i, line in enumerate(said):
        if match := _PANIC.match(line.strip()):
            location = match["where"]
            message = said[i + 1].strip() if i + 1 < len(said) else ""
            break
    return {
        "node_id": node,
        "kind": kind if "::" in node else "error",
        "exception": "panic",
        "message": (message or (said[0].strip() if said else ""))[:500],
        "location": location,
        "traceback": cap_tail(text),
    }


def selection(ids: list[str]) -> tuple[list[str], list[str]]:
    """``SOURCE::test`` ids → (cargo's target flags, libtest's exact names)."""
    targets: dict[tuple[str, ...], None] = {}
    names: dict[str, None] = {}
    for node in ids:
        source, sep, name = node.partition(SEPARATOR)
        path = PurePosixPath(source)
        if not sep or not name or path.is_absolute() or ".." in path.parts or path.suffix != ".rs":
            raise SelectionError(f"{node!r} is not SOURCE::test inside the repository (e.g. src/lib.rs::tests::adds)")
        if name.startswith(f"{DOC}{SEPARATOR}"):
            targets[("--doc",)] = None
            name = name[len(DOC) + len(SEPARATOR) :]
        elif path.parent.name == "tests":
            targets[("--test", path.stem)] = None
        elif path.name == "main.rs" or path.parent.name == "bin":
            targets[("--bins",)] = None
        else:
            targets[("--lib",)] = None
        names[name] = None
    return [flag for flags in targets for flag in flags], list(names)
