"""Delivery ids already turned into events, in SQLite so a replay after a restart still starts nothing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from mendflow.errors import ConfigError

_SCHEMA = "CREATE TABLE IF NOT EXISTS deliveries (key TEXT PRIMARY KEY, received_at REAL NOT NULL)"


class DeliveryStore:
    """``claim`` is atomic (INSERT OR IGNORE on a primary key), so two concurrent copies cannot both win.

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

    def claim(self, key: str) -> bool:
        """True if ``key`` was new and is now recorded; False if it was seen before."""
        with self._connect() as db:
            cursor = db.execute("INSERT OR IGNORE INTO deliveries (key, received_at) VALUES (?, ?)", (key, time.time()))
            return cursor.rowcount == 1

    def release(self, key: str) -> None:
        """Forget ``key``: its event never reached Prefect, so a redelivery must be allowed through."""
        with self._connect() as db:
            db.execute("DELETE FROM deliveries WHERE key = ?", (key,))

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
