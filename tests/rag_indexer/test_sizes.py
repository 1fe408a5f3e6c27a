"""The blob size cache: a listing fills it, and the next listing takes sizes from it instead of from git."""

from __future__ import annotations

from pathlib import Path

import pygit2

from rag_indexer.config import IndexerConfig
from rag_indexer.reader import TreeReader
from rag_indexer.sizes import BlobSizes


def test_a_listing_fills_the_cache_and_the_next_one_reads_sizes_from_it(sample_repo: Path, tmp_path: Path) -> None:
    repo = pygit2.Repository(str(sample_repo))
    commit = repo.head.peel(pygit2.Commit)
    reader = TreeReader(repo, IndexerConfig(index_dir=tmp_path))
    with BlobSizes(tmp_path / "sizes.sqlite") as sizes:
        first = reader.listing(commit, sizes)
        cached = sizes.get_many(e.blob_sha for e in first.entries)
        assert cached == {e.blob_sha: e.size for e in first.entries}
        core = next(e for e in first.entries if e.path == "calc/core.py")
        # A size only the cache knows: the next listing must use it, and so skip the file as oversize.
        sizes.db.execute("UPDATE sizes SET size = ? WHERE blob_sha = ?", (10**9, core.blob_sha))
        second = reader.listing(commit, sizes)
    assert "calc/core.py" not in {e.path for e in second.entries}
    assert second.skipped == {"oversize": 1}
