"""How reports read for a person."""

from __future__ import annotations

from mendflow.ci.lint_baseline import FIRST_ANALYSIS
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.render import baseline_label


def _report(baseline: str) -> BuildReport:
    return BuildReport(repo="o/r", commit_sha="c" * 40, status=BuildStatus.PASSED, lint_baseline=baseline)


def test_a_parent_commit_baseline_reads_as_its_short_sha() -> None:
    assert baseline_label(_report(f"{'a' * 40} (lint)")) == "a" * 12


def test_the_root_commits_first_analysis_reads_whole() -> None:
    assert baseline_label(_report(FIRST_ANALYSIS)) == FIRST_ANALYSIS
