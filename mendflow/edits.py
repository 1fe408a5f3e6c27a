"""Seed 004's three edit payloads applied to a file's text: shared by the heal stage and the test builder.

``update`` is the scalpel (its ``old_str`` must occur exactly once), ``patch`` a unified diff that must apply
cleanly (every context and removed line equal to the file's, at most an offset in line numbers, as ``git apply``
allows), ``rewrite`` the whole new content. A payload that cannot be applied as asked raises ``HealError`` with a
message written for the next attempt's prompt (the caller escalates to a bigger method, ``next_method``, or gives
up).

An LLM's payload is untrusted: its ``file_to_patch`` must be a relative, normalised path (``checked_path``); the
healer then reads that file from git, never from a work tree (``mendflow/heal/healer.py:Files``), and the test
builder edits only the candidate files it proposed itself (``mendflow/testgen/builder.py``). A services module:
the stages ``mendflow.heal`` and ``mendflow.testgen`` may not import each other.
"""

from __future__ import annotations

import difflib
import posixpath

from unidiff import PatchSet
from unidiff.constants import LINE_TYPE_NO_NEWLINE
from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk

from mendflow.contracts import HealEdit, HealMethod
from mendflow.errors import HealError

_NO_NEWLINE = "\\ No newline at end of file"
METHOD_ORDER = (HealMethod.UPDATE, HealMethod.PATCH, HealMethod.REWRITE)  # smallest first: the escalation


def next_method(method: HealMethod) -> HealMethod | None:
    """The next bigger method after ``method``; None after ``rewrite``."""
    i = METHOD_ORDER.index(method) + 1
    return METHOD_ORDER[i] if i < len(METHOD_ORDER) else None


def numbered(path: str, text: str) -> str:
    """``text`` with line numbers, framed by its path: how a prompt shows a file the answer may edit."""
    body = "\n".join(f"{n:>4} | {line}" for n, line in enumerate(text.splitlines(), 1))
    return f"=== {path} ===\n{body}\n=== end of {path} ==="


def apply_edit(edit: HealEdit, text: str) -> str:
    """``text`` with ``edit`` applied; HealError when the payload cannot be applied exactly as given."""
    if edit.update is not None:
        after = _apply_update(edit.update.old_str, edit.update.new_str, text)
    elif edit.patch is not None:
        after = _apply_patch(edit.patch, edit.file_to_patch, text)
    else:
        assert edit.new_content is not None  # HealEdit guarantees exactly one payload
        after = edit.new_content
    if after == text:
        raise HealError(f"the {edit.method.value} edit of {edit.file_to_patch} changes nothing")
    return after


def unified_diff(path: str, before: str, after: str) -> str:
    """A git-style unified diff (``a/``/``b/`` paths); a last line without newline is marked as git marks it."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}\n" for line in lines)


def diff_size(diff: str) -> int:
    """Changed lines of a unified diff: in each run of removed and added lines between context lines,
    max(removed, added), so a replaced line counts once (a rename on one line is 1, a line split in two is 2)."""
    total, removed, added = 0, 0, 0
    for tag in _line_tags(diff):
        if tag == "-":
            removed += 1
        elif tag == "+":
            added += 1
        elif tag != "\\":  # "\ No newline at end of file" belongs to the line before it
            total, removed, added = total + max(removed, added), 0, 0
    return total + max(removed, added)


def _line_tags(diff: str) -> list[str]:
    """'-', '+', ' ' or '\\' per line of the diff's hunks, '@' where a hunk starts; file headers left out (a
    diff unidiff cannot read, or reads as empty, is read line by line)."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        patch = None
    if patch:
        return [tag for f in patch for h in f for tag in ("@", *(line.line_type for line in h))]
    return [ln[:1] or " " for ln in diff.splitlines() if not ln.startswith(("+++ ", "--- "))]


# -- update -------------------------------------------------------------------------------------------------


def _apply_update(old: str, new: str, text: str) -> str:
    count = text.count(old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise HealError(
            f"update refused: old_str {where} in the file (it must occur exactly once)",
            hint="give a longer old_str with surrounding lines, or use a patch",
        )
    return text.replace(old, new, 1)


# -- patch --------------------------------------------------------------------------------------------------


def _apply_patch(patch: str, path: str, text: str) -> str:
    hunks = _parse_patch(patch, path)
    lines = text.splitlines()
    newline = "\r\n" if "\r\n" in text else "\n"
    ends_with_newline = text.endswith("\n") or not text
    out: list[str] = []
    cursor = 0
    for number, hunk in enumerate(hunks, 1):
        source = [_bare(line.value) for line in hunk.source_lines()]
        at = _locate(hunk, number, source, lines, cursor)
        out += lines[cursor:at]
        out += [_bare(line.value) for line in hunk.target_lines()]
        cursor = at + len(source)
        if cursor == len(lines):
            ends_with_newline = not _target_lacks_newline(hunk)
    out += lines[cursor:]
    if not out:
        return ""
    return newline.join(out) + (newline if ends_with_newline else "")


def _parse_patch(patch: str, path: str) -> list[Hunk]:
    if not patch.endswith("\n"):
        patch += "\n"
    if not any(line.startswith("--- ") for line in patch.splitlines()):
        patch = f"--- a/{path}\n+++ b/{path}\n{patch}"  # bare hunks: the file is the edit's file_to_patch
    try:
        files = PatchSet(patch)
    except UnidiffParseError as exc:
        raise HealError(f"patch refused: not a valid unified diff ({exc})", hint="recount the @@ line numbers") from exc
    if len(files) != 1:
        raise HealError(f"patch refused: it must change exactly one file, {path}, not {len(files)}")
    (patched,) = files
    if patched.is_added_file or patched.is_removed_file or patched.is_rename:
        raise HealError("patch refused: it may only modify an existing file, not add, remove or rename one")
    if patched.path not in (path, f"a/{path}", f"b/{path}"):
        raise HealError(f"patch refused: it changes {patched.path}, not {path}")
    if not len(patched):
        raise HealError("patch refused: it has no hunks")
    return list(patched)


def _locate(hunk: Hunk, number: int, source: list[str], lines: list[str], cursor: int) -> int:
    """Where ``hunk``'s source lines are in ``lines``: at its header's line, else the nearest exact match."""
    stated = hunk.source_start - 1 if hunk.source_length else hunk.source_start
    if not source:
        if cursor <= stated <= len(lines):
            return stated
        raise HealError(f"patch refused: hunk {number} ({_header(hunk)}) inserts at line {stated}, outside the file")
    found = [i for i in range(cursor, len(lines) - len(source) + 1) if lines[i : i + len(source)] == source]
    if not found:
        raise HealError(
            f"patch refused: hunk {number} ({_header(hunk)}) does not apply: {_mismatch(source, lines, stated)}",
            hint="context and removed lines must match the file exactly",
        )
    return min(found, key=lambda i: abs(i - stated))


def _mismatch(source: list[str], lines: list[str], stated: int) -> str:
    for offset, expected in enumerate(source):
        i = stated + offset
        found = lines[i] if 0 <= i < len(lines) else "<end of file>"
        if found != expected:
            return f"line {i + 1} is {found!r}, the hunk expects {expected!r}"
    return "its lines are not in the file after the previous hunk"


def _target_lacks_newline(hunk: Hunk) -> bool:
    """True when the hunk's last target line is followed by git's 'No newline at end of file' marker."""
    lacks = previous_is_target = False
    for line in hunk:
        if line.line_type == LINE_TYPE_NO_NEWLINE:
            lacks = lacks or previous_is_target
            continue
        previous_is_target = line.is_context or line.is_added
        lacks = lacks and not previous_is_target
    return lacks


def _header(hunk: Hunk) -> str:
    return f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"


def _bare(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


# -- paths -----------------------------------------------------------------------------------------------


def checked_path(path: str) -> str:
    """``path`` if it is a normalised path inside the repository (what a payload's ``file_to_patch`` must be)."""
    if not path or "\x00" in path or "\\" in path:
        raise HealError(f"refused path {path!r}: empty, or with a NUL or a backslash")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise HealError(f"refused path {path!r}: it must be relative to the repository root")
    if posixpath.normpath(path) != path or path.split("/")[0] == "..":
        raise HealError(f"refused path {path!r}: it must be normalised (no '.', '..' or empty parts) and inside")
    return path
