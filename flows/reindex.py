"""Flow ``reindex_repo``: the scheduled re-index of a repository into the code index (embedded or Weaviate).

Runs are idempotent and incremental: unchanged trees are a no-op, only new blobs are parsed and embedded, so
a retry after a failure picks up where the previous attempt stopped.
"""

from __future__ import annotations

import re
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from mendflow import snapshot
from mendflow.settings import get_settings
from rag_indexer.api import open_index
from rag_indexer.models import IndexReport


@task(name="index-ref", retries=2, retry_delay_seconds=5)
def index_ref(repo: str, ref: str) -> tuple[IndexReport, str]:
    """Index one (repo, ref) and name the repository; safe to retry: finished blobs are skipped next time.

    A clone URL is mirrored (or fetched, when mirrored before) into the cache first, as the pipeline does,
    so the index holds it under the mirror's path; a local path is indexed where it is.
    """
    resolved = snapshot.resolve_repo(repo)
    path = Path(resolved.workdir or resolved.path)
    with open_index(get_settings()) as code_index:
        return code_index.index(path, ref), snapshot.repo_name(resolved)


def _artifact_key(name: str, ref: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", f"reindex-{name or 'repo'}-{ref}".lower()).strip("-")


def publish(report: IndexReport, name: str) -> None:
    key = _artifact_key(name, report.ref)
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
    """Re-index ``ref`` of the repository ``repo`` (path or clone URL) at file and symbol granularity.

    Args:
        repo: path of a local git repository (work tree or bare), or a clone URL (https://, ssh://, file://,
            user@host:path), mirrored into the cache and fetched on each run.
        ref: branch, tag or commit; the index records the commit it resolved to.
    """
    report, name = index_ref(repo, ref)
    publish(report, name)
    get_run_logger().info(
        "indexed %s@%s = %s: files +%d ~%d -%d, symbols +%d ~%d -%d%s",
        report.repo, report.ref, report.commit[:12],
        report.files.added, report.files.changed, report.files.removed,
        report.symbols.added, report.symbols.changed, report.symbols.removed,
        " (no-op)" if report.noop else "",
    )  # fmt: skip
    return report
