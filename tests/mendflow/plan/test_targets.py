"""Which gaps become targets, and in which order."""

from __future__ import annotations

from mendflow.contracts import Coverage, FileCoverage
from mendflow.plan.diff import ChangeSet
from mendflow.plan.targets import find_targets

SOURCE = """\
def small(x):
    return x


def big(x):
    if x:
        a = 1
        b = 2
        c = 3
        d = 4
        e = 5
        return a + b + c + d + e
    return 0
"""


def test_the_target_missing_most_comes_first_even_when_better_covered() -> None:
    # small: 0 % (1 line missing); big: 2 of 9 lines run (7 missing)
    file = FileCoverage(path="m.py", statements=11, missing_lines=[2, 7, 8, 9, 10, 11, 12], line_pct=36.4)
    coverage = Coverage(line_pct=36.4, files=[file])
    targets = find_targets(coverage, {"m.py": SOURCE}, ChangeSet(None, "h" * 40, "none"), 80.0, limit=1)
    assert [t.symbol for t in targets][:1] == ["big"]


def test_gaps_of_a_module_above_the_threshold_are_still_candidates_after_the_ones_below() -> None:
    weak = FileCoverage(path="weak.py", statements=11, missing_lines=[2, 7, 8, 9, 10, 11, 12], line_pct=36.4)
    good = FileCoverage(path="good.py", statements=11, missing_lines=[13], missing_branches=[(6, 13)], line_pct=90.9)
    coverage = Coverage(line_pct=63.6, files=[good, weak])
    sources = {"weak.py": SOURCE, "good.py": SOURCE}
    targets = find_targets(coverage, sources, ChangeSet(None, "h" * 40, "none"), 80.0)
    assert [(t.path, t.symbol) for t in targets][:3] == [("weak.py", "big"), ("weak.py", "small"), ("good.py", "")]
    assert targets[2].missing_lines == [13] and targets[2].missing_branches == [(6, 13)]
