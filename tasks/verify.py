"""Verifier stage as a Prefect task: file the Regression of a failed build and show it in the UI."""

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
from mendflow.verify import regression_from


@task(name="verify", cache_policy=NO_CACHE)
def verify(source: Source, report: BuildReport) -> Regression:
    """The Regression, kept next to the failed build's artefacts, as an artifact and one event."""
    regression = regression_from(report)
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    store.put_bytes(
        source.artefacts.regression(source.commit_sha, report.stage), regression.model_dump_json(indent=2).encode()
    )
    create_markdown_artifact(
        markdown=regression.summary_md,
        key=artifact_key("regression", report.stage),
        description=f"Regression {regression.id}",
    )
    events.emit(source.repo_id, source.commit_sha, "verifier", "regression", id=regression.id, stage=report.stage)
    return regression
