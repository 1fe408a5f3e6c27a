"""Pynguin's search per module grows with the gap the build left in it, between the two settings' bounds."""

from __future__ import annotations

from mendflow.contracts import CoverageTarget
from mendflow.settings import PynguinSettings, Settings
from mendflow.testgen.builder import search_time

SETTINGS = Settings(pynguin=PynguinSettings(search_time_sec=20, search_sec_per_gap=2.0, search_time_max_sec=60))


def _target(path: str, lines: range, branches: list[tuple[int, int]] | None = None) -> CoverageTarget:
    return CoverageTarget(
        path=path,
        symbol="f",
        start_line=1,
        end_line=200,
        line_pct=50.0,
        missing_lines=list(lines),
        missing_branches=branches or [],
    )


def test_a_small_gap_searches_the_base_time() -> None:
    assert search_time(SETTINGS, [_target("m.py", range(1, 4))], "m.py") == 20


def test_the_search_grows_two_seconds_per_missed_line_and_branch() -> None:
    targets = [_target("m.py", range(1, 13), [(1, 2), (3, -1), (5, 6)])]

    assert search_time(SETTINGS, targets, "m.py") == 30


def test_a_line_two_targets_share_counts_once() -> None:
    targets = [_target("m.py", range(1, 13)), _target("m.py", range(1, 16))]

    assert search_time(SETTINGS, targets, "m.py") == 30


def test_a_large_gap_stops_at_the_longest_search() -> None:
    assert search_time(SETTINGS, [_target("m.py", range(1, 100))], "m.py") == 60


def test_only_the_modules_own_gap_counts() -> None:
    assert search_time(SETTINGS, [_target("other.py", range(1, 100))], "m.py") == 20
