"""How reports read for a person."""

from __future__ import annotations

from mendflow.ci.lint_baseline import FIRST_ANALYSIS
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.render import baseline_label, build_markdown


def _report(baseline: str) -> BuildReport:
    return BuildReport(repo="o/r", commit_sha="c" * 40, status=BuildStatus.PASSED, lint_baseline=baseline)


def test_a_parent_commit_baseline_reads_as_its_short_sha() -> None:
    assert baseline_label(_report(f"{'a' * 40} (lint)")) == "a" * 12


def test_the_root_commits_first_analysis_reads_whole() -> None:
    assert baseline_label(_report(FIRST_ANALYSIS)) == FIRST_ANALYSIS


def test_a_rust_builds_advice_reads_as_advice_not_as_ruff_findings() -> None:
    report = _report(FIRST_ANALYSIS).model_copy(
        update={"lint_advisory": [".:0:0 coverage 3 doctests ran unmeasured: stable Rust cannot instrument doctests"]}
    )
    markdown = build_markdown(report)
    assert "## Advice, not fatal" in markdown and "ruff" not in markdown
