"""Progress lines on the job's stdout, one per finished module (Pynguin) or gated file (files mode).

The launcher streams the job's output to the trusted side while the job runs; it picks out lines of the form
``MENDFLOW_PROGRESS {"done": 2, "total": 5, "item": "calc.core"}`` (``mendflow.progress.LINE_PREFIX``) and
checks them: ``total`` must be the number of modules or files it asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

PREFIX = "MENDFLOW_PROGRESS "
ITEM_CHARS = 200


def report(done: int, total: int, item: str) -> None:
    """One line, flushed at once: the job's stdout is a file the launcher tails, not a terminal."""
    fields = {"done": done, "total": total, "item": item[:ITEM_CHARS]}
    print(PREFIX + json.dumps(fields, ensure_ascii=True), flush=True)  # ASCII: no newline can hide in item


class GatedFiles:
    """Files mode: a file is done when a gate drops it, or when the last gate is through with it."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.pending = sorted(set(paths))
        self.total, self.done = len(self.pending), 0

    def alive(self, paths: Iterable[str]) -> None:
        """The files still in the gates after one of them; the others are reported done."""
        still = set(paths)
        for path in self.pending:
            if path not in still:
                self.done += 1
                report(self.done, self.total, path)
        self.pending = [p for p in self.pending if p in still]
