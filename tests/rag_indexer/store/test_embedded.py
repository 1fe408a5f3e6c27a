"""Embedded-store properties the shared suite cannot show: WAL readers, SIGKILL mid-index, schema migration,
ranking restricted to a ref's rowid ranges."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mendflow.errors import CodeIndexError
from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig
from rag_indexer.models import Filters
from rag_indexer.store import embedded, scope_cache
from rag_indexer.store.base import query_terms
from rag_indexer.store.embedded import EmbeddedStore
from tests.fixtures.repos import commit_files
from tests.rag_indexer.gitutil import create_branch, switch


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
    proc.stdout.close()

    store = EmbeddedStore(index_dir)
    assert store._query("PRAGMA integrity_check")[0][0] == "ok"
    done = len(store._query("SELECT blob_sha FROM blobs"))  # blobs the killed run had committed
    store.close()
    assert 10 <= done < 60
    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        report = index.index(repo)
        assert report.blobs_parsed == 60 - done and report.files.added == 60
        assert [h.path for h in index.definitions_of("func_59")] == ["pkg/mod_59.py"]


def test_an_index_of_schema_3_is_migrated_on_open(tmp_path: Path, sample_repo: Path) -> None:
    index_dir = tmp_path / "index"
    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        index.index(sample_repo)
    store = EmbeddedStore(index_dir)  # as schema 3 left it: no trigram signatures
    store.db.executescript("DROP TABLE grams; UPDATE meta SET value = '3' WHERE key = 'schema';")
    store.close()

    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        hits = index.grep_like("raise ZeroDivisionError")
        assert [(h.path, h.start_line) for h in hits] == [("calc/core.py", 10)]
        assert index.store._query("SELECT value FROM meta WHERE key = 'schema'") == [("5",)]  # type: ignore[attr-defined]
        assert index.store._query("SELECT count(*) FROM grams") == [(4,)]  # type: ignore[attr-defined]


CAMEL_FILES = {"net/read.js": "function read(data) {\n  return parseHeaderBlock(data);\n}\n"}


def test_the_words_of_a_camel_case_identifier_find_its_chunk(tmp_path: Path, make_repo: Any) -> None:
    with open_index(config=IndexerConfig(index_dir=tmp_path / "index")) as index:
        index.index(make_repo(dict(CAMEL_FILES), name="camel"))
        assert {h.path for h in index.search("header block", k=5)} == {"net/read.js"}


def test_an_index_of_schema_4_gains_camel_case_words_on_open(tmp_path: Path, make_repo: Any) -> None:
    index_dir = tmp_path / "index"
    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        index.index(make_repo(dict(CAMEL_FILES), name="camel"))
    store = EmbeddedStore(index_dir)  # as schema 4 left it: FTS bodies hold the text alone
    rows = store._query("SELECT rowid, text, kind, language FROM chunks")
    store.db.executescript(
        f"DROP TABLE chunks_fts; {embedded.FTS_TABLE}; UPDATE meta SET value = '4' WHERE key = 'schema';"
    )
    store.db.executemany(
        "INSERT INTO chunks_fts (rowid, names, body, facets) VALUES (?, '', ?, ?)",
        [(rowid, text, embedded._facets(kind, language)) for rowid, text, kind, language in rows],
    )
    store.close()

    with open_index(config=IndexerConfig(index_dir=index_dir)) as index:
        assert {h.path for h in index.search("header block", k=5)} == {"net/read.js"}


def test_an_index_from_a_newer_mendflow_is_refused_with_a_hint(tmp_path: Path, sample_repo: Path) -> None:
    index_dir = tmp_path / "index"
    EmbeddedStore(index_dir).close()
    db = sqlite3.connect(str(index_dir / "index.sqlite"))
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(CodeIndexError, match="schema 99") as info:
        EmbeddedStore(index_dir)
    assert "delete that directory" in str(info.value.hint)


def test_search_restricted_to_the_refs_rowid_ranges_ranks_like_a_full_ranking(tmp_path: Path, make_repo: Any) -> None:
    """main's chunks end up in two rowid runs with another ref's chunks between; results must not change."""
    files = {f"pkg/mod_{i}.py": "".join(_function(i, j, "alpha") for j in range(5)) for i in range(60)}
    repo = make_repo(files, name="ranges")
    config = IndexerConfig(index_dir=tmp_path / "index", bm25_max_df_ratio=1.0)
    with open_index(config=config) as index:
        index.index(repo, "main")
        create_branch(repo, "other")
        switch(repo, "other")
        commit_files(repo, {p: "".join(_function(i, j, "beta") for j in range(5)) for i, p in enumerate(files)})
        index.index(repo, "other")
        switch(repo, "main")
        commit_files(repo, {"pkg/mod_0.py": _function(0, 0, "gamma")})
        index.index(repo, "main")
        store: Any = index.store
        scope = store._scope(Filters(repo=f"local/{repo.name}", ref="main"))
        assert len(scope.ranges) == 2
        for query in ["compute value", "alpha total 7", "gamma", "beta"]:
            got = [(h.path, h.symbol, round(h.score, 6)) for h in index.search(query, k=10, filters={"ref": "main"})]
            full = _full_ranking(store, query, scope.members)
            # Equal scores may come in either order: compare the scores, and each hit against the full ranking.
            assert [score for *_, score in got] == [score for *_, score in full[:10]]
            assert set(got) <= set(full)


def _function(i: int, j: int, word: str) -> str:
    return f"def compute_{word}_{j}(value):\n    total = value * {i} + {j}\n    return total  # {word} {j}\n\n"


def _full_ranking(store: Any, query: str, members: set[int]) -> list[tuple[str, str, float]]:
    """The old way: rank every chunk of every ref, then keep the scope's."""
    terms = query_terms(query)
    match = "{names body} : (" + " OR ".join(f'"{t}"' for t in terms) + ")"
    ranked = store._query("SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank", [match])
    rows = {
        rowid: (path, symbol)
        for rowid, path, symbol in store._query(
            "SELECT c.rowid, f.path, c.symbol FROM chunks c JOIN ref_files f ON f.blob_sha = c.blob_sha "
            "WHERE f.ref = 'main'"
        )
    }
    return [(*rows[r], round(-rank, 6)) for r, rank in ranked if r in members]


def scope_queries(store: Any) -> list[str]:
    """Record the SQL the store runs from now on."""
    seen: list[str] = []
    run = store._query

    def recording(sql: str, params: Any = ()) -> list[Any]:
        seen.append(sql)
        return run(sql, params)

    store._query = recording
    return seen


def test_a_later_process_reads_the_scope_from_disk_not_sqlite(tmp_path: Path, sample_repo: Path) -> None:
    config = IndexerConfig(index_dir=tmp_path / "index")
    with open_index(config=config) as first:
        first.index(sample_repo)
        expected = first.search("divide numbers", k=5)
    with open_index(config=config) as later:  # a new store: nothing cached in memory
        seen = scope_queries(later.store)
        assert later.search("divide numbers", k=5) == expected
    assert not [sql for sql in seen if "SELECT DISTINCT c.rowid" in sql]
    assert len(list((tmp_path / "index" / "scopes").glob("*.rowids"))) == 1


def test_a_write_to_the_index_makes_the_stored_scope_unused(tmp_path: Path, make_repo: Any) -> None:
    repo = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"}, name="growing")
    config = IndexerConfig(index_dir=tmp_path / "index")
    with open_index(config=config) as index:
        index.index(repo)
        assert [h.symbol for h in index.search("beta", k=5)] == []
    commit_files(repo, {"pkg/b.py": "def beta():\n    return 2\n"})
    with open_index(config=config) as index:
        index.index(repo)
    with open_index(config=config) as later:
        assert "beta" in [h.symbol for h in later.search("beta", k=5)]


def test_a_stored_scope_of_another_key_or_cut_short_is_not_read(tmp_path: Path) -> None:
    scope_cache.write(tmp_path, "a.1\0{}", [1, 2, 3])
    assert scope_cache.read(tmp_path, "a.1\0{}") == [1, 2, 3]
    assert scope_cache.read(tmp_path, "b.1\0{}") is None
    (stored,) = (tmp_path / "scopes").glob("*.rowids")
    stored.write_bytes(stored.read_bytes()[:-3])
    assert scope_cache.read(tmp_path, "a.1\0{}") is None
