"""Helper processes of a cold index: they take batches beside the caller and report errors as the caller would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pygit2
import pytest

from mendflow.errors import CodeIndexError
from rag_indexer.config import IndexerConfig
from rag_indexer.helpers import HelperPool
from rag_indexer.reader import TreeEntry, TreeReader
from rag_indexer.store import make_store
from rag_indexer.writer import StoredBatch

MISSING = "0" * 40


def entries(repo: Path) -> list[TreeEntry]:
    git = pygit2.Repository(str(repo))
    config = IndexerConfig(index_dir=repo / "unused")
    return TreeReader(git, config).listing(git.head.peel(pygit2.Commit)).entries


def slow_nothing(batch: list[TreeEntry]) -> StoredBatch:
    time.sleep(1)  # long enough for the helper to start and take batches of its own
    return StoredBatch([], 0)


def test_a_helper_writes_the_batches_it_takes_to_the_store(sample_repo: Path, tmp_path: Path) -> None:
    config = IndexerConfig(index_dir=tmp_path / "index")
    batches = [[e] for e in entries(sample_repo)]
    with HelperPool(str(sample_repo / ".git"), config, 1) as pool:
        written = [blob for stored in pool.share(batches, slow_nothing) for blob in stored.blobs]
    assert written, "the helper took no batch"
    store = make_store(config)
    try:
        assert set(store.indexed_blobs(w.blob_sha for w in written)) == {w.blob_sha for w in written}
        assert sum(w.chunks for w in written) > len(written)  # symbols too, not only file chunks
    finally:
        store.close()


def test_a_helper_error_is_raised_in_the_caller_with_its_message(sample_repo: Path, tmp_path: Path) -> None:
    missing = TreeEntry(path="gone.py", blob_sha=MISSING, size=1, language="python")
    pool = HelperPool(str(sample_repo / ".git"), IndexerConfig(index_dir=tmp_path / "index"), 1)
    with pool, pytest.raises(CodeIndexError, match=f"blob {MISSING} is missing"):
        list(pool.share([[missing], [missing]], slow_nothing))


def test_a_helper_that_dies_is_a_clear_error(sample_repo: Path, tmp_path: Path) -> None:
    with HelperPool(str(sample_repo / ".git"), IndexerConfig(index_dir=tmp_path / "index"), 1) as pool:
        pool._procs[0].kill()
        pool._procs[0].wait()
        with pytest.raises(CodeIndexError, match="helper process stopped unexpectedly"):
            list(pool.share([[e] for e in entries(sample_repo)], slow_nothing))


def test_helpers_exit_when_the_indexing_process_is_killed(sample_repo: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import time
        from rag_indexer.config import IndexerConfig
        from rag_indexer.helpers import HelperPool
        pool = HelperPool({str(sample_repo / ".git")!r}, IndexerConfig(index_dir={str(tmp_path / "index")!r}), 1)
        print(pool._procs[0].pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    helper = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 20
    while Path(f"/proc/{helper}").exists() and _state(helper) != "Z" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{helper}").exists() or _state(helper) == "Z", "the helper outlived its parent"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"
