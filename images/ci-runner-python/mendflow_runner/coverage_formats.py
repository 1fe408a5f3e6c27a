"""Every language's coverage report into the one ``Coverage`` contract (plain dicts, stdlib only).

Each importer reads what the ecosystem's own tool writes — Go's coverprofile (with ``go tool cover -func``),
LCOV (c8, vitest, jest, ``node --test``, cargo-llvm-cov), Cobertura XML and JaCoCo XML — into per-file line hits,
branches where the format has them, and functions where it names them. coverage.py's JSON keeps its own,
richer importer (``coverage_report``: arcs, and symbols from the source).

Branches: a format that records none (Go's coverprofile) says so with ``branch_data: false``, and its files carry
no branch numbers rather than a zero. The formats other than coverage.py name no branch's target line, so a
missing branch is ``(line, n)``: the n-th branch out of that line, counting from 0.

Paths are made relative to the repository root; files outside it (the toolchain's, a dependency's) are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any


class CoverageFormatError(ValueError):
    """The tool's report is not what its format says: named, with where it broke."""


class NoCoverageError(CoverageFormatError):
    """A well-formed report of no file: no coverage, never 100 % of nothing."""


@dataclass
class FileHits:
    """One source file as a coverage tool saw it: line → hits, line → branch taken flags, functions."""

    lines: dict[int, int] = field(default_factory=dict)
    branches: dict[int, list[bool]] = field(default_factory=dict)
    functions: list[tuple[str, int, int | None]] = field(default_factory=list)  # name, first line, last line
    branch_at: dict[tuple[int, str, str], int] = field(default_factory=dict)  # (line, key) → its flag's index

    def hit(self, line: int, count: int) -> None:
        self.lines[line] = max(self.lines.get(line, 0), count)

    def function(self, name: str, start: int, end: int | None) -> None:
        if (name, start, end) not in self.functions:  # a file's second record (a second run's) names them again
            self.functions.append((name, start, end))

    def branch(self, line: int, key: tuple[str, str], taken: bool) -> None:
        """A branch out of ``line``; read again under the same ``key`` (LCOV's block and branch) from a file's
        second record, it is taken if either record took it."""
        flags = self.branches.setdefault(line, [])
        if (at := self.branch_at.get((line, *key))) is not None:
            flags[at] = flags[at] or taken
            return
        self.branch_at[(line, *key)] = len(flags)
        flags.append(taken)


def _pct(covered: int, total: int) -> float:
    return round(100.0 * covered / total, 2) if total else 100.0


def _spans(functions: list[tuple[str, int, int | None]], last_line: int) -> list[tuple[str, int, int]]:
    """Each function's (name, first, last): a format that gives no end ends it before the next one starts."""
    ordered = sorted(functions, key=lambda f: f[1])
    spans = []
    for i, (name, start, end) in enumerate(ordered):
        if end is None:
            following = [s for _, s, _ in ordered[i + 1 :] if s > start]
            end = (following[0] - 1) if following else max(last_line, start)
        spans.append((name, start, end))
    return spans


def _symbol(name: str, start: int, end: int, hits: FileHits, branch_data: bool) -> dict[str, Any]:
    lines = {n: c for n, c in hits.lines.items() if start <= n <= end}
    flags = [t for n, taken in hits.branches.items() if start <= n <= end for t in taken]
    return {
        "name": name,
        "kind": "function",
        "start_line": start,
        "end_line": end,
        "statements": len(lines),
        "missing_lines": sorted(n for n, c in lines.items() if c == 0),
        "line_pct": _pct(sum(1 for c in lines.values() if c), len(lines)),
        "branch_pct": _pct(sum(flags), len(flags)) if branch_data and flags else None,
    }


def file_report(path: str, hits: FileHits, branch_data: bool) -> dict[str, Any]:
    """The contract's ``FileCoverage`` of one file."""
    covered = sum(1 for c in hits.lines.values() if c)
    flags = [t for taken in hits.branches.values() for t in taken]
    missing_branches = [
        [line, n] for line, taken in sorted(hits.branches.items()) for n, t in enumerate(taken) if not t
    ]
    last = max(hits.lines, default=0)
    return {
        "path": path,
        "statements": len(hits.lines),
        "missing_lines": sorted(n for n, c in hits.lines.items() if c == 0),
        "excluded_lines": [],
        "num_branches": len(flags) if branch_data else 0,
        "missing_branches": missing_branches if branch_data else [],
        "line_pct": _pct(covered, len(hits.lines)),
        "branch_pct": _pct(sum(flags), len(flags)) if branch_data and flags else None,
        "symbols": [_symbol(n, s, e, hits, branch_data) for n, s, e in _spans(hits.functions, last)],
    }


def report(files: dict[str, FileHits], fmt: str, branch_data: bool) -> dict[str, Any]:
    """The contract's ``Coverage`` of every file, totals summed over files."""
    out = [file_report(path, hits, branch_data) for path, hits in sorted(files.items())]
    statements = sum(f["statements"] for f in out)
    covered = statements - sum(len(f["missing_lines"]) for f in out)
    branches = sum(f["num_branches"] for f in out)
    covered_branches = branches - sum(len(f["missing_branches"]) for f in out)
    return {
        "format": fmt,
        "branch_data": branch_data,
        "line_pct": _pct(covered, statements),
        "branch_pct": _pct(covered_branches, branches) if branches else None,
        "statements": statements,
        "covered_lines": covered,
        "num_branches": branches,
        "covered_branches": covered_branches,
        "files": out,
    }


def relative_to(root: Path) -> Callable[[str], str | None]:
    """A tool's file name → its path relative to ``root``; None for a file outside it."""
    resolved = root.resolve()

    def rel(name: str) -> str | None:
        path = Path(name)
        if not path.is_absolute():
            path = resolved / path
        try:
            rel_path = Path(_normalise(path)).relative_to(resolved)
        except ValueError:
            return None
        return rel_path.as_posix() if rel_path.parts and ".." not in rel_path.parts else None

    return rel


def _normalise(path: Path) -> str:
    # Resolve ".." without following links: a job's link must not move a file into or out of the repository.
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if len(parts) > 1:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return str(PurePosixPath(*parts))


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CoverageFormatError(f"{what}: {text!r} is not a number") from None


# --- LCOV ---------------------------------------------------------------------------------------------------


def from_lcov(text: str, root: Path, fmt: str = "lcov") -> dict[str, Any]:
    """LCOV tracefile (``SF``/``FN``/``FNDA``/``DA``/``BRDA`` records, ``end_of_record``). Two records of one file
    (two runs' tracefiles, one after the other) are read as one: a line's most hits, a branch taken by either."""
    rel = relative_to(root)
    files: dict[str, FileHits] = {}
    current: FileHits | None = None
    has_branches = False
    for number, raw in enumerate(text.splitlines(), 1):
        tag, _, value = raw.strip().partition(":")
        where = f"lcov line {number}"
        if tag == "SF":
            path = rel(value)
            current = files.setdefault(path, FileHits()) if path else None
        elif tag == "end_of_record":
            current = None
        elif current is None:
            continue
        elif tag == "DA":
            line, count = value.split(",")[:2]
            current.hit(_int(line, where), _int(count, where))
        elif tag == "FN":  # FN:<line>[,<end line>],<name>; a name may hold commas (Rust's `pad::<_, _>`)
            start, _, name = value.partition(",")
            end_text, sep, rest = name.partition(",")
            end = _int(end_text, where) if sep and end_text.isdigit() else None
            current.function(rest if end is not None else name, _int(start, where), end)
        elif tag == "BRDA":
            has_branches = True
            line, block, branch, taken = value.split(",")[:4]
            current.branch(_int(line, where), (block, branch), taken not in ("-", "0"))
    if not files and "SF:" not in text:  # empty or recordless (c8 when it measured only excluded files): not 100 %
        raise NoCoverageError("no coverage: the LCOV tracefile has no SF record")
    return report(files, fmt, has_branches)


# --- Go coverprofile ------------------------------------------------------------------------------------------

_BLOCK = re.compile(r"^(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)$")
_FUNC = re.compile(r"^(.+?):(\d+):\s+(\S+)\s+[\d.]+%$")
_RECEIVER = re.compile(r"^\s*func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)")


def go_path(name: str, modules: dict[str, str]) -> str | None:
    """An import path (``example.com/m/pkg``, or a file's: ``example.com/m/pkg/x.go``) → its repository path
    (``.`` for a module's root), by the longest module it is in; None outside every module."""
    for module in sorted(modules, key=len, reverse=True):
        if name == module or name.startswith(module + "/"):
            return PurePosixPath(modules[module], name[len(module) :].lstrip("/")).as_posix()
    return None


def _go_lines(source: list[str], start: int, end: int) -> Iterable[int]:
    """The lines of a block that hold code: not blank, not a comment, not a lone brace."""
    for n in range(start, end + 1):
        text = source[n - 1].strip() if 0 < n <= len(source) else "x"
        if text and text not in ("{", "}", ")", "})") and not text.startswith("//"):
            yield n


def from_go(profile: str, functions: str, modules: dict[str, str], root: Path) -> dict[str, Any]:
    """``go test -coverprofile`` (blocks: ``file:l.c,l.c statements count``) and ``go tool cover -func`` (each
    function's first line). ``modules`` maps each module path to its directory in the repository. A line's hits
    are its blocks' highest count; coverprofile has no branches."""
    files: dict[str, FileHits] = {}
    sources: dict[str, list[str]] = {}
    lines = profile.splitlines()
    if not lines or not lines[0].startswith("mode:"):
        raise CoverageFormatError("not a Go coverprofile: no 'mode:' line first")
    for number, raw in enumerate(lines[1:], 2):
        if not raw.strip():
            continue
        match = _BLOCK.match(raw.strip())
        if match is None:
            raise CoverageFormatError(f"coverprofile line {number}: {raw[:120]!r} is not a block")
        path = go_path(match[1], modules)
        if path is None:
            continue
        if path not in sources:
            sources[path] = _read_lines(root / path)
        hits = files.setdefault(path, FileHits())
        for line in _go_lines(sources[path], int(match[2]), int(match[4])):
            hits.hit(line, int(match[7]))
    for raw in functions.splitlines():
        match = _FUNC.match(raw.strip())
        if match is None or (path := go_path(match[1], modules)) not in files:
            continue
        start = int(match[2])
        receiver = _RECEIVER.match(sources[path][start - 1]) if start <= len(sources[path]) else None
        files[path].functions.append((f"{receiver[1]}.{match[3]}" if receiver else match[3], start, None))
    for path, hits in files.items():  # a function ends where its last block does
        _end_functions(hits, sources[path])
    return report(files, "go-coverprofile", branch_data=False)


def _end_functions(hits: FileHits, source: list[str]) -> None:
    ended = []
    for name, start, end in _spans(hits.functions, max(hits.lines, default=0)):
        body = [n for n in hits.lines if start <= n <= end]
        last = max(body, default=start)
        while last < min(end, len(source)) and source[last].strip() in ("}", ")", "})"):
            last += 1  # the closing brace belongs to the function
        ended.append((name, start, last))
    hits.functions = ended


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def go_modules(root: Path) -> dict[str, str]:
    """Module path → directory, for every ``go.mod`` in the repository (a go.work's modules included)."""
    found: dict[str, str] = {}
    for gomod in sorted(root.rglob("go.mod")):
        if any(part in ("vendor", "testdata") or part.startswith(".") for part in gomod.relative_to(root).parts):
            continue
        for line in _read_lines(gomod):
            if line.startswith("module "):
                found[line.split()[1].strip('"')] = gomod.parent.relative_to(root).as_posix()
                break
    return found


# --- Cobertura XML -------------------------------------------------------------------------------------------

_CONDITION = re.compile(r"\((\d+)/(\d+)\)")


def _xml(text: str, what: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise CoverageFormatError(f"{what} is not well-formed XML: {exc}") from None


def from_cobertura(
    text: str, root: Path, functions: Callable[[Path], list[tuple[str, int, int | None]]] | None = None
) -> dict[str, Any]:
    """Cobertura XML (coverage.py's ``coverage xml``, jest's and c8's ``cobertura`` reporter, JaCoCo converters):
    ``<class filename>`` lines with hits and ``condition-coverage="50% (1/2)"`` branches, methods by name; a file
    that names none gets ``functions(source)`` when given (coverage.py's XML lists no methods)."""
    tree = _xml(text, "Cobertura report")
    if tree.tag != "coverage":
        raise CoverageFormatError(f"not a Cobertura report: root element <{tree.tag}>")
    sources = [s.text.strip() for s in tree.iter("source") if s.text and s.text.strip()] or ["."]
    rel = relative_to(root)
    files: dict[str, FileHits] = {}
    has_branches = False
    for cls in tree.iter("class"):
        name = cls.get("filename", "")
        path = next((p for s in sources if (p := rel(str(Path(s) / name))) and (root / p).is_file()), rel(name))
        if path is None:
            continue
        hits = files.setdefault(path, FileHits())
        lines = cls.find("lines")
        for line in lines.iter("line") if lines is not None else ():
            number = _int(line.get("number", ""), f"{path} line")
            hits.hit(number, _int(line.get("hits", "0"), f"{path}:{number} hits"))
            if line.get("branch") == "true" and (cond := _CONDITION.search(line.get("condition-coverage", ""))):
                has_branches = True
                taken, total = int(cond[1]), int(cond[2])
                hits.branches[number] = [i < taken for i in range(total)]
        for method in cls.iter("method"):
            numbers = [int(n) for ln in method.iter("line") if (n := ln.get("number", "")).isdigit()]
            if numbers:
                hits.functions.append((method.get("name", "?"), min(numbers), max(numbers)))
    for path, hits in files.items() if functions is not None else ():
        hits.functions = hits.functions or functions(root / path)
    return report(files, "cobertura", has_branches)


# --- JaCoCo XML ----------------------------------------------------------------------------------------------


def from_jacoco(text: str, root: Path, source_dirs: list[str]) -> dict[str, Any]:
    """JaCoCo's XML report: ``<sourcefile>`` lines (``mi``/``ci`` instructions, ``mb``/``cb`` branches) under
    each ``<package>``, methods by first line; ``source_dirs`` are where the repository keeps its sources
    (``src/main/java``, per module), to turn ``com/acme/Foo.java`` into a repository path."""
    tree = _xml(text, "JaCoCo report")
    if tree.tag != "report":
        raise CoverageFormatError(f"not a JaCoCo report: root element <{tree.tag}>")
    files: dict[str, FileHits] = {}
    has_branches = False
    for package in tree.iter("package"):
        pkg = package.get("name", "")
        methods: dict[str, list[tuple[str, int, int | None]]] = {}
        for cls in package.iter("class"):
            short = cls.get("name", "").rsplit("/", 1)[-1].replace("$", ".")
            for method in cls.iter("method"):
                if (line := method.get("line", "")).isdigit():
                    entry = (f"{short}.{method.get('name', '?')}", int(line), None)
                    methods.setdefault(cls.get("sourcefilename", ""), []).append(entry)
        for sourcefile in package.iter("sourcefile"):
            name = f"{pkg}/{sourcefile.get('name', '')}" if pkg else sourcefile.get("name", "")
            path = next((f"{d}/{name}".lstrip("/") for d in source_dirs if (root / d / name).is_file()), None)
            if path is None:
                continue
            hits = files.setdefault(path, FileHits())
            for line in sourcefile.iter("line"):
                number = _int(line.get("nr", ""), f"{path} line")
                missed, covered = (_int(line.get(k, "0"), f"{path}:{number}") for k in ("mi", "ci"))
                missed_b, covered_b = (_int(line.get(k, "0"), f"{path}:{number}") for k in ("mb", "cb"))
                if missed or covered:
                    hits.hit(number, covered)
                if missed_b or covered_b:
                    has_branches = True
                    hits.branches[number] = [True] * covered_b + [False] * missed_b
            hits.functions += [m for m in methods.get(sourcefile.get("name", ""), []) if m[0] != "?"]
    return report(files, "jacoco", has_branches)
