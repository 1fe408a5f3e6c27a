"""B2 may only add tests, so it must measure at least what B1 measured: less is a regression, never a merge.

Both builds are compared over the files B1 measured (generated test files aside): a module B2 measures only
because a new test now imports it adds no loss, and a line or branch B1 ran that B2 did not is one.
"""

from __future__ import annotations

from dataclasses import dataclass

from mendflow.contracts import BuildReport, BuildStatus, Coverage, FailReason, Regression, is_generated_test_file
from mendflow.render import regression_markdown
from mendflow.verify.regression import regression_from

# Percentages are reported to two decimals; a smaller difference is rounding, not a loss.
TOLERANCE_POINTS = 0.01


@dataclass(frozen=True)
class Measured:
    """What a build ran of a set of files: lines and branches, covered and in all."""

    covered_lines: int = 0
    statements: int = 0
    covered_branches: int = 0
    branches: int = 0

    @property
    def line_pct(self) -> float:
        return 100.0 * self.covered_lines / self.statements if self.statements else 100.0

    @property
    def branch_pct(self) -> float | None:
        return 100.0 * self.covered_branches / self.branches if self.branches else None


def measured(coverage: Coverage, paths: set[str]) -> Measured:
    files = [f for f in coverage.files if f.path in paths]
    return Measured(
        covered_lines=sum(f.statements - len(f.missing_lines) for f in files),
        statements=sum(f.statements for f in files),
        covered_branches=sum(f.num_branches - len(f.missing_branches) for f in files),
        branches=sum(f.num_branches for f in files),
    )


def coverage_loss(before: BuildReport, after: BuildReport) -> str | None:
    """Why ``after`` measured less line or branch coverage than ``before`` of ``before``'s files, or None."""
    if before.coverage is None:
        return None
    if after.coverage is None:
        return f"{after.stage} reported no coverage, {before.stage} did"
    paths = {f.path for f in before.coverage.files if not is_generated_test_file(f.path)}
    was, now = measured(before.coverage, paths), measured(after.coverage, paths)
    losses = []
    if now.line_pct < was.line_pct - TOLERANCE_POINTS:
        losses.append(f"line coverage {now.line_pct:.2f}% < {was.line_pct:.2f}%")
    if was.branch_pct is not None and (now.branch_pct or 0.0) < was.branch_pct - TOLERANCE_POINTS:
        losses.append(f"branch coverage {now.branch_pct or 0.0:.2f}% < {was.branch_pct:.2f}%")
    if not losses:
        return None
    return f"{after.stage} measured less than {before.stage} of the same files: {'; '.join(losses)}"


def coverage_regression(before: BuildReport, after: BuildReport) -> Regression | None:
    """The Regression of a passing ``after`` build that lost coverage ``before`` had, or None."""
    why = coverage_loss(before, after)
    if why is None:
        return None
    regression = regression_from(after).model_copy(
        update={"status": BuildStatus.FAILED, "fail_reason": FailReason.COVERAGE, "error_reason": why}
    )
    return regression.model_copy(update={"summary_md": regression_markdown(regression)})
