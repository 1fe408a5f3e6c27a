"""V8's coverage of a package's own scripts (``NODE_V8_COVERAGE``) as LCOV, for a test command with no c8 of the
repository's to report it (close-with-grace's `tape | tap-dot`, mocha without c8 or nyc).

It counts as c8 10 does through v8-to-istanbul 9: the processes' ranges of a script are merged as c8 merges them
(``v8_merge``); every line starts at one hit; each range, in order, sets the lines it covers whole to its count,
unless a ``c8 ignore`` comment keeps them; a block range is a branch, a named function's first range a function.
It reports the scripts c8 reports by default: under the package, not in ``node_modules``, not test files or tool
configurations (the default ``exclude`` of @istanbuljs/schema 0.1.6). A script that ran from a source map
(compiled TypeScript) is left out: its ranges are the compiled code's, and mapping them back is c8's work.

Kept in-house rather than c8 in the image: the image carries no npm package of mendflow's own (its Node tools
are the repository's, at the repository's versions), and this is the one step of c8 a plain script needs.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from . import v8_merge

_EXTENSIONS = "js|cjs|mjs|ts|tsx|jsx"
# @istanbuljs/schema 0.1.6's default-exclude.js, the files c8 and nyc leave out unless configured otherwise.
_DEFAULT_EXCLUDE = re.compile(
    rf"""^(?:
        coverage/
      | packages/[^/]+/tests?/
      | tests?/
      | test(?:-[^/]*)?\.(?:{_EXTENSIONS})$
    )
    | (?:^|/)(?:
        [^/]*\.d\.ts$
      | [^/]*[.-]test\.(?:{_EXTENSIONS})$
      | __tests__/
      | (?:ava|babel|nyc)\.config\.(?:js|cjs|mjs)$
      | jest\.config\.(?:js|cjs|mjs|ts)$
      | (?:karma|rollup|webpack)\.config\.js$
      | \.(?:eslint|mocha)rc\.(?:js|cjs)$
    )""",
    re.VERBOSE,
)
# The scripts whose V8 offsets are the file's: JavaScript, run as it is written.
_SCRIPT = re.compile(r"\.(?:js|cjs|mjs)$")
_IGNORE_NEXT_COUNT = re.compile(r"^\W*/\* (?:[cv]8|node:coverage) ignore next (?P<count>[0-9]+)")
_IGNORE_NEXT_ALONE = re.compile(r"^\W*/\* (?:[cv]8|node:coverage) ignore next")
_IGNORE_NEXT = re.compile(r"/\* (?:[cv]8|node:coverage) ignore next")
_IGNORE_RANGE = re.compile(r"/\* [c|v]8 ignore (?P<mode>start|stop)|/\* node:coverage (?P<node>enable|disable)")


def own_scripts(v8_dir: Path, src: Path) -> bool:
    """V8's coverage files in ``v8_dir`` cut to the package's own scripts; whether any is left. No other file is
    reported (``node_modules``, Node's and npm's own are outside the default set), yet each is parsed: a chained
    jest's 6.6 MB of them took process-warning 5.1.1's c8 report a second."""
    own, kept = f"{src.resolve().as_uri()}/", False
    for path in v8_dir.glob("*.json"):
        data = _cut_to(json.loads(path.read_text(encoding="utf-8")), own)
        if data["result"]:
            path.write_text(json.dumps(data), encoding="utf-8")
            kept = True
        else:
            path.unlink()
    return kept


def _cut_to(data: dict[str, Any], own: str) -> dict[str, Any]:
    """One V8 coverage file's scripts under ``own`` (a URL prefix), but for those in its ``node_modules``."""
    scripts = [s for s in data.get("result", []) if s.get("url", "").startswith(own)]
    scripts = [s for s in scripts if "node_modules" not in s["url"][len(own) :].split("/")]
    urls = {s["url"] for s in scripts}
    maps = {url: found for url, found in data.get("source-map-cache", {}).items() if url in urls}
    return {**data, "result": scripts, "source-map-cache": maps}


@dataclass
class _Line:
    number: int
    start: int  # UTF-16 offsets in the file, as V8 counts; the end before the line's newline
    end: int
    ignored: bool
    hits: int = 1  # v8-to-istanbul starts every line at one, and lets the ranges set it


class _Source:
    """A script's lines, as v8-to-istanbul splits them: after each newline, trailing white space dropped."""

    def __init__(self, text: str) -> None:
        text = text.rstrip()
        self.lines: list[_Line] = []
        position, ignore_next, ignore_all = 0, 0, False
        for number, raw in enumerate(re.split(r"(?<=\n)", text) if text else [], 1):
            length = _utf16(raw)
            newline = 2 if raw.endswith("\r\n") else 1 if raw.endswith("\n") else 0
            line = _Line(number, position, position + length - newline, ignore_next > 0 or ignore_all)
            ignore_next = max(ignore_next - 1, 0)
            position += length
            self.lines.append(line)
            if found := _ignore(raw):
                line.ignored = True
                ignore_next, ignore_all = found[0], found[1] if found[1] is not None else ignore_all
        self.eof = position
        self._starts = [line.start for line in self.lines]
        self._ends = [line.end for line in self.lines]

    def touched(self, start: int, end: int) -> list[_Line]:
        """The lines a range ``[start, end]`` touches (v8-to-istanbul's ``sliceRange``)."""
        return self.lines[bisect.bisect_right(self._ends, start) : bisect.bisect_right(self._starts, end)]


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _ignore(raw: str) -> tuple[int, bool | None] | None:
    """A ``c8 ignore`` comment's effect: how many lines after it to ignore, and whether a range starts (True) or
    stops (False) there; None for a line with none."""
    if found := _IGNORE_NEXT_COUNT.match(raw):
        return int(found["count"]), None
    if _IGNORE_NEXT_ALONE.match(raw):
        return 1, None
    if _IGNORE_NEXT.search(raw):
        return 0, None
    if found := _IGNORE_RANGE.search(raw):
        return 0, found["mode"] == "start" or found["node"] == "disable"
    return None


@dataclass
class _Covered:
    """One script's coverage in istanbul's terms: its lines' hits, its functions and branches."""

    source: _Source
    functions: list[tuple[int, str, int]] = field(default_factory=list)  # first line, name, hits
    branches: list[tuple[int, int]] = field(default_factory=list)  # first line, hits

    def apply(self, functions: list[v8_merge.Function]) -> None:
        """v8-to-istanbul's ``applyCoverage``: each range, in order, sets the lines it covers whole."""
        for function in functions:
            for i, (start, end, count) in enumerate(function.ranges):
                start, end = max(0, start), min(self.source.eof, end)
                if not (touched := self.source.touched(start, end)):
                    continue
                first = touched[0]
                if function.is_block:
                    self.branches.append((first.number, self._kept(first, count)))
                if function.name and (i == 0 or not function.is_block):
                    self.functions.append((first.number, function.name, self._kept(first, count)))
                for line in touched:
                    if start <= line.start and end >= line.end and not line.ignored:
                        line.hits = count

    @staticmethod
    def _kept(line: _Line, count: int) -> int:
        """A branch's or function's hits: one where a ``c8 ignore`` comment keeps its first line."""
        return 1 if line.ignored else count

    def lcov(self, rel: str) -> str:
        """The file's LCOV record, as istanbul's ``lcovonly`` reporter writes it."""
        lines = [1 if line.ignored else line.hits for line in self.source.lines]
        out = ["TN:", f"SF:{rel}", *(f"FN:{line},{name}" for line, name, _ in self.functions)]
        out += [f"FNF:{len(self.functions)}", f"FNH:{sum(1 for *_, hits in self.functions if hits)}"]
        out += [f"FNDA:{hits},{name}" for _, name, hits in self.functions]
        out += [f"DA:{n},{hits}" for n, hits in enumerate(lines, 1)]
        out += [f"LF:{len(lines)}", f"LH:{sum(1 for hits in lines if hits)}"]
        out += [f"BRDA:{line},{i},0,{hits}" for i, (line, hits) in enumerate(self.branches)]
        out += [f"BRF:{len(self.branches)}", f"BRH:{sum(1 for _, hits in self.branches if hits)}"]
        return "\n".join([*out, "end_of_record", ""])


def to_lcov(v8_dir: Path, src: Path) -> tuple[str, list[str]]:
    """The LCOV of the package's scripts V8 measured in ``v8_dir`` ('' if none), and those left out because they
    ran compiled (from a source map, or from a language V8 does not run)."""
    root = src.resolve()
    runs: dict[str, list[dict[str, Any]]] = {}
    compiled: set[str] = set()
    for data in _processes(v8_dir):
        for script in data.get("result", []):
            if (rel := _reported(script.get("url", ""), root)) is None:
                continue
            if script["url"] in data.get("source-map-cache", {}) or not _SCRIPT.search(rel):
                compiled.add(rel)
            else:
                runs.setdefault(rel, []).append(script)
    records = []
    for rel, scripts in sorted(runs.items()):
        try:
            # As read, newlines kept: V8 counts a CRLF's two characters, and a byte order mark.
            covered = _Covered(_Source((root / rel).read_bytes().decode("utf-8", errors="replace")))
            covered.apply(v8_merge.merged_functions(scripts))
        except (OSError, KeyError, TypeError, ValueError):  # gone since it ran, or ranges V8 did not write
            continue
        records.append(covered.lcov(rel))
    return "".join(records), sorted(compiled)


def _processes(v8_dir: Path) -> Iterator[dict[str, Any]]:
    """Each process's coverage file, one at a time (a suite's may be tens of megabytes, of which only the package's
    scripts are kept); none for one a process cut short."""
    for path in sorted(v8_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            yield data


def _reported(url: str, root: Path) -> str | None:
    """A script's path in the package, when c8 would report it by default."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    try:
        rel = Path(unquote(parsed.path)).relative_to(root).as_posix()
    except ValueError:
        return None
    if "node_modules" in rel.split("/") or _DEFAULT_EXCLUDE.search(rel):
        return None
    return rel
