"""Seed 004's audit trail: every decision of one healing, in order, one JSON object per decision.

``keys.audit(sha, stage, seq)`` numbers the decisions; a resumed flow (or a later approval) appends after what
is stored and never overwrites it. Each object is ``{"seq", "kind", "time", "data"}``: ``kind`` names the
decision ("analysis", "repair", "attempt-failed", "gate", "quarantine", "outcome", "approval" …), ``time`` is UTC
ISO 8601 and ``data`` is what the caller recorded (kept apart, so a field of its own such as ``at`` or ``seq``
never clashes with the trail's).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from mendflow.errors import StoreError
from mendflow.keys import RepoKeys
from mendflow.store.base import ArtefactStore

log = logging.getLogger(__name__)

_CELL_CHARS = 300


class AuditTrail:
    def __init__(self, store: ArtefactStore, keys: RepoKeys, sha: str, stage: str) -> None:
        self.store = store
        self.keys = keys
        self.sha = sha
        self.stage = stage
        self._next: int | None = None  # read from the store on the first record

    @property
    def prefix(self) -> str:
        return f"{self.keys.heal(self.sha, self.stage)}/audit"

    def _stored(self) -> list[tuple[int, str]]:
        """(seq, key) of every stored decision, in order."""
        found = []
        for key in self.store.list(self.prefix):
            name = key.rsplit("/", 1)[-1]
            stem = name.removesuffix(".json")
            if name.endswith(".json") and stem.isdigit():
                found.append((int(stem), key))
        return sorted(found)

    def record(self, kind: str, **data: Any) -> str:
        """Append one decision after the last stored one; return its key."""
        if self._next is None:
            stored = self._stored()
            self._next = stored[-1][0] + 1 if stored else 1
        key = self.keys.audit(self.sha, self.stage, self._next)
        while self.store.exists(key):  # another trail of this healing wrote since: append after it
            self._next += 1
            key = self.keys.audit(self.sha, self.stage, self._next)
        item = {"seq": self._next, "kind": kind, "time": datetime.now(UTC).isoformat(), "data": data}
        self.store.put_bytes(key, json.dumps(item, indent=2, default=str).encode())
        self._next += 1
        return key

    def entries(self) -> list[dict[str, Any]]:
        """Every stored decision, in order; an unreadable one is skipped (logged)."""
        found = []
        for _seq, key in self._stored():
            try:
                item = json.loads(self.store.get_bytes(key))
            except (StoreError, ValueError) as exc:
                log.warning("skipping unreadable audit entry %s: %s", key, exc)
                continue
            if isinstance(item, dict):
                found.append(item)
        return found

    def markdown(self) -> str:
        """The trail as a table: number, time, kind, details."""
        items = self.entries()
        head = f"# Audit trail: heal {self.stage} of `{self.sha[:12]}`\n\n"
        if not items:
            return head + "Nothing recorded.\n"
        lines = ["| # | Time (UTC) | Decision | Details |", "|---:|---|---|---|"]
        for item in items:
            data = item.get("data")
            data = data if isinstance(data, dict) else {}
            details = "; ".join(f"{k}={_short(v)}" for k, v in data.items() if v not in (None, "", [], {}))
            time = str(item.get("time", ""))[:19].replace("T", " ")
            lines.append(f"| {item.get('seq', '')} | {time} | {_cell(str(item.get('kind', '')))} | {_cell(details)} |")
        return head + "\n".join(lines) + "\n"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 3] + "..."
