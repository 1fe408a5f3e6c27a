"""Embedded-store properties the shared suite cannot show: WAL readers, and a SIGKILL mid-index."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig
from rag_indexer.store.embedded import EmbeddedStore


def test_readers_query_while_a_write_transaction_is_open(tmp_path: Path, sample_repo: Path) -> None:
    config = IndexerConfig(index_dir=tmp_path / "index")
    with open_index(config=config) as writer, open_index(config=config) as reader:
        writer.index(sample_repo)
        store: Any = writer.store
        with store._tx() as cur:  # a re-index holding the write lock, not yet committed
            cur.execute("DELETE FROM ref_files")
            hits = reader.definitions_of("divide")  # no 'database is locked', and the old snapshot
        assert [h.symbol for h in hits] == ["Calculator.divide"]


def test_sigkill_mid_index_leaves_a_usable_index_that_the_next_run_completes(tmp_path: Path, make_repo: Any) -> None:
    files = {f"pkg/mod_{i}.py": f"def func_{i}(x):\n    return x + {i}\n" for i in range(60)}
    repo = make_repo(files, name="many")
    index_dir = tmp_path / "index"
    script = textwrap.dedent(
        f"""
        import sys, time
        from rag_indexer.api import open_index
        from rag_indexer.config import IndexerConfig
        index = open_index(config=IndexerConfig(index_dir={str(index_dir)!r}, write_batch_blobs=1))
        original = index.store.write_blobs
        def slow_write(items):
            original(items)
            print("batch", flush=True)
            time.sleep(0.05)
        index.store.write_blobs = slow_write
        index.index({str(repo)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for _ in range(10):
        proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    store = EmbeddedStore(index_dir)
    assert store._query("PRAGMA integrity_check")[0][0] == "ok"
    done = len(store._query("SELECT blob_sha FROM blobs"))  # blobs the killed run had committed
    store.close()
    assert 10 <= done < 60
    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        report = index.index(repo)
        assert report.blobs_parsed == 60 - done and report.files.added == 60
        assert [h.path for h in index.definitions_of("func_59")] == ["pkg/mod_59.py"]
