"""Only new lint findings fail a build: a build's findings against its commit's parent.

The baseline of a commit is everything its parent's lint reported. A build of the parent that any stage
already published is reused (B2's parent is B1's commit, a heal's B3 builds on the commit it heals); else a
lint-only job of the parent gives it. A root commit is the repository's first analysis ("clean as you code"
starts from what is there): its findings are its own baseline, listed and never fatal. A parent the clone lacks
(a shallow fetch) gives no baseline: then every finding counts as new.
"""

from __future__ import annotations

from mendflow import findings
from mendflow.contracts import BuildReport, BuildStatus, FailReason
from mendflow.keys import RepoKeys
from mendflow.store.base import ArtefactStore

LINT_ONLY_STAGE = "lint"  # artefact stage of a lint-only build of a parent commit
FIRST_ANALYSIS = "root commit (first analysis)"  # lint_baseline of a commit without a parent


def every_finding(report: BuildReport) -> list[str]:
    """What a report's lint found, new or not: the baseline it gives a child commit."""
    return [*report.lint_errors, *report.lint_preexisting]


def judged(report: BuildReport, baseline: list[str], against: str) -> BuildReport:
    """``report`` with pre-existing findings moved to ``lint_preexisting``; a build that failed on lint alone
    passes when nothing in it is new."""
    new, old = findings.split_new(report.lint_errors, baseline)
    update: dict[str, object] = {"lint_errors": new, "lint_preexisting": old, "lint_baseline": against}
    if report.fail_reason is FailReason.LINT and not new:
        update |= {"status": BuildStatus.PASSED, "fail_reason": None}
        if report.metrics is not None:
            update["metrics"] = report.metrics.model_copy(update={"ci_fail_reason": None})
    return report.model_copy(update=update)


def published_lint(store: ArtefactStore, keys: RepoKeys, sha: str) -> BuildReport | None:
    """The newest attempt of any stage of commit ``sha`` that linted: not ERRORED."""
    found: list[tuple[str, BuildReport]] = []
    for key in store.list(keys.commit(sha)):
        if keys.report_attempt(key, sha) is None:
            continue
        report = BuildReport.model_validate_json(store.get_bytes(key))
        if report.status is not BuildStatus.ERRORED:
            found.append((report.finished_at.isoformat() if report.finished_at else "", report))
    return max(found, key=lambda pair: pair[0])[1] if found else None
