"""The query API the planner, builder, CLI and flow use: ``open_index(settings)`` → ``CodeIndex``.

Nothing outside rag_indexer imports a store: the backend is chosen here from ``Settings.index``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mendflow.errors import CodeIndexError, InputError, MendflowError
from mendflow.identity import work_tree_id
from rag_indexer.config import IndexerConfig
from rag_indexer.embeddings import EmbeddingService, make_embeddings
from rag_indexer.grep import compile_query
from rag_indexer.models import Filters, Hit, IndexReport, RefState, Snippet
from rag_indexer.ranking import longest_files, named_files, rank_files
from rag_indexer.store import make_store
from rag_indexer.store.base import IndexStore

if TYPE_CHECKING:
    from mendflow.settings import Settings

# Chunk hits a file ranking starts from: 400 keeps R@10 on the sets in bench/README.md; 100 cost 0.01-0.03.
FILE_POOL = 400

_LOCATION = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class IndexStatus(BaseModel):
    """Which commit the index holds for (repo, ref) and whether the ref has moved since."""

    repo: str
    ref: str
    indexed: RefState | None
    current_commit: str

    @property
    def stale(self) -> bool:
        return self.indexed is None or self.indexed.commit != self.current_commit


def open_index(
    settings: Settings | None = None,
    *,
    config: IndexerConfig | None = None,
    repo: str | None = None,
    ref: str | None = None,
) -> CodeIndex:
    """The code index configured by ``settings`` (default: get_settings()).

    ``repo``/``ref`` set default query filters (a repo may be given as a path inside its work tree).
    """
    if config is None:
        from mendflow.settings import get_settings  # late: a query given its config skips pydantic-settings

        config = IndexerConfig.from_settings(settings or get_settings())
    embeddings = make_embeddings(config)
    try:
        store = make_store(config)
    except MendflowError:
        embeddings.close()
        raise
    return CodeIndex(store, embeddings, config, Filters(repo=_repo_name(repo), ref=ref))


def _repo_name(repo: str | None) -> str | None:
    """Accept a repository's path as well as its identity (``owner/name``, the stored repo key)."""
    if repo is None:
        return None
    if Path(repo).exists():
        from rag_indexer.reader import open_repo, repo_key  # late: pygit2 (~30 ms) only for a path

        try:
            return repo_key(open_repo(repo))
        except InputError:
            pass
    return repo


class CodeIndex:
    """Index a repository and query it: search, grep_like, snippet, symbols_in, definitions_of."""

    def __init__(
        self, store: IndexStore, embeddings: EmbeddingService, config: IndexerConfig, defaults: Filters
    ) -> None:
        self.store = store
        self.embeddings = embeddings
        self.config = config
        self.defaults = defaults

    # -- lifecycle ---------------------------------------------------------------------------------------
    def __enter__(self) -> CodeIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()
        self.embeddings.close()

    # -- writing -----------------------------------------------------------------------------------------
    def index(self, repo_path: str | Path = ".", ref: str = "HEAD", repo_id: str | None = None) -> IndexReport:
        """Bring (repo, ref) up to date; only blobs the store has not seen are parsed and embedded.

        The repository is indexed under ``repo_id`` when given (the run's identity), else its own identity.
        """
        from rag_indexer.indexer import Indexer  # late: tree-sitter and the helper pool, which queries never need

        return Indexer(self.store, self.embeddings, self.config).index(repo_path, ref, repo_id)

    def status(self, repo_path: str | Path = ".", ref: str = "HEAD") -> IndexStatus:
        from rag_indexer.reader import open_repo, repo_key, resolve_commit

        repo = open_repo(repo_path)
        key = repo_key(repo)
        current = str(resolve_commit(repo, ref).id)
        return IndexStatus(repo=key, ref=ref, indexed=self.store.get_ref(key, ref), current_commit=current)

    def refs(self, repo: str | None = None) -> list[RefState]:
        # A work tree's identity from git first: pygit2's import costs more than `mendflow grep`'s answer.
        quick = work_tree_id(Path(repo)) if repo is not None and Path(repo).exists() else None
        return (self.store.list_refs(quick) if quick else []) or self.store.list_refs(_repo_name(repo))

    def gc(self) -> int:
        """Drop blobs that no indexed ref maps to any more."""
        return self.store.gc()

    # -- queries -----------------------------------------------------------------------------------------
    def _filters(self, filters: Filters | dict[str, Any] | None) -> Filters:
        given = Filters.model_validate(filters or {}) if not isinstance(filters, Filters) else filters
        merged = self.defaults.model_dump() | given.model_dump(exclude_none=True)
        merged["repo"] = _repo_name(merged["repo"])
        return Filters.model_validate(merged)

    def search(
        self, query: str, k: int = 10, alpha: float | None = None, filters: Filters | dict[str, Any] | None = None
    ) -> list[Hit]:
        """Hybrid search (BM25 + vectors when embeddings are on). ``alpha`` 0 = BM25 only, 1 = vectors only."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}", hint="ask for k >= 1 results")
        alpha = self.config.default_alpha if alpha is None else alpha
        if not 0.0 <= alpha <= 1.0:
            raise InputError(f"alpha must be within [0, 1], got {alpha}", hint="0 = BM25 only, 1 = vectors only")
        vector = None
        if alpha > 0 and self.embeddings.enabled and not self.store.server_vectorizes:
            vector = self.embeddings.embed_query(query)
        return self.store.search(query, vector, k, alpha, self._filters(filters))

    def search_files(
        self, query: str, k: int = 10, alpha: float | None = None, filters: Filters | dict[str, Any] | None = None
    ) -> list[Hit]:
        """The files a query is about, best first: each file's best chunk, scored for the whole file.

        Chunk hits are aggregated per file; defining a name the query spells as code and the query's words in
        the file's path add to it; test files rank below sources unless the query asks for tests; files the
        query names by file name or path come first, with or without a chunk hit (``rag_indexer/ranking.py``).
        """
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}", hint="ask for k >= 1 results")
        scope = self._filters(filters)
        hits = self.search(query, k=FILE_POOL, alpha=alpha, filters=scope)
        lines = self.store.file_lines(scope)
        hit_files = {(h.repo, h.ref, h.path) for h in hits}
        hits += [self._file_hit(key, scope) for key in named_files(lines, query, hit_files, k)]
        ranked = rank_files(hits, query, k, lines)
        have = [(h.repo, h.ref, h.path) for h in ranked]
        return ranked + [self._file_hit(key, scope) for key in longest_files(lines, query, have, k - len(ranked))]

    def _file_hit(self, key: tuple[str, str, str], scope: Filters) -> Hit:
        """The file chunk of (repo, ref, path), scored 0: a file ranked by its length alone."""
        repo, ref, path = key
        chunks = self.store.chunks_at(path, scope.model_copy(update={"repo": repo, "ref": ref}))
        return next(h for h in chunks if h.kind == "file").model_copy(update={"score": 0.0})

    def definitions_of(self, name: str, filters: Filters | dict[str, Any] | None = None) -> list[Hit]:
        """Symbols named exactly ``name`` (short name like 'divide' or qualified like 'Calc.divide')."""
        return self.store.lookup_names(name, self._filters(filters))

    def symbols_in(self, path: str, filters: Filters | dict[str, Any] | None = None) -> list[Hit]:
        """The symbols of the file at ``path``, in line order."""
        return [h for h in self.store.chunks_at(path, self._filters(filters)) if h.kind != "file"]

    def snippet(self, target: str, radius: int = 0, filters: Filters | dict[str, Any] | None = None) -> Snippet:
        """Lines of a chunk (by id) or of ``path:start-end`` (or ``path:line``), widened by ``radius`` lines."""
        scope = self._filters(filters)
        if _UUID.match(target):
            hits = self.store.get_chunks([target], scope)
            if not hits:
                raise CodeIndexError(f"no chunk {target} in the index", hint="use an id returned by search")
            path, start, end = hits[0].path, hits[0].start_line, hits[0].end_line
            scope = scope.model_copy(update={"repo": hits[0].repo, "ref": hits[0].ref})
        else:
            m = _LOCATION.match(target)
            if not m:
                raise InputError(f"cannot read snippet target {target!r}", hint="pass a chunk id or 'path:start-end'")
            path, start = m["path"], int(m["start"])
            end = int(m["end"]) if m["end"] else start
        files = [h for h in self.store.chunks_at(path, scope) if h.kind == "file"]
        if not files:
            raise CodeIndexError(
                f"{path} is not in the index for {scope.repo or 'any repo'}@{scope.ref or 'any ref'}",
                hint="check the path, or run `mendflow index` first",
            )
        file = files[0]
        lines = file.text.splitlines()
        lo, hi = max(1, start - radius), min(len(lines), end + radius)
        return Snippet(
            repo=file.repo, ref=file.ref, path=path, start_line=lo, end_line=hi, blob_sha=file.blob_sha,
            text="\n".join(lines[lo - 1 : hi]),
        )  # fmt: skip

    def grep_like(
        self,
        pattern: str,
        regex: bool = False,
        filters: Filters | dict[str, Any] | None = None,
        limit: int = 500,
        ignore_case: bool = False,
    ) -> list[Hit]:
        """Exact (or regex) matches over symbol names, then over text lines, like grep -n.

        Symbol hits have the symbol's kind; line hits have kind 'line', the matching line as text and the
        innermost enclosing symbol (or '').
        """
        scope = self._filters(filters)
        query = compile_query(pattern, regex, ignore_case)
        hits = list(self.store.symbols(scope, query))[:limit]
        files: list[tuple[Hit, list[tuple[int, int, int]]]] = []
        found = len(hits)
        for file in self.store.file_texts(scope, query):
            if found >= limit:
                break
            lines = list(itertools.islice(query.line_spans(file.text), limit - found))
            if lines:
                files.append((file, lines))
                found += len(lines)
        spans = self.store.symbol_spans({file.blob_sha for file, _ in files})
        for file, lines in files:
            hits.extend(_line_hit(file, line, start, stop, spans.get(file.blob_sha, [])) for line, start, stop in lines)
        return hits[:limit]

    def grep_lines(
        self,
        pattern: str,
        regex: bool = False,
        ignore_case: bool = False,
        filters: Filters | dict[str, Any] | None = None,
    ) -> Iterator[tuple[str, int, str]]:
        """Every matching line of the files in scope as (path, line number, line), like ``rg -n``.

        Unlike grep_like there is no limit and no symbol hits: a shell user pipes the lines on. Lines come in
        order within a file; files in the store's order (path order on the embedded store, like ``rg --sort
        path``). Trigram signatures and ``instr`` skip the files that cannot match before Python sees them.
        """
        query = compile_query(pattern, regex, ignore_case)
        for file in self.store.file_texts(self._filters(filters), query):
            for line, content in query.lines(file.text):
                yield file.path, line, content


def _line_hit(file: Hit, line: int, start: int, stop: int, spans: list[tuple[str, int, int]]) -> Hit:
    inside = [s for s in spans if s[1] <= line <= s[2]]
    enclosing = min(inside, key=lambda s: s[2] - s[1])[0] if inside else ""
    return file.model_copy(
        update={
            "kind": "line", "symbol": enclosing, "start_line": line, "end_line": line, "text": file.text[start:stop],
            "score": 1.0, "signature": "", "docstring": "",
        }
    )  # fmt: skip
