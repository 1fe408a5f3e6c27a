"""Which dependency caches eviction picks: idle ones, then the least recently used over the cap, never a busy one."""

from __future__ import annotations

from pathlib import Path

from mendflow.launcher.caches import CacheUse, disk_usage, to_evict

DAY = 86400.0
NOW = 100 * DAY


def _cache(name: str, days_ago: float, size: int) -> CacheUse:
    return CacheUse(Path(name), NOW - days_ago * DAY, size)


def _evict(caches: list[CacheUse], max_bytes: int = 10**9) -> list[str]:
    chosen = to_evict(caches, NOW, max_idle_sec=14 * DAY, max_bytes=max_bytes, busy_sec=DAY / 12)
    return [p.name for p in chosen]


def test_a_cache_idle_past_the_age_is_evicted() -> None:
    assert _evict([_cache("old", 15, 1), _cache("recent", 13, 1)]) == ["old"]


def test_over_the_cap_the_least_recently_used_go_first_until_the_rest_fit() -> None:
    caches = [_cache("a", 3, 40), _cache("b", 1, 40), _cache("c", 2, 40)]
    assert _evict(caches, max_bytes=50) == ["a", "c"]


def test_a_cache_in_use_is_kept_whatever_the_cap() -> None:
    assert _evict([_cache("busy", 0.01, 100)], max_bytes=10) == []


def test_disk_usage_counts_nested_files_and_not_what_links_point_at(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x" * 100_000)
    outside = tmp_path.parent / f"{tmp_path.name}-big"
    outside.write_bytes(b"y" * 1_000_000)
    (tmp_path / "link").symlink_to(outside)
    try:
        assert 100_000 <= disk_usage(tmp_path) < 1_000_000
    finally:
        outside.unlink()
