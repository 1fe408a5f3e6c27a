"""Verifier: a failed build becomes a Regression ticket with its evidence (seed 000 §5, seed 002 ⑦)."""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_markdown_artifact

from mendflow.contracts import BuildReport, Regression
from mendflow.render import regression_markdown
from mendflow.settings import get_settings
from mendflow.store import open_store


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
        build_report_url=f"{report.artefact_url}/report.json" if report.artefact_url else "",
    )
    return regression.model_copy(update={"summary_md": regression_markdown(regression)})


@task(name="verify")
def verify(report: BuildReport) -> Regression:
    """File the Regression next to the failed build's artefacts and show it in the UI."""
    regression = regression_from(report)
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    key = f"{report.repo}/{report.commit_sha}/{report.stage}/regression.json"
    store.put_bytes(key, regression.model_dump_json(indent=2).encode())
    create_markdown_artifact(
        markdown=regression.summary_md,
        key=f"regression-{report.stage.lower()}",
        description=f"Regression {regression.id}",
    )
    return regression
