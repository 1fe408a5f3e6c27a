"""Maven's compiler output (``[ERROR] /abs/File.java:[12,5] message``, javac's detail lines under it) read into
``path:line:col message`` findings, paths relative to the repository root."""

from __future__ import annotations

import re
from pathlib import Path

_ERROR = re.compile(r"^\[ERROR\] (?P<file>/\S+?\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<message>.*)$")
_DETAIL = re.compile(r"^\s+(?P<key>symbol|location|required|found|reason):\s+(?P<value>.*)$")


def compile_errors(output: str, root: Path) -> list[str]:
    """Each compile error once, in the order Maven printed them; javac's ``symbol:`` detail joins its line."""
    errors: dict[str, str] = {}  # an error (Maven repeats them in its summary) → it with its symbol
    last = ""
    for line in output.splitlines():
        if match := _ERROR.match(line.rstrip()):
            path = Path(match["file"])
            try:
                shown = path.relative_to(root).as_posix()
            except ValueError:
                shown = path.as_posix()
            key = f"{shown}:{match['line']}:{match['col']} {match['message'].strip()}"
            last = "" if key in errors else key
            errors.setdefault(key, key)
        elif last and (detail := _DETAIL.match(line)) and detail["key"] == "symbol":
            errors[last] += f" ({detail['value'].strip()})"
            last = ""
    return list(errors.values())
