"""Reading the embedded index without its models: the file-text scan ``grep`` runs, and a read-only handle.

``mendflow grep`` on the embedded store answers in a few tens of milliseconds, while pydantic and the
index's models take ~60 ms to import. So the scan's SQL lives here, free of models: ``EmbeddedStore`` wraps
its rows in ``Hit``s, and ``ReadOnlyIndex`` gives the CLI the bare (path, text) rows of the same statement.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from mendflow.errors import CodeIndexError
from rag_indexer.grep import GrepQuery
from rag_indexer.store import DATABASE_FILE, grams

# 4: trigram signatures (grams) for grep_like. 5: FTS bodies carry the words of CamelCase identifiers.
# An index of schema 3 or 4 is brought up to date when EmbeddedStore opens it (its _migrate).
SCHEMA_VERSION = 5


class Scope(Protocol):
    """What a query is limited to (``Filters`` is one; so is ``GrepScope``)."""

    @property
    def repo(self) -> str | None: ...
    @property
    def ref(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def language(self) -> str | None: ...
    @property
    def kind(self) -> str | None: ...


class GrepScope(NamedTuple):
    repo: str
    ref: str
    path: str | None = None
    language: str | None = None
    kind: str | None = None


class IndexedRef(NamedTuple):
    repo: str
    ref: str
    indexed_at: str  # ISO 8601, as stored


def scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    """WHERE fragments over f (ref_files) and c (chunks) for the scope."""
    clauses: list[str] = []
    params: list[Any] = []
    if scope.repo is not None:
        clauses.append("f.repo = ?")
        params.append(scope.repo)
    if scope.ref is not None:
        clauses.append("f.ref = ?")
        params.append(scope.ref)
    if scope.path:
        if any(ch in scope.path for ch in "*?["):
            clauses.append("f.path GLOB ?")
            params.append(scope.path)
        else:
            clauses.append("substr(f.path, 1, ?) = ?")
            params.extend([len(scope.path), scope.path])
    if scope.language is not None:
        clauses.append("c.language = ?")
        params.append(scope.language)
    if scope.kind is not None:
        clauses.append("c.kind = ?")
        params.append(scope.kind)
    return (" AND ".join(clauses) or "1"), params


def signatures_sql(where: str) -> str:
    """The trigram signatures of the files a scope's WHERE admits."""
    return (
        "SELECT g.blob_sha, g.bits, g.sig FROM grams g WHERE g.blob_sha IN (SELECT f.blob_sha "
        f"FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha WHERE c.kind = 'file' AND {where})"
    )


def file_texts_sql(
    columns: str, scope: Scope, query: GrepQuery | None, signatures: Callable[[], grams.SignatureSet]
) -> tuple[str, list[Any]]:
    """The statement listing the scope's whole files (path order), skipping those ``query`` cannot match.

    ``signatures`` gives the scope's trigram signatures; it is called only when the query has trigrams.
    """
    where, params = scope_sql(scope)
    if query is not None:
        hashes = grams.literal_hashes(query.literals, query.ignore_case)
        if hashes:
            where += " AND c.blob_sha IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(sorted(signatures().candidates(hashes))))
        if query.literals and not query.ignore_case:
            # instr runs in C over the candidates: files a hash collision let through never reach Python.
            where += " AND instr(c.text, ?) > 0"
            params.append(max(query.literals, key=len))
    sql = (
        f"SELECT {columns} FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha "
        f"WHERE c.kind = 'file' AND {where} ORDER BY f.repo, f.path, f.ref"
    )
    return sql, params


class ReadOnlyIndex:
    """The embedded index's database opened read-only, for a query that must start fast."""

    def __init__(self, db: sqlite3.Connection, directory: Path) -> None:
        self.db = db
        self.directory = directory

    @classmethod
    def open(cls, index_dir: Path) -> ReadOnlyIndex | None:
        """None when there is no index there, or one only ``EmbeddedStore`` can read (to migrate or refuse)."""
        path = index_dir / DATABASE_FILE
        if not path.is_file():
            return None
        try:
            db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            db.execute("PRAGMA mmap_size=1073741824")  # signatures and texts read without copies: -3 ms on SymPy
            found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.Error:
            return None
        if found is None or int(found[0]) != SCHEMA_VERSION:
            db.close()
            return None
        return cls(db, index_dir)

    def close(self) -> None:
        self.db.close()

    def refs(self, repo: str) -> list[IndexedRef]:
        return [IndexedRef(*row) for row in self._rows("SELECT repo, ref, indexed_at FROM refs WHERE repo = ?", [repo])]

    def tree(self, repo: str, ref: str) -> str | None:
        """The git tree an indexed ref stands for: what names its grep pack."""
        rows = self._rows("SELECT tree_sha FROM refs WHERE repo = ? AND ref = ?", [repo, ref])
        return str(rows[0][0]) if rows else None

    def text_size(self, repo: str, ref: str) -> int:
        """Characters of text in a ref's files."""
        sql = "SELECT sum(length(c.text)) FROM ref_files f JOIN chunks c ON c.blob_sha = f.blob_sha AND c.kind = 'file'"
        return int(self._rows(sql + " WHERE f.repo = ? AND f.ref = ?", [repo, ref])[0][0] or 0)

    def pack_rows(self, repo: str, ref: str) -> list[tuple[str, str, int, bytes]]:
        """(path, text, bits_log2, signature) of every file of a ref, in path order: a grep pack's content."""
        rows = self._rows(
            "SELECT f.path, c.text, g.bits, g.sig FROM ref_files f "
            "JOIN chunks c ON c.blob_sha = f.blob_sha AND c.kind = 'file' LEFT JOIN grams g ON g.blob_sha = f.blob_sha "
            "WHERE f.repo = ? AND f.ref = ? ORDER BY f.path",
            [repo, ref],
        )
        return [(p, t, k, sig) if sig is not None else (p, t, *file_signature(t)) for p, t, k, sig in rows]

    def file_texts(self, scope: GrepScope, query: GrepQuery) -> list[tuple[str, str]]:
        """(path, text) of each file in scope that may match ``query``, in path order."""

        def signatures() -> grams.SignatureSet:
            where, params = scope_sql(scope)
            return grams.SignatureSet(self._rows(signatures_sql(where), params))

        return self._rows(*file_texts_sql("f.path, c.text", scope, query, signatures))

    def _rows(self, sql: str, params: list[Any]) -> list[Any]:
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise CodeIndexError(f"code index query failed: {exc}") from exc


def file_signature(text: str) -> tuple[int, bytes]:
    """A file's trigram signature, as the store computes it when it writes the file."""
    return grams.signature(text.encode("utf-8", "surrogatepass"))
