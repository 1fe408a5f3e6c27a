"""Deliveries already turned into events (their ids and signed bodies), in SQLite: a replay after a restart
still starts nothing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from mendflow.errors import ConfigError

_SCHEMA = "CREATE TABLE IF NOT EXISTS deliveries (key TEXT PRIMARY KEY, received_at REAL NOT NULL)"


class DeliveryStore:
    """``claim`` is atomic (one IMMEDIATE transaction), so two concurrent copies cannot both win.

    A connection per call: the app calls from a thread pool, and several uvicorn workers may share the file.
    """

    def __init__(self, path: Path, retention_sec: float = 30 * 86400) -> None:
        self.path = path
        self.retention_sec = retention_sec
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the delivery store {path}: {exc}",
                hint="set MENDFLOW_WEBHOOK_DEDUP_DB to a writable path",
            ) from exc

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10)) as conn, conn:
            yield conn

    def claim(self, *keys: str) -> bool:
        """True if none of ``keys`` was seen and all are now recorded, in one transaction; else False."""
        now = time.time()
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # two copies racing for one delivery: one waits, then sees it
            if db.execute(f"SELECT 1 FROM deliveries WHERE key IN ({','.join('?' * len(keys))})", keys).fetchone():
                return False
            db.executemany("INSERT INTO deliveries (key, received_at) VALUES (?, ?)", [(k, now) for k in keys])
            return True

    def release(self, *keys: str) -> None:
        """Forget ``keys``: their event never reached Prefect, so a redelivery must be allowed through."""
        with self._connect() as db:
            db.executemany("DELETE FROM deliveries WHERE key = ?", [(k,) for k in keys])

    def prune(self) -> int:
        """Drop ids older than the retention; providers do not redeliver after days."""
        with self._connect() as db:
            cursor = db.execute("DELETE FROM deliveries WHERE received_at < ?", (time.time() - self.retention_sec,))
            return cursor.rowcount

    def healthy(self) -> bool:
        try:
            with self._connect() as db:
                db.execute("SELECT 1 FROM deliveries LIMIT 1")
            return True
        except sqlite3.Error:
            return False
