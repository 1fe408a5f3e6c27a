"""Code around a target, from the code index when there is one, else straight from the commit's tree."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from mendflow.errors import MendflowError

log = logging.getLogger(__name__)


class SnippetSource(Protocol):
    """The part of rag_indexer's CodeIndex the planner and builder use."""

    def snippet(self, ref: str, radius: int = ...) -> Any: ...

    def search_files(self, query: str, k: int = ...) -> list[Any]: ...


def numbered(text: str, first_line: int) -> str:
    return "\n".join(f"{first_line + i:>5} | {line}" for i, line in enumerate(text.splitlines()))


def from_source(source: str, start: int, end: int, radius: int) -> tuple[int, str]:
    lines = source.splitlines()
    lo = max(1, start - radius)
    hi = min(len(lines), end + radius)
    return lo, "\n".join(lines[lo - 1 : hi])


def snippet(
    path: str,
    start: int,
    end: int,
    radius: int,
    source: str,
    index: SnippetSource | None = None,
    max_lines: int = 200,
) -> str:
    """Line-numbered code of ``path`` lines [start-radius, end+radius], at most ``max_lines`` lines."""
    first, text = 0, ""
    if index is not None:
        try:
            hit = index.snippet(f"{path}:{start}-{end}", radius=radius)
            first, text = int(hit.start_line), str(hit.text)
        except (MendflowError, KeyError, ValueError, AttributeError) as exc:
            log.info("code index has no snippet for %s:%s-%s (%s); reading the commit", path, start, end, exc)
    if not text:
        first, text = from_source(source, start, end, radius)
    lines = text.splitlines()[:max_lines]
    return numbered("\n".join(lines), first)
