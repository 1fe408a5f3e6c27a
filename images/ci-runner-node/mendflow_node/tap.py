"""The tests of a TAP stream with subtests (node-tap 12 to 21 print it when their output is not a terminal).

A test is a subtest none of whose children is a subtest: ``t.test("adds", …)`` with its assertions, or a file
that only asserts. A subtest's assertions are not tests (tape-style counts would make one ``t.same`` of an
array a test). A ``t.skip``/``t.todo`` beside subtests counts as a skipped test. A subtest that failed with no
failing test inside it (a file that threw after its subtests, an assertion beside them) fails under its own
name. Ids are ``FILE::TITLES`` as for the other runners, the file being tap's top-level subtest when it names one
in the repository.

TAP nests by indentation, four spaces a level; a subtest's body comes before its test point (``# Subtest:``
form) or after it, between ``{`` and ``}`` (buffered form: files run in parallel), the ``{`` ending the point's
line or on a line of its own after the point's YAML block. Anything else a script prints is skipped.

tape prints no subtests: its TAP is one flat run of assertions, each test's after a comment naming it
(``# adds``). There the comments name the failing tests (``tape_failures``); the stream's summary counts them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_POINT = re.compile(r"^(?P<indent> *)(?P<ok>not ok|ok)\b(?: +\d+)?(?: +-)? *(?P<rest>.*)$")
_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: ?(?P<name>.*)$")
_COMMENT = re.compile(r"^# (?P<text>.*\S)")  # tape's test names, at the top level (and its t.comment()s)
_DIRECTIVE = re.compile(r"(?<!\\) # *(?P<word>SKIP|TODO)\b", re.IGNORECASE)
_TIME = re.compile(r"(?<!\\) # time=\S+\s*$")
_INDENT = 4


@dataclass
class Point:
    """A test point with what was nested under it."""

    name: str
    ok: bool
    skipped: bool
    headed: bool  # a ``# Subtest:`` line named it: a subtest, even with no point inside (node:test's TAP)
    children: list[Point] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)  # its YAML block: what failed, where
    heading: str = ""  # a top-level point's last comment before it: tape's name of its test

    @property
    def is_subtest(self) -> bool:
        return self.headed or bool(self.children)


@dataclass
class _Parser:
    pending: dict[int, list[Point]] = field(default_factory=dict)  # points seen per indent, not yet claimed
    headers: dict[int, str] = field(default_factory=dict)  # ``# Subtest:`` names waiting for their point
    open_braces: list[tuple[int, Point]] = field(default_factory=list)
    last: Point | None = None  # the point just read, whose YAML block may follow
    last_indent: int = 0
    latest: tuple[int, Point] | None = None  # the last point read: a ``{`` after its YAML block opens its body
    in_yaml: bool = False
    comment: str = ""  # the last top-level comment

    def line(self, text: str) -> None:
        if self._diagnostic(text):
            return
        self.last = None
        if subtest := _SUBTEST.match(text):
            self.headers[len(subtest["indent"])] = subtest["name"].strip()
        elif comment := _COMMENT.match(text):
            self.comment = comment["text"]
        elif point := _POINT.match(text):
            self._point(len(point["indent"]), point["ok"] == "ok", point["rest"])
        elif text.strip() == "{" and self.latest is not None:
            self.latest[1].headed = True
            self.open_braces.append(self.latest)
        elif text.strip() == "}" and self.open_braces:
            indent, opened = self.open_braces.pop()
            opened.children = self._claim(indent + _INDENT)

    def _diagnostic(self, text: str) -> bool:
        """Whether ``text`` belongs to the YAML block (``---`` … ``...``) under the point just read."""
        if self.last is None:
            return False
        yaml_indent = " " * (self.last_indent + 2)
        if not self.in_yaml:
            self.in_yaml = text == f"{yaml_indent}---"
            return self.in_yaml
        if text == f"{yaml_indent}...":
            self.in_yaml, self.last = False, None
        else:
            self.last.diagnostics.append(text.removeprefix(yaml_indent))
        return True

    def _point(self, indent: int, ok: bool, rest: str) -> None:
        brace = rest.rstrip().endswith("{")
        rest = rest.rstrip().removesuffix("{").rstrip()
        rest = _TIME.sub("", rest)
        directive = _DIRECTIVE.search(rest)
        name = (rest[: directive.start()] if directive else rest).strip().replace("\\#", "#")
        headed = self.headers.pop(indent, None) is not None
        point = Point(name, ok, directive is not None, headed or brace, children=self._claim(indent + _INDENT))
        point.heading = "" if indent else self.comment
        self.pending.setdefault(indent, []).append(point)
        if brace:
            self.open_braces.append((indent, point))
        self.last, self.last_indent, self.latest = point, indent, (indent, point)

    def _claim(self, indent: int) -> list[Point]:
        """The points at ``indent`` since the last claim, and nothing deeper left behind."""
        for deeper in [i for i in self.pending if i > indent]:
            del self.pending[deeper]
        return self.pending.pop(indent, [])

    def finish(self) -> list[Point]:
        return self._claim(0)


def parse(stdout: str) -> list[Point]:
    """The top-level points of a TAP stream (ANSI colours already removed)."""
    parser = _Parser()
    for text in stdout.splitlines():
        parser.line(text.rstrip())
    return parser.finish()


@dataclass(frozen=True)
class Outcome:
    titles: tuple[str, ...]
    status: str  # passed | failed | skipped | error
    text: str  # a failure's diagnostics


def outcomes(roots: list[Point]) -> list[Outcome]:
    """Each test of the stream, with its titles from the top level down; empty when no point is a subtest."""
    found: list[Outcome] = []
    for root in roots:
        if root.is_subtest:
            _walk(root, (), found)
    return found


def tape_failures(roots: list[Point]) -> list[Outcome]:
    """The failing tests of a flat stream (tape's), once each, named by the comment before their first failing
    assertion, with its diagnostics; empty where a point is a subtest (``outcomes`` reads those)."""
    if any(root.is_subtest for root in roots):
        return []
    found: dict[str, Outcome] = {}
    for point in roots:
        if not point.ok and not point.skipped and point.heading and point.heading not in found:
            found[point.heading] = Outcome((point.heading,), "failed", "\n".join([point.name, *point.diagnostics]))
    return list(found.values())


def _walk(point: Point, above: tuple[str, ...], found: list[Outcome]) -> None:
    titles = (*above, point.name)
    subtests = [c for c in point.children if c.is_subtest]
    if not subtests:
        status = _status(point)
        if status == "failed" and not above and not point.children:
            status = "error"  # a file that failed before it asserted anything: it did not load
        found.append(Outcome(titles, status, _failure_text(point)))
        return
    before = len(found)
    for child in point.children:
        if child.is_subtest:
            _walk(child, titles, found)
        elif child.skipped:
            found.append(Outcome((*titles, child.name), "skipped", ""))
    if not point.ok and not point.skipped and not any(o.status in ("failed", "error") for o in found[before:]):
        found.append(Outcome(titles, "failed", _failure_text(point)))


def _status(point: Point) -> str:
    if point.skipped:
        return "skipped"
    return "passed" if point.ok else "failed"


def _failure_text(point: Point) -> str:
    """The first failing assertion's name and diagnostics, else the point's own."""
    failing = next((c for c in point.children if not c.ok and not c.skipped), None)
    if failing is None:
        return "\n".join([point.name, *point.diagnostics])
    return "\n".join([failing.name, *failing.diagnostics])


def file_and_titles(titles: tuple[str, ...], root: Path) -> tuple[str, list[str]]:
    """tap names each file's subtest by its path: that is the id's file when it is one in the repository."""
    first = titles[0]
    candidate = root / first
    if first and not Path(first).is_absolute() and candidate.is_file():
        return first, list(titles[1:])
    return "", list(titles)
