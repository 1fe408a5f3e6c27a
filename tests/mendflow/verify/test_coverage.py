"""B2 measured against B1: less line or branch coverage of B1's files is a regression."""

from __future__ import annotations

from mendflow.contracts import BuildReport, BuildStatus, Coverage, FailReason, FileCoverage
from mendflow.verify import coverage_regression
from mendflow.verify.coverage import coverage_loss


def file(path: str, missing: list[int], branches: int = 0, missing_branches: int = 0) -> FileCoverage:
    gaps = [(i, i + 1) for i in range(missing_branches)]
    return FileCoverage(
        path=path, statements=10, missing_lines=missing, line_pct=0.0, num_branches=branches, missing_branches=gaps
    )


def report(stage: str, *files: FileCoverage) -> BuildReport:
    coverage = Coverage(line_pct=0.0, files=list(files))
    return BuildReport(repo="o/r", commit_sha="c" * 40, stage=stage, status=BuildStatus.PASSED, coverage=coverage)


def test_more_coverage_is_no_loss() -> None:
    assert coverage_loss(report("B1", file("a.py", [1, 2])), report("B2", file("a.py", [1]))) is None


def test_fewer_lines_run_is_a_loss_naming_both_percentages() -> None:
    why = coverage_loss(report("B1", file("a.py", [1])), report("B2", file("a.py", [1, 2])))
    assert why == "B2 measured less than B1 of the same files: line coverage 80.00% < 90.00%"


def test_fewer_branches_taken_is_a_loss() -> None:
    b1 = report("B1", file("a.py", [], branches=4, missing_branches=1))
    why = coverage_loss(b1, report("B2", file("a.py", [], branches=4, missing_branches=2)))
    assert why is not None and "branch coverage 50.00% < 75.00%" in why


def test_files_only_b2_measures_do_not_count() -> None:
    b2 = report("B2", file("a.py", [1]), file("untested.py", list(range(1, 11))))
    assert coverage_loss(report("B1", file("a.py", [1])), b2) is None


def test_generated_test_files_do_not_count() -> None:
    b1 = report("B1", file("a.py", [1]), file("tests/test_a_mendflow.py", []))
    assert coverage_loss(b1, report("B2", file("a.py", [1]), file("tests/test_a_mendflow.py", [5]))) is None


def test_no_coverage_in_b2_is_a_loss() -> None:
    b2 = report("B2").model_copy(update={"coverage": None})
    assert coverage_loss(report("B1", file("a.py", [1])), b2) == "B2 reported no coverage, B1 did"


def test_the_regression_of_a_loss_is_failed_coverage_with_the_reason() -> None:
    regression = coverage_regression(report("B1", file("a.py", [1])), report("B2", file("a.py", [1, 2])))
    assert regression is not None
    assert (regression.stage, regression.status, regression.fail_reason) == (
        "B2",
        BuildStatus.FAILED,
        FailReason.COVERAGE,
    )
    assert regression.error_reason is not None and regression.error_reason in regression.summary_md
