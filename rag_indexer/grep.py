"""grep_like's pattern: the compiled regex plus the literal text every match must contain.

The literals let a store skip files (and symbol names) that cannot match before reading them; ``re`` then
confirms every hit, so a loose prefilter costs time, never results.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from mendflow.errors import InputError

# re's own parser (3.11: re._parser) gives the parsed pattern; no public API exposes it.
_parser: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}


class GrepQuery(NamedTuple):  # not a dataclass: its import (inspect, ast) costs grep 5 ms
    regex: re.Pattern[str]
    literals: tuple[str, ...]  # every match contains each of these (case-folded when ignore_case)
    ignore_case: bool
    # For an ignore-case ASCII literal, the pattern to run over an ASCII text's lower(): re's IGNORECASE runs
    # ~7x slower than a plain search, and lower() keeps every offset of ASCII text, so the matches are the same.
    folded: re.Pattern[str] | None = None

    def matches(self, text: str) -> bool:
        return self.regex.search(text) is not None

    def line_spans(self, text: str) -> Iterator[tuple[int, int, int]]:
        """(line number, start, end offset) of every line of ``text`` holding a match, in order."""
        if self.folded is not None and text.isascii():
            return _line_spans(text.lower(), self.folded)
        return _line_spans(text, self.regex)

    def lines(self, text: str) -> Iterator[tuple[int, str]]:
        """(line number, line) of every line holding a match, in order: what ``rg -n`` prints."""
        for line, start, stop in self.line_spans(text):
            yield line, text[start:stop].removesuffix("\r")


def compile_query(pattern: str, regex: bool, ignore_case: bool) -> GrepQuery:
    flags = (re.IGNORECASE if ignore_case else 0) | re.MULTILINE
    try:
        compiled = re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error as exc:
        hint = "fix the regex or pass regex=False"
        raise InputError(f"bad regular expression {pattern!r}: {exc}", hint=hint) from exc
    if not regex:
        folded = re.compile(re.escape(pattern.lower())) if ignore_case and pattern.isascii() else None
        return GrepQuery(compiled, (pattern,) if pattern else (), ignore_case, folded)
    return GrepQuery(compiled, required_literals(pattern, flags), bool(compiled.flags & re.IGNORECASE))


def _line_spans(text: str, compiled: re.Pattern[str]) -> Iterator[tuple[int, int, int]]:
    line, pos, stop = 1, 0, -1
    for m in compiled.finditer(text):
        if m.start() <= stop:
            continue  # another match on a line already reported
        line += text.count("\n", pos, m.start())
        pos = m.start()
        start = text.rfind("\n", 0, pos) + 1
        stop = text.find("\n", pos)
        stop = len(text) if stop == -1 else stop
        yield line, start, stop


def required_literals(pattern: str, flags: int = 0) -> tuple[str, ...]:
    """Runs of literal characters that every match of ``pattern`` contains, e.g. 'def _eval_' and '(self)'.

    Conservative: alternations, classes and optional parts end a run and add nothing; a repeat of at least
    one contributes its own runs. Parts under a local ignore-case flag add nothing.
    """
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    def walk(items: Any) -> None:
        for op, arg in items:
            if op is _c.LITERAL:
                current.append(chr(arg))
            elif op is _c.AT:
                continue  # anchors take no characters: the literals on either side stay adjacent
            elif op is _c.SUBPATTERN and not (arg[1] | arg[2]) & re.IGNORECASE:
                walk(arg[3])
            elif op in _REPEATS and arg[0] >= 1:
                flush()
                walk(arg[2])
                flush()
            else:
                flush()

    walk(_parser.parse(pattern, flags))
    flush()
    return tuple(run for run in runs if run)


class NameList:
    """Distinct symbol names, searchable for a query without one regex call per name."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.joined = "\n".join(names)  # names never hold a newline
        self.starts = list(itertools.accumulate((len(n) + 1 for n in names[:-1]), initial=0))

    def matching(self, query: GrepQuery) -> list[str]:
        if not query.literals or query.ignore_case:
            return [n for n in self.names if query.matches(n)]
        # str.find over one string runs in C; only names holding the longest literal meet the regex.
        literal = max(query.literals, key=len)
        found: list[str] = []
        pos = self.joined.find(literal)
        while pos != -1:
            i = bisect.bisect_right(self.starts, pos) - 1
            if query.matches(self.names[i]):
                found.append(self.names[i])
            pos = self.joined.find(literal, self.starts[i + 1]) if i + 1 < len(self.starts) else -1
        return found
