"""Keeping the code index current for the commit a pipeline works on."""

from __future__ import annotations

from prefect import task

from mendflow import snapshot
from mendflow.settings import get_settings
from rag_indexer.api import open_index


@task(name="index-commit")
def index_commit(repo: str, sha: str) -> str:
    """Index ``sha`` (incremental: blobs already indexed are skipped); return the repository's local path."""
    path = str(snapshot.resolve_repo(repo).path)
    with open_index(get_settings()) as index:
        index.index(path, sha)
    return path
