"""What a grep learns from a regex's parse before running it: the literals every match holds (to skip files),
the literal every match starts with (to try the regex only there), and whether its bytes twin may run on a
grep pack in place. Imported only for ``--regex``.
"""

from __future__ import annotations

from rag_indexer import re_core
from rag_indexer.grep import GrepQuery, bad_pattern

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    import re
    from typing import Any

# re's own parser (3.11: re._parser) gives the parsed pattern; no public API exposes it (re_core: why not
# through ``import re``).
_parser: Any = re_core.parser
_c: Any = re_core.constants
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
_NEWLINE = ord("\n")
# Anchors that hold the same within a line searched alone as within the whole text (``^``/``$`` are
# MULTILINE's; a lone line starts after a newline and ends before one). \A and \Z do not.
_LINE_ANCHORS = {_c.AT_BEGINNING, _c.AT_BEGINNING_LINE, _c.AT_END, _c.AT_END_LINE, _c.AT_BOUNDARY}
_LINE_ANCHORS |= {_c.AT_NON_BOUNDARY}
# Classes that never hold a newline: \d, \w, \S.
_LINE_CATEGORIES = {_c.CATEGORY_DIGIT, _c.CATEGORY_WORD, _c.CATEGORY_NOT_SPACE}
# What a line's search in a whole buffer (a grep pack) may see that the file's own text would not: context
# before the file (lookbehind, \A) or conditionals on groups. A regex holding any is run on decoded text.
_CONTEXT = {_c.ASSERT, _c.ASSERT_NOT, _c.GROUPREF_EXISTS}


def compile_regex(pattern: str, ignore_case: bool) -> GrepQuery:
    flags = (re_core.IGNORECASE if ignore_case else 0) | re_core.MULTILINE
    try:
        compiled = re_core.compile(pattern, flags)
    except (re_core.error, OverflowError, RecursionError) as exc:
        raise bad_pattern(pattern, exc) from exc
    ignore_case = bool(compiled.flags & re_core.IGNORECASE)
    parsed = parse(pattern, flags)
    literals = required_literals(parsed)
    if ignore_case:
        return GrepQuery(pattern, literals, ignore_case, compiled=compiled)
    twin = _bytes_twin(pattern, parsed, flags)
    if len(parsed) and parsed[0][0] is _c.LITERAL:  # re finds its own literal prefix fastest
        return GrepQuery(pattern, literals, False, compiled=compiled, byte_regex=twin)
    prefix = literal_prefix(parsed) or None
    anchor = max(literals, key=len) if literals and not prefix and stays_in_line(parsed, compiled.flags) else None
    return GrepQuery(pattern, literals, False, compiled=compiled, prefix=prefix, anchor=anchor, byte_regex=twin)


def parse(pattern: str, flags: int = 0) -> Any:
    """``pattern`` as re's parser gives it (for the functions below)."""
    return _parser.parse(pattern, flags)


def _bytes_twin(pattern: str, parsed: Any, flags: int) -> re.Pattern[bytes] | None:
    """The regex compiled for bytes, when it matches plain ASCII bytes where the str regex matches their text
    (``GrepQuery.buffer_spans``): an ASCII pattern that looks at nothing outside its match."""
    if not pattern.isascii() or _looks_around(parsed):
        return None
    try:
        return re_core.compile(pattern.encode("ascii"), flags)
    except re_core.error:  # str-only syntax (\\N{...}, \\u...): the str regex runs on the decoded text
        return None


def _looks_around(items: Any) -> bool:
    return any(
        op in _CONTEXT or (op is _c.AT and arg is _c.AT_BEGINNING_STRING) or any(map(_looks_around, _parts(op, arg)))
        for op, arg in items
    )


def _parts(op: Any, arg: Any) -> list[Any]:
    """The sub-patterns of one parsed item."""
    if op is _c.SUBPATTERN:
        return [arg[3]]
    if op in _REPEATS:
        return [arg[2]]
    if op is _c.BRANCH:
        return list(arg[1])
    return [arg] if op is _c.ATOMIC_GROUP else []


def literal_prefix(parsed: Any) -> str:
    """The literal every match starts with, when anchors come first ('class ' of '^class \\w+'); else ''.

    re finds a regex's own literal prefix fast, but not past an anchor: there ``find`` locates the literal and
    the regex is tried only at each (4x faster than re alone on SymPy's '^class \\w+').
    """
    chars: list[str] = []
    anchored = False
    for op, arg in parsed:
        if op is _c.AT and not chars:
            anchored = True  # ^ or \b take no characters: the match still starts where the literal does
            continue
        if op is not _c.LITERAL:
            break
        chars.append(chr(arg))
    return "".join(chars) if anchored else ""


def required_literals(parsed: Any) -> tuple[str, ...]:
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
            elif op is _c.SUBPATTERN and not (arg[1] | arg[2]) & re_core.IGNORECASE:
                walk(arg[3])
            elif op in _REPEATS and arg[0] >= 1:
                flush()
                walk(arg[2])
                flush()
            else:
                flush()

    walk(parsed)
    flush()
    return tuple(run for run in runs if run)


def stays_in_line(parsed: Any, flags: int) -> bool:
    """True when no match of ``pattern`` can hold a newline or look past its line: then each line may be
    searched alone, with the same lines found as a search of the whole text.

    Conservative: lookarounds, conditionals, \\A, \\Z, DOTALL and any class that may hold a newline say no.
    """
    return not flags & re_core.DOTALL and _in_line(parsed)


def _in_line(items: Any) -> bool:
    return all(_item_in_line(op, arg) for op, arg in items)


def _item_in_line(op: Any, arg: Any) -> bool:
    if op is _c.LITERAL:
        return bool(arg != _NEWLINE)
    if op is _c.NOT_LITERAL:
        return bool(arg == _NEWLINE)
    if op is _c.ANY:
        return True  # without DOTALL (checked for the whole pattern, and per group below)
    if op is _c.IN:
        return _class_in_line(arg)
    if op is _c.AT:
        return arg in _LINE_ANCHORS
    if op is _c.SUBPATTERN:
        return not (arg[1] & re_core.DOTALL) and _in_line(arg[3])
    if op in _REPEATS or op is _c.BRANCH or op is _c.ATOMIC_GROUP:
        return all(_in_line(part) for part in _parts(op, arg))
    return op is _c.GROUPREF  # repeats a group checked here; lookarounds and conditionals say no


def _class_in_line(items: Any) -> bool:
    """A class that never holds a newline ([^x] holds one unless x is one: rare enough to say no)."""
    return all(
        (op is _c.LITERAL and arg != _NEWLINE)
        or (op is _c.RANGE and not arg[0] <= _NEWLINE <= arg[1])
        or (op is _c.CATEGORY and arg in _LINE_CATEGORIES)
        for op, arg in items
    )
