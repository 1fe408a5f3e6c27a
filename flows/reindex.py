"""Flow ``reindex_repo``: the scheduled re-index of the repositories mendflow serves (embedded or Weaviate).

Runs are idempotent and incremental: unchanged trees are a no-op, only new blobs are parsed and embedded, so a
retry after a failure picks up where the previous attempt stopped.
"""

# No `from __future__ import annotations`: Prefect builds the parameters model from these annotations, and a
# served run (Runner) resolves string annotations without this module's namespace (`Annotated` undefined).

from typing import Annotated

from prefect import flow
from pydantic import Field

from rag_indexer.models import IndexReport
from tasks.index import index_ref, list_served


@flow(name="reindex-repo", timeout_seconds=3 * 3600)
def reindex_repo(
    repo: Annotated[str | None, Field(description="Path or clone URL; default every repository runs served.")] = None,
    ref: Annotated[str | None, Field(description="Branch, tag or commit; default each repository's branch.")] = None,
) -> list[IndexReport]:
    """Re-index ``repo`` (or every repository mendflow has run on) at file and symbol granularity."""
    if repo is not None:
        return [index_ref(repo, ref or "HEAD")]
    return [index_ref(s.location, ref or s.branch or "HEAD", s.repo_id) for s in list_served()]
