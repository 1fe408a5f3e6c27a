"""Which repositories' dependency caches to evict: the ones unused past an idle age, then the least recently
used until all of them fit a size cap.

"Used" is the cache directory's mtime, which the launcher sets each time a job of that repository starts.
A cache used within ``busy_sec`` is never chosen, whatever the cap: a job may be installing from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CacheUse:
    path: Path
    last_used: float
    size: int


def disk_usage(path: Path) -> int:
    """Bytes on disk under ``path``, links not followed (a cache holds only what its jobs wrote)."""
    total = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return total


def cache_dirs(scopes: Path) -> list[Path]:
    """Every cache directory under ``scopes`` (names starting with a dot are the launcher's own files)."""
    entries = sorted(scopes.iterdir()) if scopes.is_dir() else []
    return [e for e in entries if not e.name.startswith(".") and not e.is_symlink() and e.is_dir()]


def survey(scopes: Path) -> list[CacheUse]:
    """Every cache directory under ``scopes``, with its last use and size."""
    return [CacheUse(path, path.stat().st_mtime, disk_usage(path)) for path in cache_dirs(scopes)]


def to_evict(caches: list[CacheUse], now: float, max_idle_sec: float, max_bytes: int, busy_sec: float) -> list[Path]:
    """The caches to remove: idle past ``max_idle_sec``, then oldest first while the rest exceed ``max_bytes``."""
    idle = [c for c in caches if now - c.last_used > max_idle_sec]
    kept = sorted((c for c in caches if c not in idle), key=lambda c: c.last_used)
    total = sum(c.size for c in kept)
    over = []
    for cache in kept:
        if total <= max_bytes:
            break
        if now - cache.last_used > busy_sec:
            over.append(cache)
            total -= cache.size
    return [c.path for c in (*idle, *over)]
