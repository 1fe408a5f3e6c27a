"""How a heal is judged (``mendflow/heal/report.py``): a heal never lowers the coverage the failed build had."""

from __future__ import annotations

from mendflow.contracts import BuildReport, BuildStatus, Coverage, FileCoverage
from mendflow.heal.report import lowers_coverage


def measured(path: str, statements: int, missing: int, branches: int = 0, missing_branches: int = 0) -> FileCoverage:
    return FileCoverage(path=path, statements=statements, missing_lines=list(range(1, missing + 1)),
                        num_branches=branches, missing_branches=[(i, 0) for i in range(missing_branches)],
                        line_pct=0.0)  # fmt: skip


def build(*files: FileCoverage, line_pct: float = 0.0, branch_pct: float | None = None) -> BuildReport:
    coverage = Coverage(line_pct=line_pct, branch_pct=branch_pct, files=list(files))
    return BuildReport(repo="r", commit_sha="c" * 40, branch_name="b", stage="B1", status=BuildStatus.PASSED,
                       coverage=coverage)  # fmt: skip


def test_a_module_only_b3_measured_is_no_loss() -> None:
    failed = build(measured("pkg/core.py", 100, 1, 10, 0), line_pct=99.0, branch_pct=100.0)
    healed = build(measured("pkg/core.py", 100, 1, 10, 0), measured("pkg/moved.py", 20, 5, 6, 3),
                   line_pct=95.0, branch_pct=81.3)  # fmt: skip  # the totals drop: the new module is partly run
    assert not lowers_coverage(failed, healed)


def test_a_module_b3_no_longer_measures_counts_as_missed() -> None:
    failed = build(measured("pkg/core.py", 100, 0), measured("pkg/extra.py", 10, 0), line_pct=100.0)
    assert lowers_coverage(failed, build(measured("pkg/core.py", 100, 0), line_pct=100.0))


def test_fewer_lines_run_in_a_shared_module_is_a_loss() -> None:
    failed = build(measured("pkg/core.py", 100, 0, 10, 0))
    assert lowers_coverage(failed, build(measured("pkg/core.py", 100, 0, 10, 2)))


def test_the_same_coverage_is_no_loss() -> None:
    failed = build(measured("pkg/core.py", 100, 3, 10, 1))
    assert not lowers_coverage(failed, build(measured("pkg/core.py", 100, 3, 10, 1)))
