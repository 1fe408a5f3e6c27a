"""The embedded store: one SQLite database (FTS5 for BM25) with float32 vectors beside the chunks.

Why SQLite: it ships with Python (no server, no extra wheel), FTS5 gives BM25 ranking with a porter stemmer,
WAL mode lets readers query a consistent snapshot while an index run writes, and every batch is one
transaction, so a crash leaves the last committed state and never half a blob. This Python's sqlite3 cannot
load extensions (sqlite-vec is out), so vectors are BLOBs searched by brute force in numpy: ~100k x 384 float32
is one matrix product of a few milliseconds, well inside the latency budget, and needs no index upkeep.
Everything lives in one directory (``index.sqlite`` plus its WAL files; the embedding and blob size caches
sit beside it).
"""

from __future__ import annotations

import array
import functools
import heapq
import json
import logging
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from mendflow.errors import CodeIndexError
from rag_indexer.grep import GrepQuery, NameList
from rag_indexer.models import BlobChunks, Filters, Hit, RefFile, RefState
from rag_indexer.store import DATABASE_FILE, grams, grep_cache, scope_cache
from rag_indexer.store.embedded_read import SCHEMA_VERSION, file_signature, file_texts_sql, scope_sql, signatures_sql

if TYPE_CHECKING:  # numpy (~0.1 s to import) only for vectors: BM25 search and grep start without it
    import numpy as np

from rag_indexer.store.base import (
    CAMEL_CASE_LANGUAGES,
    IndexStore,
    camel_words,
    dedupe_hits,
    fuse,
    names_field,
    query_terms,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

FTS_TABLE = """CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
    names, body, facets, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
)"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (
    blob_sha TEXT PRIMARY KEY, language TEXT NOT NULL, encoding TEXT NOT NULL,
    chunks INTEGER NOT NULL, indexed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, blob_sha TEXT NOT NULL, kind TEXT NOT NULL,
    symbol TEXT NOT NULL, symbol_key TEXT NOT NULL, name TEXT NOT NULL, signature TEXT NOT NULL,
    docstring TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, language TEXT NOT NULL,
    part INTEGER NOT NULL, parts INTEGER NOT NULL, content_hash TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_blob ON chunks (blob_sha, kind);
CREATE INDEX IF NOT EXISTS chunks_name ON chunks (name);
CREATE INDEX IF NOT EXISTS chunks_symbol ON chunks (symbol);
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
{FTS_TABLE};
CREATE TABLE IF NOT EXISTS refs (
    repo TEXT NOT NULL, ref TEXT NOT NULL, commit_sha TEXT NOT NULL, tree_sha TEXT NOT NULL,
    indexed_at TEXT NOT NULL, files INTEGER NOT NULL, PRIMARY KEY (repo, ref)
);
CREATE TABLE IF NOT EXISTS ref_files (
    repo TEXT NOT NULL, ref TEXT NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL, language TEXT NOT NULL,
    PRIMARY KEY (repo, ref, path)
);
CREATE INDEX IF NOT EXISTS ref_files_blob ON ref_files (blob_sha);
CREATE TABLE IF NOT EXISTS grams (blob_sha TEXT PRIMARY KEY, bits INTEGER NOT NULL, sig BLOB NOT NULL);
"""

PAGE_SIZE = 16384

# Below this many chunks every query is fast anyway; pruning terms would only cost recall.
MIN_CHUNKS_TO_PRUNE = 20_000

# A ranking runs once per rowid range of the scope; more ranges cost statements, fewer rank other refs' rows.
MAX_RANGES = 8
MIN_RANGE_GAP = 256

# names (symbol parts, signature, docstring) weigh more than the body.
# facets ("kind_file language_python") only filter, so they carry no weight.
RANK_CONFIG = "bm25(3.0, 1.0, 0.0)"

HIT_COLUMNS = (
    "c.rowid, c.id, f.repo, f.ref, f.path, c.symbol, c.kind, c.start_line, c.end_line, c.blob_sha, "
    "c.language, c.signature, c.docstring, c.text"
)


def _hit(row: Sequence[Any], score: float = 0.0) -> Hit:
    return Hit(
        id=row[1],
        repo=row[2],
        ref=row[3],
        path=row[4],
        symbol=row[5],
        kind=row[6],
        start_line=row[7],
        end_line=row[8],
        blob_sha=row[9],
        language=row[10],
        signature=row[11],
        docstring=row[12],
        text=row[13],
        score=score,
    )


def _gram_row(blob_sha: str, text: str) -> tuple[str, int, bytes]:
    return (blob_sha, *file_signature(text))


def _fts_row(
    rowid: int, symbol: str, signature: str, docstring: str, text: str, kind: str, language: str
) -> tuple[int, str, str, str]:
    """A chunk's FTS values. Writes and deletes must compute the same ones (the FTS table is contentless)."""
    # CamelCase words searchable: 'form data' finds isFormData (axios MRR +0.04, hono +0.02).
    body = f"{text}\n{camel_words(text)}" if language in CAMEL_CASE_LANGUAGES else text
    return rowid, names_field(symbol, signature, docstring), body, _facets(kind, language)


@functools.lru_cache(maxsize=256)  # a handful of (kind, language) pairs, looked up once per chunk written
def _facets(kind: str | None, language: str | None) -> str:
    """Filter tokens for FTS: 'kindfile languagepython' (one token each under unicode61)."""
    pairs = (("kind", kind), ("language", language))
    return " ".join(f"{name}{re.sub(r'[^A-Za-z0-9]', '', value)}" for name, value in pairs if value)


class _Scope:
    """The rowids of the chunks in a query scope, and up to MAX_RANGES rowid ranges covering them.

    Chunks get rowids in the order they are written, so one ref's blobs sit in a few long runs (the cold
    index, then each incremental run) and a ranking restricted to those ranges skips most other refs' rows.
    """

    def __init__(self, rowids: list[int]) -> None:
        self.rowids = rowids  # sorted
        self.members = set(rowids)
        self.ranges: list[tuple[int, int, int]] = []  # (first rowid, last rowid, chunks in scope between)
        if not rowids:
            return
        # Split at the widest gaps only: a narrow one saves less than the extra query costs.
        worth = max(MIN_RANGE_GAP, len(rowids) // 50)
        gaps = ((rowids[i + 1] - rowids[i] - 1, i) for i in range(len(rowids) - 1))
        cuts = sorted(i for gap, i in heapq.nlargest(MAX_RANGES - 1, gaps) if gap >= worth)
        starts = [0, *(i + 1 for i in cuts)]
        ends = [*cuts, len(rowids) - 1]
        self.ranges = [(rowids[a], rowids[b], b - a + 1) for a, b in zip(starts, ends, strict=True)]


class EmbeddedStore(IndexStore):
    def __init__(self, directory: Path, max_df_ratio: float = 1.0) -> None:
        self.max_df_ratio = max_df_ratio
        self._df: tuple[str, int, dict[str, int]] = ("", 0, {})  # (generation, chunk count, term → df)
        self._lock = threading.RLock()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / DATABASE_FILE
            self.db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False, isolation_level=None)
            # Only a new database takes it: chunk texts and FTS segments span fewer pages (-14 % write CPU).
            self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=OFF")
            self.db.execute("PRAGMA cache_size=-65536")
            self.db.execute("PRAGMA mmap_size=1073741824")  # FTS segment reads without copies
            self._init_schema()
        except (OSError, sqlite3.Error) as exc:
            raise CodeIndexError(
                f"cannot open the code index in {directory}: {exc}",
                hint="check MENDFLOW_STATE_DIR is writable; delete the index directory to rebuild it",
            ) from exc
        self._matrix: tuple[str, np.ndarray, np.ndarray] | None = None  # (generation, rowids, vectors)
        # What a query derives from its scope (rowids, signatures, symbol names), per kind for the last scope
        # seen; valid until the index changes. Queries of one caller repeat the same scope.
        self._scope_cache: dict[str, tuple[tuple[str, str], Any]] = {}

    def _init_schema(self) -> None:
        cur = self.db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            has_meta = cur.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is not None
            found = cur.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if has_meta else None
            version = int(found[0]) if found else SCHEMA_VERSION
            if version > SCHEMA_VERSION:
                raise CodeIndexError(
                    f"the code index in {self.path.parent} has schema {version}; this mendflow reads up to "
                    f"{SCHEMA_VERSION}",
                    hint="upgrade mendflow, or delete that directory to rebuild the index",
                )
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    cur.execute(statement)
            cur.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0'), ('schema', ?)", (str(version),))
            # Names this database among others (a new one restarts its generation): scope_cache's keys hold it.
            cur.execute("INSERT OR IGNORE INTO meta VALUES ('index_id', ?)", (os.urandom(8).hex(),))
            if cur.execute("SELECT value FROM meta WHERE key = 'rank'").fetchone() is None:
                cur.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', ?)", (RANK_CONFIG,))
                cur.execute("INSERT INTO meta VALUES ('rank', ?)", (RANK_CONFIG,))
            if version < SCHEMA_VERSION:
                self._migrate(cur, version)
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def _migrate(self, cur: sqlite3.Cursor, version: int) -> None:
        """Bring an index of an older schema up to date in place (one transaction: all or nothing)."""
        if version < 3:
            raise CodeIndexError(
                f"the code index in {self.path.parent} has schema {version}, too old to migrate",
                hint="delete that directory; the next `mendflow index` rebuilds it",
            )
        if version < 4:
            files = cur.execute("SELECT blob_sha, text FROM chunks WHERE kind = 'file'").fetchall()
            cur.executemany("INSERT OR REPLACE INTO grams VALUES (?, ?, ?)", [_gram_row(sha, t) for sha, t in files])
        if version < 5:
            # Contentless FTS rows cannot be updated in place: drop the table and index every chunk again.
            cur.execute("DROP TABLE chunks_fts")
            cur.execute(FTS_TABLE)
            cur.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', ?)", (RANK_CONFIG,))
            reader = self.db.cursor()  # a cursor of its own: cur's executemany would reset this one
            rows = reader.execute("SELECT rowid, symbol, signature, docstring, text, kind, language FROM chunks")
            cur.executemany(
                "INSERT INTO chunks_fts (rowid, names, body, facets) VALUES (?, ?, ?, ?)", (_fts_row(*r) for r in rows)
            )
        cur.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
        self._bump_generation(cur)
        log.warning("code index %s: migrated schema %d -> %d", self.path.parent, version, SCHEMA_VERSION)

    # -- helpers ---------------------------------------------------------------------------------------
    class _Tx:
        def __init__(self, store: EmbeddedStore) -> None:
            self.store = store

        def __enter__(self) -> sqlite3.Cursor:
            self.store._lock.acquire()
            self.cur = self.store.db.cursor()
            self.cur.execute("BEGIN IMMEDIATE")
            return self.cur

        def __exit__(self, exc_type: object, *_: object) -> None:
            try:
                self.cur.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.store._lock.release()

    def _tx(self) -> EmbeddedStore._Tx:
        return EmbeddedStore._Tx(self)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self.db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise CodeIndexError(f"code index query failed: {exc}") from exc

    def _bump_generation(self, cur: sqlite3.Cursor) -> None:
        cur.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    # -- content ---------------------------------------------------------------------------------------
    def indexed_blobs(self, shas: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        items = list(shas)
        for i in range(0, len(items), 500):
            batch = items[i : i + 500]
            marks = ",".join("?" * len(batch))
            rows = self._query(f"SELECT blob_sha, language FROM blobs WHERE blob_sha IN ({marks})", batch)
            out.update(dict(rows))
        return out

    def write_blobs(self, items: Sequence[BlobChunks]) -> None:
        now = datetime.now(UTC).isoformat()
        with self._tx() as cur:
            shas = [item.blob_sha for item in items]
            marks = ",".join("?" * len(shas))
            # Re-writing a blob (a retried batch) replaces it; a fresh blob needs no delete.
            present = cur.execute(f"SELECT DISTINCT blob_sha FROM chunks WHERE blob_sha IN ({marks})", shas)
            for (sha,) in present.fetchall():
                self._delete_blob(cur, sha)
            cur.executemany("DELETE FROM blobs WHERE blob_sha = ?", [(sha,) for sha in shas])
            # Explicit rowids let chunks, FTS rows and vectors go in with one executemany each.
            next_rowid = int(cur.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0])
            chunk_rows, fts_rows, vector_rows, gram_rows = [], [], [], []
            for item in items:
                for i, c in enumerate(item.chunks):
                    if c.kind == "file":
                        gram_rows.append(_gram_row(item.blob_sha, c.text))
                    rowid = next_rowid
                    next_rowid += 1
                    chunk_rows.append(
                        (
                            rowid, c.id, c.blob_sha, c.kind, c.symbol, c.symbol_key, c.name, c.signature,
                            c.docstring, c.start_line, c.end_line, c.language, c.part, c.parts, c.content_hash,
                            c.text,
                        )
                    )  # fmt: skip
                    fts_rows.append(_fts_row(rowid, c.symbol, c.signature, c.docstring, c.text, c.kind, c.language))
                    if item.vectors is not None and (vector := item.vectors[i]) is not None:
                        vector_rows.append((rowid, array.array("f", vector).tobytes()))  # float32
            cur.executemany(f"INSERT INTO chunks VALUES ({','.join('?' * 16)})", chunk_rows)
            cur.executemany("INSERT INTO chunks_fts (rowid, names, body, facets) VALUES (?, ?, ?, ?)", fts_rows)
            cur.executemany("INSERT INTO vectors VALUES (?, ?)", vector_rows)
            cur.executemany("INSERT OR REPLACE INTO grams VALUES (?, ?, ?)", gram_rows)
            cur.executemany(
                "INSERT INTO blobs VALUES (?, ?, ?, ?, ?)",
                [(item.blob_sha, item.language, item.encoding, len(item.chunks), now) for item in items],
            )
            self._bump_generation(cur)

    def _delete_blob(self, cur: sqlite3.Cursor, blob_sha: str) -> None:
        rows = cur.execute(
            "SELECT rowid, symbol, signature, docstring, text, kind, language FROM chunks WHERE blob_sha = ?",
            (blob_sha,),
        ).fetchall()
        for row in rows:
            # Contentless FTS (the text is not stored twice): a delete must repeat the indexed values.
            cur.execute(
                "INSERT INTO chunks_fts (chunks_fts, rowid, names, body, facets) VALUES ('delete', ?, ?, ?, ?)",
                _fts_row(*row),
            )
            cur.execute("DELETE FROM vectors WHERE rowid = ?", (row[0],))
        cur.execute("DELETE FROM chunks WHERE blob_sha = ?", (blob_sha,))
        cur.execute("DELETE FROM grams WHERE blob_sha = ?", (blob_sha,))
        cur.execute("DELETE FROM blobs WHERE blob_sha = ?", (blob_sha,))

    def blob_symbols(self, shas: Iterable[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        items = list(shas)
        for i in range(0, len(items), 500):
            batch = items[i : i + 500]
            marks = ",".join("?" * len(batch))
            rows = self._query(
                f"SELECT blob_sha, symbol_key, content_hash FROM chunks WHERE blob_sha IN ({marks}) AND kind != 'file'",
                batch,
            )
            for sha, key, digest in rows:
                out.setdefault(sha, {})[key] = digest
        return out

    # -- mapping ---------------------------------------------------------------------------------------
    def get_ref(self, repo: str, ref: str) -> RefState | None:
        rows = self._query(
            "SELECT repo, ref, commit_sha, tree_sha, indexed_at, files FROM refs WHERE repo = ? AND ref = ?",
            (repo, ref),
        )
        return self._ref_state(rows[0]) if rows else None

    @staticmethod
    def _ref_state(row: Sequence[Any]) -> RefState:
        return RefState(
            repo=row[0],
            ref=row[1],
            commit=row[2],
            tree=row[3],
            indexed_at=datetime.fromisoformat(row[4]),
            files=row[5],
        )

    def ref_files(self, repo: str, ref: str) -> dict[str, RefFile]:
        rows = self._query("SELECT path, blob_sha, language FROM ref_files WHERE repo = ? AND ref = ?", (repo, ref))
        return {p: RefFile(path=p, blob_sha=b, language=lang) for p, b, lang in rows}

    def set_ref(self, state: RefState, files: Sequence[RefFile]) -> None:
        key = (state.repo, state.ref)
        # Grep packs are found through locators trusted only under the refs token: none while the ref moves.
        grep_cache.refs_changing(str(self.path.parent))
        with self._tx() as cur:
            # Only the rows that differ: a one-file change rewrites one row, not the whole mapping.
            old = set(cur.execute("SELECT path, blob_sha, language FROM ref_files WHERE repo = ? AND ref = ?", key))
            new = {(f.path, f.blob_sha, f.language) for f in files}
            cur.executemany(
                "DELETE FROM ref_files WHERE repo = ? AND ref = ? AND path = ?", [(*key, row[0]) for row in old - new]
            )
            cur.executemany("INSERT INTO ref_files VALUES (?, ?, ?, ?, ?)", [(*key, *row) for row in new - old])
            cur.execute(
                "INSERT OR REPLACE INTO refs VALUES (?, ?, ?, ?, ?, ?)",
                (state.repo, state.ref, state.commit, state.tree, state.indexed_at.isoformat(), len(files)),
            )
            self._bump_generation(cur)
        grep_cache.refs_changed(str(self.path.parent))

    def list_refs(self, repo: str | None = None) -> list[RefState]:
        sql = "SELECT repo, ref, commit_sha, tree_sha, indexed_at, files FROM refs"
        rows = self._query(sql + " WHERE repo = ?", (repo,)) if repo else self._query(sql)
        return [self._ref_state(r) for r in rows]

    # -- queries ---------------------------------------------------------------------------------------
    def search(self, text: str, vector: Sequence[float] | None, k: int, alpha: float, filters: Filters) -> list[Hit]:
        want = max(k * 4, 50)
        keyword = self._bm25(text, want, filters) if alpha < 1 or vector is None else []
        semantic = self._nearest(vector, want, filters) if vector is not None and alpha > 0 else []
        if vector is None:
            alpha = 0.0
        rows = {row[0]: row for row, _ in keyword} | {row[0]: row for row, _ in semantic}
        if semantic:
            fused = fuse([(r[0], s) for r, s in keyword], [(r[0], s) for r, s in semantic], alpha)
        else:  # keyword only: keep raw BM25 scores (comparable across queries, as Weaviate's bm25)
            fused = [(r[0], s) for r, s in keyword]
        # One rowid may stand for several paths (copies); keyword rows already carry theirs.
        return dedupe_hits((_hit(rows[rowid], score) for rowid, score in fused), k)

    def _bm25(self, text: str, limit: int, filters: Filters) -> list[tuple[Any, float]]:
        terms = self._selective_terms(query_terms(text))
        scope = self._scope(filters)
        if not terms or not scope.members:
            return []
        match = "{names body} : (" + " OR ".join(f'"{t}"' for t in terms) + ")"
        # kind/language filters run inside FTS, so a rare kind (files) does not starve the top-k.
        for facet in _facets(filters.kind, filters.language).split():
            match += f' AND facets : "{facet}"'
        ranked = [hit for lo, hi, n in scope.ranges for hit in self._rank_range(match, lo, hi, n, limit, scope)]
        best = dict(sorted(ranked, key=lambda rs: -rs[1])[:limit])
        if not best:
            return []
        where, params = scope_sql(filters)
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM chunks c JOIN ref_files f ON f.blob_sha = c.blob_sha "
            f"WHERE c.rowid IN (SELECT value FROM json_each(?)) AND {where}",
            [json.dumps(list(best)), *params],
        )
        return sorted(((r, best[r[0]]) for r in rows), key=lambda rs: -rs[1])

    def _rank_range(
        self, match: str, lo: int, hi: int, inside: int, limit: int, scope: _Scope
    ) -> list[tuple[int, float]]:
        """The best ``limit`` in-scope chunks between rowids lo and hi, by BM25 (higher is better).

        FTS5 scores every row its terms match before it sorts, so the rowid range is what bounds the work;
        rows of other refs inside the range are over-fetched by their share and dropped here.
        """
        fetch = max(limit, math.ceil(limit * 1.5 * (hi - lo + 1) / inside))
        while True:
            rows = self._query(
                "SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ? "
                "ORDER BY rank LIMIT ?",
                [match, lo, hi, fetch],
            )
            kept = [(rowid, -float(rank)) for rowid, rank in rows if rowid in scope.members]
            if len(kept) >= limit or len(rows) < fetch:
                return kept[:limit]
            fetch *= 4

    def _chunk_count(self) -> int:
        generation = self._generation()
        if self._df[0] != generation:
            self._df = (generation, int(self._query("SELECT count(*) FROM chunks")[0][0]), {})
        return self._df[1]

    def _selective_terms(self, terms: list[str]) -> list[str]:
        """Drop terms found in more than ``max_df_ratio`` of all chunks (at least the two rarest stay).

        FTS5 computes bm25 for every row any term matches; a near-ubiquitous word ('expr' in SymPy) makes it
        score most of the table for a small IDF contribution. Document frequencies are cached per generation.
        """
        if self.max_df_ratio >= 1.0 or len(terms) <= 2:
            return terms
        total = self._chunk_count()
        cache = self._df[2]
        for term in terms:
            if term not in cache:
                cache[term] = int(
                    self._query("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [f'"{term}"'])[0][0]
                )
        present = sorted((t for t in terms if cache[t] > 0), key=lambda t: cache[t])
        if total < MIN_CHUNKS_TO_PRUNE:
            return present
        selective = [t for t in present if cache[t] <= self.max_df_ratio * total]
        return selective if len(selective) >= 2 else present[:2]

    def _generation(self) -> str:
        return str(self._query("SELECT value FROM meta WHERE key = 'generation'")[0][0])

    def _vectors(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        generation = self._generation()
        if self._matrix is None or self._matrix[0] != generation:
            rows = self._query("SELECT rowid, vec FROM vectors ORDER BY rowid")
            if rows:
                rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
            else:
                rowids, matrix = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
            self._matrix = (generation, rowids, matrix)
        return self._matrix[1], self._matrix[2]

    def _scope_mask(self, filters: Filters, rowids: np.ndarray) -> np.ndarray:
        """Which of the vector matrix's rows the filters admit, kept until the index changes."""
        import numpy as np

        return self._cached("vector mask", filters, lambda: np.isin(rowids, self._scope(filters).rowids))

    def _scope(self, filters: Filters) -> _Scope:
        """The chunks the filters admit, kept until the index changes (queries repeat the same scope)."""
        return self._cached("rowids", filters, lambda: _Scope(self._load_scope_rowids(filters)))

    def _cached(self, kind: str, filters: Filters, load: Callable[[], T]) -> T:
        key = (self._generation(), filters.model_dump_json())
        found = self._scope_cache.get(kind)
        if found is None or found[0] != key:
            found = self._scope_cache[kind] = (key, load())
        return cast(T, found[1])

    def _load_scope_rowids(self, filters: Filters) -> list[int]:
        """From scope_cache when a process before this one loaded the same scope of this generation."""
        index_id = self._query("SELECT value FROM meta WHERE key = 'index_id'")[0][0]
        key = f"{index_id}.{self._generation()}\0{filters.model_dump_json()}"
        if (cached := scope_cache.read(self.path.parent, key)) is not None:
            return cached
        where, params = scope_sql(filters)
        rows = self._query(
            f"SELECT DISTINCT c.rowid FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha WHERE {where}",
            params,
        )
        rowids = sorted(r[0] for r in rows)
        scope_cache.write(self.path.parent, key, rowids)
        return rowids

    def _nearest(self, vector: Sequence[float], limit: int, filters: Filters) -> list[tuple[Any, float]]:
        import numpy as np

        rowids, matrix = self._vectors()
        if not len(rowids):
            return []
        query = np.asarray(vector, dtype=np.float32)
        if query.shape[0] != matrix.shape[1]:
            raise CodeIndexError(
                f"query vector has {query.shape[0]} dimensions, the index {matrix.shape[1]}",
                hint="the embedding model changed: re-index with a fresh MENDFLOW_STATE_DIR/index",
            )
        query = query / (np.linalg.norm(query) or 1.0)
        # One product over the whole matrix, then the scope: gathering the scope's rows first copies them.
        sims = np.where(self._scope_mask(filters, rowids), matrix @ query, -np.inf)
        count = min(limit, int(np.isfinite(sims).sum()))
        if not count:
            return []
        top = np.argpartition(-sims, count - 1)[:count]
        best = {int(rowids[i]): float(sims[i]) for i in top}
        where, params = scope_sql(filters)
        marks = ",".join("?" * len(best))
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM chunks c JOIN ref_files f ON f.blob_sha = c.blob_sha "
            f"WHERE c.rowid IN ({marks}) AND {where}",
            [*best, *params],
        )
        return sorted(((r, best[r[0]]) for r in rows), key=lambda rs: -rs[1])

    def lookup_names(self, name: str, filters: Filters) -> list[Hit]:
        where, params = scope_sql(filters)
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM chunks c JOIN ref_files f ON f.blob_sha = c.blob_sha "
            "WHERE c.rowid IN (SELECT rowid FROM chunks WHERE name = ? "
            "UNION SELECT rowid FROM chunks WHERE symbol = ?) "
            f"AND c.kind != 'file' AND {where} ORDER BY f.path, c.start_line, c.part",
            [name, name, *params],
        )
        return [_hit(r, 1.0) for r in rows]

    def chunks_at(self, path: str, filters: Filters) -> list[Hit]:
        where, params = scope_sql(filters)
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha "
            f"WHERE f.path = ? AND {where} ORDER BY f.repo, f.ref, c.start_line, c.part",
            [path, *params],
        )
        return [_hit(r) for r in rows]

    def get_chunks(self, ids: Sequence[str], filters: Filters) -> list[Hit]:
        if not ids:
            return []
        where, params = scope_sql(filters)
        marks = ",".join("?" * len(ids))
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM chunks c JOIN ref_files f ON f.blob_sha = c.blob_sha "
            f"WHERE c.id IN ({marks}) AND {where} ORDER BY f.repo, f.ref, f.path",
            [*ids, *params],
        )
        return [_hit(r) for r in rows]

    def file_lines(self, filters: Filters) -> dict[tuple[str, str, str], int]:
        return self._cached("file lines", filters, lambda: self._load_file_lines(filters))

    def _load_file_lines(self, filters: Filters) -> dict[tuple[str, str, str], int]:
        where, params = scope_sql(filters)
        rows = self._query(
            "SELECT f.repo, f.ref, f.path, MAX(c.end_line) FROM ref_files f JOIN chunks c "
            f"ON c.blob_sha = f.blob_sha AND c.kind = 'file' WHERE {where} GROUP BY f.repo, f.ref, f.path",
            params,
        )
        return {(repo, ref, path): lines for repo, ref, path, lines in rows}

    def file_texts(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        sql, params = file_texts_sql(HIT_COLUMNS, filters, query, lambda: self._signatures(filters))
        for r in self._query(sql, params):
            yield _hit(r)

    def _signatures(self, filters: Filters) -> grams.SignatureSet:
        """The trigram signatures of the files in scope, kept until the index changes."""
        where, params = scope_sql(filters)
        return self._cached("grams", filters, lambda: grams.SignatureSet(self._query(signatures_sql(where), params)))

    def symbols(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        where, params = scope_sql(filters)
        rows_sql = (
            "FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha "
            f"WHERE c.kind != 'file' AND c.part <= 1 AND {where}"
        )
        if query is not None:
            # Match each distinct name in scope once, then fetch only the matching symbols' rows.
            distinct, scope_params = f"SELECT DISTINCT c.symbol {rows_sql}", list(params)
            listing = self._cached(
                "names", filters, lambda: NameList([n for (n,) in self._query(distinct, scope_params)])
            )
            names = listing.matching(query)
            if not names:
                return
            # Few names: start from them (symbol index), then their files, rather than from every file in scope.
            rows_sql = (
                "FROM chunks c CROSS JOIN ref_files f INDEXED BY ref_files_blob ON f.blob_sha = c.blob_sha "
                f"WHERE c.symbol IN (SELECT value FROM json_each(?)) AND c.kind != 'file' AND c.part <= 1 AND {where}"
            )
            params = [json.dumps(names), *params]
        columns = HIT_COLUMNS.replace("c.text", "''")
        rows = self._query(f"SELECT {columns} {rows_sql} ORDER BY f.repo, f.path, c.start_line", params)
        for r in rows:
            yield _hit(r)

    def symbol_spans(self, blob_shas: Iterable[str]) -> dict[str, list[tuple[str, int, int]]]:
        out: dict[str, list[tuple[str, int, int]]] = {}
        rows = self._query(
            "SELECT blob_sha, symbol, min(start_line), max(end_line) FROM chunks "
            "WHERE blob_sha IN (SELECT value FROM json_each(?)) AND kind != 'file' GROUP BY blob_sha, symbol_key",
            [json.dumps(sorted(blob_shas))],
        )
        for sha, symbol, start, end in rows:
            out.setdefault(sha, []).append((symbol, start, end))
        return out

    def gc(self) -> int:
        with self._tx() as cur:
            orphans = [
                r[0]
                for r in cur.execute(
                    "SELECT blob_sha FROM blobs WHERE blob_sha NOT IN (SELECT DISTINCT blob_sha FROM ref_files)"
                )
            ]
            for sha in orphans:
                self._delete_blob(cur, sha)
            self._bump_generation(cur)
        return len(orphans)

    def close(self) -> None:
        with self._lock:
            self.db.close()
