"""A build judged against its parent's lint: pre-existing findings are listed, only new ones fail it."""

from __future__ import annotations

from pathlib import Path

from mendflow.ci.lint_baseline import judged, published_lint
from mendflow.contracts import BuildMetrics, BuildReport, BuildStatus, FailReason
from mendflow.keys import RepoKeys
from mendflow.store.file import FileStore

OLD = "a.py:1:8 F401 `os` imported but unused"
NEW = "a.py:2:8 F401 `sys` imported but unused"


def report(status: BuildStatus, reason: FailReason | None, lint: list[str], **extra: object) -> BuildReport:
    metrics = BuildMetrics(
        ci_build_duration=1.0, ci_tests_passed_total=1, ci_coverage_line_pct=None, ci_fail_reason=reason
    )
    return BuildReport(
        repo="local/r", commit_sha="c" * 40, status=status, fail_reason=reason, lint_errors=lint, metrics=metrics,
        **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_build_failing_only_on_old_findings_passes() -> None:
    judge = judged(report(BuildStatus.FAILED, FailReason.LINT, [OLD]), [OLD], "p" * 40)
    assert (judge.status, judge.fail_reason, judge.lint_errors, judge.lint_preexisting) == (
        BuildStatus.PASSED, None, [], [OLD],
    )  # fmt: skip
    assert judge.metrics is not None and judge.metrics.ci_fail_reason is None


def test_a_new_finding_still_fails_the_build() -> None:
    judge = judged(report(BuildStatus.FAILED, FailReason.LINT, [OLD, NEW]), [OLD], "p" * 40)
    assert (judge.status, judge.lint_errors, judge.lint_preexisting) == (BuildStatus.FAILED, [NEW], [OLD])


def test_failing_tests_keep_the_build_failed() -> None:
    judge = judged(report(BuildStatus.FAILED, FailReason.TESTS, [OLD]), [OLD], "p" * 40)
    assert (judge.status, judge.fail_reason, judge.lint_errors) == (BuildStatus.FAILED, FailReason.TESTS, [])


def test_without_a_baseline_every_finding_is_new() -> None:
    judge = judged(report(BuildStatus.FAILED, FailReason.LINT, [OLD]), [], "")
    assert (judge.status, judge.lint_errors, judge.lint_baseline) == (BuildStatus.FAILED, [OLD], "")


def test_the_published_lint_of_a_commit_is_its_newest_report_that_linted(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    prefix = "repos/local/r/" + "c" * 40
    older = report(BuildStatus.FAILED, FailReason.LINT, [OLD], stage="B1", finished_at="2026-01-01T00:00:00Z")
    newer = report(BuildStatus.PASSED, None, [], stage="lint", finished_at="2026-01-02T00:00:00Z")
    errored = report(BuildStatus.ERRORED, FailReason.INFRASTRUCTURE, [], finished_at="2026-01-03T00:00:00Z")
    store.put_bytes(f"{prefix}/B1/1/report.json", older.model_dump_json().encode())
    store.put_bytes(f"{prefix}/lint/1/report.json", newer.model_dump_json().encode())
    store.put_bytes(f"{prefix}/B2/1/report.json", errored.model_dump_json().encode())
    store.put_bytes(f"{prefix}/B2/1/.staging/x/report.json", b"not json")
    found = published_lint(store, RepoKeys("local/r"), "c" * 40)
    assert found is not None and found.stage == "lint"
