"""A failed BuildReport → the Regression ticket filed next to its artefacts.

Its summary names each failing test with its first message line (from the report's ``failures``) and tells
collection, import and fixture errors apart from failures of a test's body.
"""

from __future__ import annotations

from mendflow.contracts import BuildReport, Regression
from mendflow.keys import REPORT
from mendflow.render import regression_markdown


def regression_from(report: BuildReport) -> Regression:
    regression = Regression(
        id=f"reg-{report.commit_sha[:12]}-{report.stage.lower()}",
        repo=report.repo,
        commit_sha=report.commit_sha,
        branch_name=report.branch_name,
        stage=report.stage,
        status=report.status,
        fail_reason=report.fail_reason,
        failed_tests=report.failed_tests,
        lint_errors=report.lint_errors,
        error_reason=report.error_reason,
        build_report_url=f"{report.artefact_url}/{REPORT}" if report.artefact_url else "",
    )
    return regression.model_copy(update={"summary_md": regression_markdown(regression, report.failures)})
