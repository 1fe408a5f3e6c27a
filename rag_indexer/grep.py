"""grep_like's pattern: how a grep finds its lines, plus the literal text every match must contain.

The literals let a store skip files (and symbol names) that cannot match before reading them; the query then
confirms every hit, so a loose prefilter costs time, never results.

A literal pattern is found with ``find`` and never needs ``re``: its import (~4 ms with enum and functools)
is a quarter of what ``mendflow grep`` may take. A regex is parsed by ``rag_indexer/grep_regex.py``.

Lines are found as (start, end) spans in a region of a buffer: a ``str``, or the UTF-8 bytes of a grep pack,
searched in place (``buffer_spans``), since copying or decoding a whole file costs more than searching it.
"""

from __future__ import annotations

import bisect
import itertools

from mendflow.errors import InputError
from rag_indexer.store.grams import CASE_FOLDS

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Any

    Spans = Iterator[tuple[int, int]]

# What re.IGNORECASE lets an ASCII letter match beyond its two cases: folding these and then lower() keeps a
# text's length and offsets, and an ASCII literal occurs in the folded text exactly where re.I matches it.
_TEXT_FOLDS = {ord(seq.decode()): letter.decode() for seq, letter in CASE_FOLDS}


class GrepQuery:
    """A compiled grep. A plain class: ``mendflow grep`` starts without ``typing`` (NamedTuple) or
    ``dataclasses`` (inspect, ast), ~2 and 5 ms of a command that should take rg's ~14 ms."""

    __slots__ = ("_regex", "anchor", "byte_regex", "fold", "ignore_case", "literals", "needle", "pattern", "prefix")

    def __init__(
        self,
        pattern: str,
        literals: tuple[str, ...],  # every match contains each of these (case-folded when ignore_case)
        ignore_case: bool,
        *,
        compiled: re.Pattern[str] | None = None,  # a regex's, compiled when it was checked
        needle: str | None = None,  # a literal pattern's text, found with find (lower-case under fold)
        fold: bool = False,  # find the needle in the folded text: an ignore-case ASCII literal
        prefix: str | None = None,  # the literal every match of a regex starts with (grep_regex)
        anchor: str | None = None,  # a literal of a regex whose matches never leave their line (grep_regex)
        byte_regex: re.Pattern[bytes] | None = None,  # the regex for plain ASCII bytes (grep_regex)
    ) -> None:
        self.pattern = pattern
        self._regex = compiled
        self.literals = literals
        self.ignore_case = ignore_case
        self.needle = needle
        self.fold = fold
        self.prefix = prefix
        self.anchor = anchor
        self.byte_regex = byte_regex

    @property
    def regex(self) -> re.Pattern[str]:
        """The pattern as ``re`` runs it (a literal's is compiled only when something asks for it)."""
        if self._regex is None:
            import re

            flags = (re.IGNORECASE if self.ignore_case else 0) | re.MULTILINE
            self._regex = re.compile(re.escape(self.pattern), flags)
        return self._regex

    def matches(self, text: str) -> bool:
        return next(self._spans(text), None) is not None

    def line_spans(self, text: str) -> Iterator[tuple[int, int, int]]:
        """(line number, start, end offset) of every line of ``text`` holding a match, in order."""
        line, pos = 1, 0
        for start, stop in self._spans(text):
            line += text.count("\n", pos, start)
            pos = start
            yield line, start, stop

    def lines(self, text: str) -> Iterator[tuple[int, str]]:
        """(line number, line) of every line holding a match, in order: what ``rg -n`` prints (a CRLF line
        keeps its \\r, as rg prints it)."""
        for line, start, stop in self.line_spans(text):
            yield line, text[start:stop]

    def _spans(self, text: str) -> Spans:
        if self.needle:
            return _found(_folded(text) if self.fold else text, self.needle, 0, len(text))
        return _regex_spans(text, self.prefix, self.anchor, self.regex, 0, len(text))

    def buffer_spans(self, data: Any, start: int, stop: int, plain: bool) -> Spans | None:
        """Matching lines' byte spans in ``data[start:stop]``, a text's UTF-8 (surrogatepass) bytes in a larger
        buffer (an mmap), searched in place; None when only the decoded text can tell.

        ``plain``: the text is ASCII without the separators (\\x1c-\\x1f) str's \\s matches and bytes' does not,
        so a regex without lookarounds finds the same lines in its bytes. A literal's bytes occur in any text's
        bytes exactly where the literal occurs in the text (UTF-8 never starts a character inside another).
        """
        if self.needle and not self.fold:
            return _found(data, self.needle.encode("utf-8", "surrogatepass"), start, stop)
        if self.needle:
            return _folded_spans(data[start:stop], self.needle, start)
        if self.byte_regex is None or not plain:
            return None
        prefix, anchor = (None if x is None else x.encode() for x in (self.prefix, self.anchor))
        return _regex_spans(data, prefix, anchor, self.byte_regex, start, stop)


def compile_query(pattern: str, regex: bool, ignore_case: bool) -> GrepQuery:
    literals = (pattern,) if pattern else ()
    if regex:
        from rag_indexer.grep_regex import compile_regex

        return compile_regex(pattern, ignore_case)
    if ignore_case and not pattern.isascii():
        return GrepQuery(pattern, literals, ignore_case)  # re's IGNORECASE decides
    needle = pattern.lower() if ignore_case else pattern
    return GrepQuery(pattern, literals, ignore_case, needle=needle, fold=ignore_case)


def bad_pattern(pattern: str, reason: object) -> InputError:
    return InputError(f"bad regular expression {pattern!r}: {reason}", hint="fix the regex or pass regex=False")


def _folded(text: str) -> str:
    if text.isascii() or not any(chr(c) in text for c in _TEXT_FOLDS):
        return text.lower()  # no character lower() would lengthen: U+0130 is one of the folds
    return text.translate(_TEXT_FOLDS).lower()  # slow (a dict lookup per character): rare


def _folded_spans(data: bytes, needle: str, offset: int) -> Spans | None:
    """An ASCII needle's spans in a copy of a text's bytes, lowered (ASCII letters only: no byte moves)."""
    if not data.isascii() and any(seq in data for seq, _ in CASE_FOLDS):
        return None
    return ((start + offset, stop + offset) for start, stop in _found(data.lower(), needle.encode(), 0, len(data)))


def _line_of(buffer: Any, found: int, start: int, stop: int) -> tuple[int, int]:
    """The span of the line holding offset ``found`` (``start``-``stop`` bounds the text)."""
    newline = "\n" if isinstance(buffer, str) else b"\n"
    before = buffer.rfind(newline, start, found)
    after = buffer.find(newline, found, stop)
    return (start if before == -1 else before + 1), (stop if after == -1 else after)


def _found(buffer: Any, needle: Any, start: int, stop: int) -> Spans:
    """Lines holding ``needle``, found with find (in a str, bytes or mmap, as the needle is)."""
    found = buffer.find(needle, start, stop)
    while found != -1:
        first, last = _line_of(buffer, found, start, stop)
        yield first, last
        # Past this line (reported already) and past this match: matches do not overlap, as re's do not.
        found = buffer.find(needle, max(last, found + len(needle)), stop)


def _regex_spans(buffer: Any, prefix: Any, anchor: Any, compiled: Any, start: int, stop: int) -> Spans:
    if prefix:
        return _prefixed(buffer, prefix, compiled, start, stop)
    if anchor:
        return _anchored(buffer, anchor, compiled, start, stop)
    return _scanned(buffer, compiled, start, stop)


def _anchored(buffer: Any, anchor: Any, compiled: Any, start: int, stop: int) -> Spans:
    """Lines of a regex whose every match lies in one line and holds ``anchor``: only the lines holding the
    anchor (found with find) are searched, each on its own."""
    found = buffer.find(anchor, start, stop)
    while found != -1:
        first, last = _line_of(buffer, found, start, stop)
        if compiled.search(buffer, first, last):
            yield first, last
        found = buffer.find(anchor, last, stop)


def _prefixed(buffer: Any, prefix: Any, compiled: Any, start: int, stop: int) -> Spans:
    """Lines of a regex whose every match starts with ``prefix``: it is tried only where the prefix is (found
    with find), after the end of the match before, as finditer would."""
    last = -1
    found = buffer.find(prefix, start, stop)
    while found != -1:
        m = compiled.match(buffer, found, stop)
        if m is None:
            found = buffer.find(prefix, found + 1, stop)
            continue
        if found > last:  # else another match on a line already reported
            first, last = _line_of(buffer, found, start, stop)
            yield first, last
        found = buffer.find(prefix, m.end(), stop)  # a match is never empty: it holds the prefix


def _scanned(buffer: Any, compiled: Any, start: int, stop: int) -> Spans:
    last = -1
    for m in compiled.finditer(buffer, start, stop):
        if m.start() <= last:
            continue  # another match on a line already reported
        first, last = _line_of(buffer, m.start(), start, stop)
        yield first, last


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
