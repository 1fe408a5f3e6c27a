"""Index stage as Prefect tasks: the run's commit, and the scheduled re-index of every served repository."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from mendflow import source as sources
from mendflow.index import ServedRepo, remember, served_repos
from mendflow.render import artifact_key
from mendflow.settings import get_settings
from mendflow.source import Source
from mendflow.store import open_store
from rag_indexer.api import open_index
from rag_indexer.models import IndexReport


@task(name="index-commit", cache_policy=NO_CACHE)
def index_commit(source: Source) -> IndexReport:
    """Index the run's commit (incremental: blobs already indexed are skipped) and remember the repository."""
    settings = get_settings()
    remember(open_store(settings.resolved_store_url(), settings), source)
    with open_index(settings) as index:
        return index.index(source.path, source.commit_sha, repo_id=source.repo_id)


@task(name="served-repos", cache_policy=NO_CACHE)
def list_served() -> list[ServedRepo]:
    settings = get_settings()
    return served_repos(open_store(settings.resolved_store_url(), settings))


@task(name="index-ref", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE)
def index_ref(location: str, ref: str, repo_id: str | None = None) -> IndexReport:
    """Index one (repo, ref); safe to retry: finished blobs are skipped next time. A URL is fetched once."""
    settings = get_settings()
    source = sources.locate(location, ref, None, settings, repo_id)
    with open_index(settings) as index:
        report = index.index(source.path, ref, repo_id=source.repo_id)
    publish(report)
    return report


def publish(report: IndexReport) -> None:
    key = artifact_key("reindex", report.repo, report.ref)
    create_markdown_artifact(markdown=report.to_markdown(), key=key, description="Code index run")
    create_table_artifact(
        table=[
            {"granularity": label, "added": c.added, "changed": c.changed, "removed": c.removed}
            for label, c in (("files", report.files), ("symbols", report.symbols))
        ],
        key=f"{key}-changes",
        description=f"Files and symbols changed at {report.commit}",
    )
    get_run_logger().info(
        "indexed %s@%s = %s: files +%d ~%d -%d, symbols +%d ~%d -%d%s",
        report.repo, report.ref, report.commit[:12],
        report.files.added, report.files.changed, report.files.removed,
        report.symbols.added, report.symbols.changed, report.symbols.removed,
        " (no-op)" if report.noop else "",
    )  # fmt: skip
