"""Lint findings as the runner writes them (``path:line:col CODE message``), and which of them are new.

"Clean as you code": a build fails only on findings its commit brought. A finding is the same one in two
commits when its file, code and message are the same; its line is not compared, since any edit above it moves
it. Counts matter: a second identical finding in a file is new even though the first one was already there.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+) (?P<code>\S+)(?: (?P<message>.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Finding:
    path: str
    code: str
    message: str

    @property
    def identity(self) -> tuple[str, str, str]:
        """What stays the same when lines move: file, code, message."""
        return (self.path, self.code, self.message)


def parse(line: str) -> Finding | None:
    """The finding on one report line, or None for a line in no known shape."""
    m = _FINDING.match(line)
    return Finding(m["path"], m["code"], m["message"] or "") if m else None


def identity(line: str) -> tuple[str, str, str]:
    """A line's identity; a line in no known shape is its own identity (compared whole)."""
    found = parse(line)
    return found.identity if found else (line, "", "")


def split_new(findings: list[str], baseline: list[str]) -> tuple[list[str], list[str]]:
    """``findings`` as (new, pre-existing): each baseline finding excuses at most one identical finding."""
    excused = Counter(identity(b) for b in baseline)
    new: list[str] = []
    old: list[str] = []
    for line in findings:
        key = identity(line)
        if excused[key] > 0:
            excused[key] -= 1
            old.append(line)
        else:
            new.append(line)
    return new, old
