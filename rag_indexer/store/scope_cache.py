"""A query scope's chunk rowids kept on disk, so a fresh process (``mendflow search``) need not ask SQLite for them.

Loading SymPy's 119k rowids for a ref costs a fresh process ~0.13 s of a search that should take under 0.3 s;
reading them back from a file costs a few milliseconds. A file is named by its key: the index's id, its
generation (every write to the index makes a new one) and the filters, and holds the key on its first line,
so a file of another index or generation is never read. A cache: deleting it costs speed, never answers.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from pathlib import Path

KEEP = 16  # the most recently written scopes kept


def _path(index_dir: Path, key: str) -> Path:
    return index_dir / "scopes" / f"{hashlib.sha1(key.encode()).hexdigest()}.rowids"


def read(index_dir: Path, key: str) -> list[int] | None:
    """The rowids stored under ``key``, or None (none stored, another key, cut short)."""
    try:
        data = _path(index_dir, key).read_bytes()
    except OSError:
        return None
    head, newline, body = data.partition(b"\n")
    if not newline or head != key.encode() or len(body) % 8:
        return None
    rowids = array("q")
    rowids.frombytes(body)
    return rowids.tolist()


def write(index_dir: Path, key: str, rowids: list[int]) -> None:
    """Store ``rowids`` under ``key`` at once (renamed into place), keeping the KEEP newest; best effort."""
    path = _path(index_dir, key)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(key.encode() + b"\n" + array("q", rowids).tobytes())
        os.replace(partial, path)
        _prune(path.parent)
    except OSError:
        partial.unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.rowids"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)
