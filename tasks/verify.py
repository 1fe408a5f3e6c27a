"""Verifier stage as Prefect tasks: file the Regression of a failed build, or of a B2 that lost coverage, and show
it in the UI."""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from mendflow import events
from mendflow.contracts import BuildReport, Regression
from mendflow.render import artifact_key
from mendflow.settings import get_settings
from mendflow.source import Source
from mendflow.store import open_store
from mendflow.verify import coverage_regression, regression_from


@task(name="verify", cache_policy=NO_CACHE)
def verify(source: Source, report: BuildReport) -> Regression:
    """The Regression, kept next to the failed build's artefacts, as an artifact and one event."""
    return filed(source, regression_from(report))


@task(name="verify-coverage", cache_policy=NO_CACHE)
def verify_coverage(source: Source, before: BuildReport, after: BuildReport) -> Regression | None:
    """The Regression of a passing ``after`` (B2) that measured less than ``before`` (B1), filed like a failed
    build's; None when it lost nothing."""
    regression = coverage_regression(before, after)
    return None if regression is None else filed(source, regression)


def filed(source: Source, regression: Regression) -> Regression:
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    store.put_bytes(
        source.artefacts.regression(source.commit_sha, regression.stage), regression.model_dump_json(indent=2).encode()
    )
    create_markdown_artifact(
        markdown=regression.summary_md,
        key=artifact_key("regression", regression.stage),
        description=f"Regression {regression.id}",
    )
    events.emit(source.repo_id, source.commit_sha, "verifier", "regression", id=regression.id, stage=regression.stage)
    return regression
