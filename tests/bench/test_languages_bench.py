"""The languages benchmark's verdicts: what a row says of the two targets."""

from __future__ import annotations

from bench.languages import Row, summary


def _row(own: str, b1: str, own_sec: float = 2.0, mendflow_sec: float = 2.2) -> Row:
    return Row("go", "m", own, b1, None, own_sec, mendflow_sec, 9.0, 3, own_sec, mendflow_sec)


def test_b1_passing_where_the_own_command_passes_meets_the_status_target() -> None:
    assert _row("PASSED", "PASSED").status_met == "met"


def test_b1_failing_where_the_own_command_passes_does_not() -> None:
    assert _row("PASSED", "FAILED").status_met == "NOT MET"


def test_b1_passing_where_the_own_command_fails_names_the_command_as_the_suspect() -> None:
    assert "check the own command" in _row("FAILED", "PASSED").status_met


def test_a_ratio_over_the_target_does_not_meet_it() -> None:
    assert _row("PASSED", "PASSED", 1.0, 1.21).time_met is False


def test_the_summary_counts_each_target_per_language() -> None:
    rows = [_row("PASSED", "PASSED"), _row("FAILED", "FAILED", 1.0, 3.0), _row("FAILED", "PASSED")]
    assert summary(rows) == ["- go: status target on 2 of 3; ratio ≤ 1.2 warm on 2 of 3"]
