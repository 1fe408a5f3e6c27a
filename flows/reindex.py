"""Flow ``reindex_repo``: the scheduled re-index of a repository into the code index (embedded or Weaviate).

Runs are idempotent and incremental: unchanged trees are a no-op, only new blobs are parsed and embedded, so
a retry after a failure picks up where the previous attempt stopped.
"""

from __future__ import annotations

import re
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from mendflow.errors import InputError
from mendflow.settings import get_settings
from rag_indexer.api import open_index
from rag_indexer.models import IndexReport


def _local_repo(repo: str) -> str:
    path = Path(repo).expanduser()
    if "://" in repo or repo.startswith("git@") or not path.exists():
        raise InputError(f"{repo}: not a local repository path", hint="clone it first and pass the work tree's path")
    return str(path.resolve())


@task(name="index-ref", retries=2, retry_delay_seconds=5)
def index_ref(repo: str, ref: str) -> IndexReport:
    """Index one (repo, ref); safe to retry: finished blobs are skipped on the next attempt."""
    with open_index(get_settings()) as code_index:
        return code_index.index(repo, ref)


def _artifact_key(report: IndexReport) -> str:
    name = Path(report.repo).name or "repo"
    return re.sub(r"[^a-z0-9-]+", "-", f"reindex-{name}-{report.ref}".lower()).strip("-")


def publish(report: IndexReport) -> None:
    key = _artifact_key(report)
    create_markdown_artifact(markdown=report.to_markdown(), key=key, description="Code index run")
    create_table_artifact(
        table=[
            {"granularity": label, "added": c.added, "changed": c.changed, "removed": c.removed}
            for label, c in (("files", report.files), ("symbols", report.symbols))
        ],
        key=f"{key}-changes",
        description=f"Files and symbols changed at {report.commit}",
    )


@flow(name="reindex-repo", log_prints=True)
def reindex_repo(repo: str, ref: str = "HEAD") -> IndexReport:
    """Re-index ``ref`` of the local repository ``repo`` at file and symbol granularity.

    Args:
        repo: path of a local git repository (work tree or bare).
        ref: branch, tag or commit; the index records the commit it resolved to.
    """
    report = index_ref(_local_repo(repo), ref)
    publish(report)
    get_run_logger().info(
        "indexed %s@%s = %s: files +%d ~%d -%d, symbols +%d ~%d -%d%s",
        report.repo, report.ref, report.commit[:12],
        report.files.added, report.files.changed, report.files.removed,
        report.symbols.added, report.symbols.changed, report.symbols.removed,
        " (no-op)" if report.noop else "",
    )  # fmt: skip
    return report
