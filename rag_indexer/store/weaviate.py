"""The Weaviate store (weaviate-client v4): file and symbol collections plus blob markers and ref mappings.

Collections (names start with ``collection_prefix``):
  <P>File    one object per blob (the file chunk), uuid5(blob SHA, '')
  <P>Symbol  one object per symbol (part), uuid5(blob SHA, symbol path); ``name``/``symbol`` use FIELD
             tokenization so ``definitions_of`` is an exact lookup
  <P>Blob    the per-blob "indexed" marker, written only after every chunk of the blob was confirmed
  <P>Ref     one object per (repo, ref): commit, tree and the {path: blob} list as JSON. Replacing one object
             is atomic in Weaviate, so a reader sees the old mapping or the new one, never a mix.

Writes go through ``insert_many`` (synchronous, returns per-object errors: the client does not raise on
failed objects, so they are checked and retried). Connection failures are retried with back-off; UUIDs are
deterministic so a retried object overwrites itself — no duplicates, nothing lost.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlparse

from mendflow.errors import CodeIndexError
from rag_indexer.config import IndexerConfig
from rag_indexer.grep import GrepQuery
from rag_indexer.models import CHUNK_NAMESPACE, BlobChunks, Chunk, Filters, Hit, RefFile, RefState
from rag_indexer.reader import glob_match
from rag_indexer.store.base import IndexStore, dedupe_hits, names_field

T = TypeVar("T")
CONTENT_PROPS = [
    "blob_sha", "kind", "symbol", "symbol_key", "name", "signature", "docstring", "start_line", "end_line",
    "language", "part", "parts", "content_hash", "text",
]  # fmt: skip
FILTER_CHUNK = 100  # blob SHAs per contains_any filter: keeps each result under QUERY_MAXIMUM_RESULTS
PAGE = 1000


def _ref_uuid(repo: str, ref: str) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"ref\x00{repo}\x00{ref}"))


def _blob_uuid(blob_sha: str) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"blob\x00{blob_sha}"))


class WeaviateStore(IndexStore):
    def __init__(self, config: IndexerConfig) -> None:
        import weaviate
        from weaviate.classes.init import AdditionalConfig, Timeout

        self.config = config
        self.server_vectorizes = config.embeddings == "weaviate"
        self._weaviate = weaviate
        url = urlparse(config.weaviate_url)
        host, port = url.hostname or "127.0.0.1", url.port or (443 if url.scheme == "https" else 8080)
        try:
            self.client = weaviate.connect_to_custom(
                http_host=host, http_port=port, http_secure=url.scheme == "https",
                grpc_host=host, grpc_port=config.weaviate_grpc_port, grpc_secure=url.scheme == "https",
                auth_credentials=config.weaviate_api_key,
                additional_config=AdditionalConfig(timeout=Timeout(init=10, query=60, insert=120)),
            )  # fmt: skip
        except Exception as exc:  # the client raises several unrelated types for "cannot connect"
            raise CodeIndexError(
                f"cannot reach Weaviate at {config.weaviate_url} (gRPC {config.weaviate_grpc_port}): {exc}",
                hint="start Weaviate, fix MENDFLOW_INDEX__WEAVIATE_URL, or use MENDFLOW_INDEX__BACKEND=embedded",
            ) from exc
        p = config.collection_prefix
        self.names = {"file": f"{p}File", "symbol": f"{p}Symbol", "blob": f"{p}Blob", "ref": f"{p}Ref"}
        self._retry(self._ensure_collections)
        self.files = self.client.collections.get(self.names["file"])
        self.symbols_c = self.client.collections.get(self.names["symbol"])
        self.blobs = self.client.collections.get(self.names["blob"])
        self.refs = self.client.collections.get(self.names["ref"])
        self._mapping_cache: dict[tuple[str, str], tuple[str, dict[str, RefFile]]] = {}

    # -- schema ----------------------------------------------------------------------------------------
    def _vector_config(self) -> Any:
        from weaviate.classes.config import Configure

        if self.server_vectorizes:
            return Configure.Vectors.text2vec_openai(
                model=self.config.embedding_model,
                base_url=self.config.llm_base_url,  # type: ignore[arg-type]  # pydantic validates the str
                source_properties=["text"],
            )
        return Configure.Vectors.self_provided()

    def _ensure_collections(self) -> None:
        from weaviate.classes.config import DataType, Property, Tokenization

        def text(name: str, tokenization: Tokenization = Tokenization.FIELD, search: bool = False) -> Property:
            return Property(
                name=name, data_type=DataType.TEXT, tokenization=tokenization,
                index_searchable=search, index_filterable=not search, skip_vectorization=name != "text",
            )  # fmt: skip

        def number(name: str) -> Property:
            return Property(name=name, data_type=DataType.INT, skip_vectorization=True)

        content = [
            text("blob_sha"), text("kind"), text("symbol"), text("symbol_key"), text("name"), text("language"),
            text("content_hash"),
            text("names", Tokenization.WORD, search=True), text("text", Tokenization.WORD, search=True),
            Property(name="signature", data_type=DataType.TEXT, index_searchable=False, index_filterable=False,
                     skip_vectorization=True),
            Property(name="docstring", data_type=DataType.TEXT, index_searchable=False, index_filterable=False,
                     skip_vectorization=True),
            number("start_line"), number("end_line"), number("part"), number("parts"),
        ]  # fmt: skip
        opaque: dict[str, Any] = {"index_searchable": False, "index_filterable": False}
        schemas = {
            "file": content,
            "symbol": content,
            "blob": [
                text("blob_sha"), text("language"), text("encoding"), number("chunks"),
                Property(name="symbols_json", data_type=DataType.TEXT, **opaque),
            ],
            "ref": [
                text("repo"), text("ref"), text("commit_sha"), text("tree_sha"), text("generation"),
                text("indexed_at"), number("files"),
                Property(name="files_json", data_type=DataType.TEXT, **opaque),
            ],
        }  # fmt: skip
        for key, props in schemas.items():
            name = self.names[key]
            if self.client.collections.exists(name):
                continue
            vectors = self._vector_config() if key in ("file", "symbol") else None
            try:
                self.client.collections.create(name, properties=props, vector_config=vectors)
            except self._weaviate.exceptions.UnexpectedStatusCodeError as exc:
                if "already exists" not in str(exc):  # a concurrent indexer created it first
                    raise

    def drop(self) -> None:
        """Delete this store's collections (tests, or a full rebuild)."""
        self.client.collections.delete(list(self.names.values()))

    # -- retries ---------------------------------------------------------------------------------------
    def _retry(self, action: Callable[[], T]) -> T:
        """Run ``action``, retrying connection-level failures with exponential back-off."""
        errors = self._weaviate.exceptions
        transient = (
            errors.WeaviateConnectionError, errors.WeaviateGRPCUnavailableError, errors.WeaviateTimeoutError,
            errors.WeaviateRetryError, errors.UnexpectedStatusCodeError, errors.WeaviateQueryError,
            errors.WeaviateBatchError, errors.WeaviateDeleteManyError,
            errors.WeaviateClosedClientError, ConnectionError, TimeoutError,
        )  # fmt: skip
        delay = self.config.store_retry_delay_sec
        for attempt in range(1, self.config.store_retries + 1):
            try:
                return action()
            except transient as exc:
                if attempt == self.config.store_retries:
                    raise CodeIndexError(
                        f"Weaviate at {self.config.weaviate_url} failed {attempt} times: {exc}",
                        hint="check that Weaviate is up; re-running the index resumes where it stopped",
                    ) from exc
                time.sleep(delay)
                delay *= 2
                self._reconnect()
        raise AssertionError("unreachable")

    def _reconnect(self) -> None:
        try:
            if not self.client.is_ready():
                self.client.close()
                self.client.connect()
        except Exception:  # still down: the next attempt will tell
            pass

    def _insert(self, collection: Any, objects: list[Any]) -> None:
        """insert_many with a check of every object's result; failed objects are re-sent."""
        pending = objects
        for attempt in range(1, self.config.store_retries + 1):
            if not pending:
                return
            batch = pending
            try:
                result = self._retry(lambda batch=batch: collection.data.insert_many(batch))  # type: ignore[misc]
            except self._weaviate.exceptions.WeaviateInsertManyAllFailedError as exc:
                failed, message = batch, str(exc)
            else:
                if not result.errors:
                    return
                failed = [batch[i] for i in sorted(result.errors)]
                message = next(iter(result.errors.values())).message
            pending = failed
            if attempt == self.config.store_retries:
                raise CodeIndexError(
                    f"Weaviate refused {len(pending)} objects in {collection.name}: {message}",
                    hint="check the Weaviate logs; re-running the index resumes where it stopped",
                )
            time.sleep(self.config.store_retry_delay_sec)

    # -- content ---------------------------------------------------------------------------------------
    def _fetch_all(self, collection: Any, filters: Any, props: Sequence[str]) -> list[Any]:
        """All objects matching ``filters`` (paged by offset; callers keep each filter's result small)."""
        out: list[Any] = []
        offset = 0
        while True:
            page = self._retry(
                lambda offset=offset: collection.query.fetch_objects(  # type: ignore[misc]
                    filters=filters, limit=PAGE, offset=offset, return_properties=list(props)
                )
            )
            out.extend(page.objects)
            if len(page.objects) < PAGE:
                return out
            offset += PAGE

    def _by_blobs(self, collection: Any, shas: Iterable[str], props: Sequence[str], extra: Any = None) -> list[Any]:
        from weaviate.classes.query import Filter

        items = sorted(set(shas))
        out: list[Any] = []
        for i in range(0, len(items), FILTER_CHUNK):
            f = Filter.by_property("blob_sha").contains_any(items[i : i + FILTER_CHUNK])
            out.extend(self._fetch_all(collection, f if extra is None else f & extra, props))
        return out

    def indexed_blobs(self, shas: Iterable[str]) -> dict[str, str]:
        return {
            o.properties["blob_sha"]: o.properties["language"]
            for o in self._by_blobs(self.blobs, shas, ["blob_sha", "language"])
        }

    def write_blobs(self, items: Sequence[BlobChunks]) -> None:
        from weaviate.classes.data import DataObject

        files: list[Any] = []
        symbols: list[Any] = []
        markers: list[Any] = []
        for item in items:
            for i, chunk in enumerate(item.chunks):
                vector = item.vectors[i] if item.vectors is not None else None
                obj = DataObject(properties=self._properties(chunk), uuid=chunk.id, vector=vector)
                (files if chunk.kind == "file" else symbols).append(obj)
            symbol_map = {c.symbol_key: c.content_hash for c in item.chunks if c.kind != "file"}
            markers.append(
                DataObject(
                    uuid=_blob_uuid(item.blob_sha),
                    properties={
                        "blob_sha": item.blob_sha,
                        "language": item.language,
                        "encoding": item.encoding,
                        "chunks": len(item.chunks),
                        "symbols_json": json.dumps(symbol_map),
                    },
                )
            )
        for collection, objects in ((self.files, files), (self.symbols_c, symbols)):
            for i in range(0, len(objects), 200):
                self._insert(collection, objects[i : i + 200])
        # Only now, with every chunk confirmed, do the blobs count as indexed.
        self._insert(self.blobs, markers)

    @staticmethod
    def _properties(chunk: Chunk) -> dict[str, Any]:
        props = {name: getattr(chunk, name) for name in CONTENT_PROPS}
        props["names"] = names_field(chunk.symbol, chunk.signature, chunk.docstring)
        return props

    def blob_symbols(self, shas: Iterable[str]) -> dict[str, dict[str, str]]:
        return {
            o.properties["blob_sha"]: json.loads(o.properties["symbols_json"])
            for o in self._by_blobs(self.blobs, shas, ["blob_sha", "symbols_json"])
        }

    # -- mapping ---------------------------------------------------------------------------------------
    def _ref_object(self, repo: str, ref: str, props: Sequence[str]) -> Any:
        return self._retry(
            lambda: self.refs.query.fetch_object_by_id(_ref_uuid(repo, ref), return_properties=list(props))
        )

    @staticmethod
    def _state(p: dict[str, Any]) -> RefState:
        return RefState(
            repo=p["repo"], ref=p["ref"], commit=p["commit_sha"], tree=p["tree_sha"],
            indexed_at=datetime.fromisoformat(p["indexed_at"]), files=p["files"],
        )  # fmt: skip

    def get_ref(self, repo: str, ref: str) -> RefState | None:
        obj = self._ref_object(repo, ref, ["repo", "ref", "commit_sha", "tree_sha", "indexed_at", "files"])
        return self._state(obj.properties) if obj is not None else None

    def ref_files(self, repo: str, ref: str) -> dict[str, RefFile]:
        head = self._ref_object(repo, ref, ["generation"])
        if head is None:
            return {}
        generation = head.properties["generation"]
        cached = self._mapping_cache.get((repo, ref))
        if cached and cached[0] == generation:
            return cached[1]
        obj = self._ref_object(repo, ref, ["generation", "files_json"])
        files = {
            row[0]: RefFile(path=row[0], blob_sha=row[1], language=row[2])
            for row in json.loads(obj.properties["files_json"])
        }
        self._mapping_cache[(repo, ref)] = (obj.properties["generation"], files)
        return files

    def set_ref(self, state: RefState, files: Sequence[RefFile]) -> None:
        props: dict[str, Any] = {
            "repo": state.repo, "ref": state.ref, "commit_sha": state.commit, "tree_sha": state.tree,
            "generation": uuid.uuid4().hex, "indexed_at": state.indexed_at.isoformat(), "files": len(files),
            "files_json": json.dumps([[f.path, f.blob_sha, f.language] for f in files]),
        }  # fmt: skip
        uid = _ref_uuid(state.repo, state.ref)
        self._retry(lambda: self.refs.data.replace(uuid=uid, properties=props) if self.refs.data.exists(uid)
                    else self.refs.data.insert(properties=props, uuid=uid))  # fmt: skip

    def list_refs(self, repo: str | None = None) -> list[RefState]:
        from weaviate.classes.query import Filter

        f = Filter.by_property("repo").equal(repo) if repo else None
        props = ["repo", "ref", "commit_sha", "tree_sha", "indexed_at", "files"]
        return [self._state(o.properties) for o in self._fetch_all(self.refs, f, props)]

    # -- scope -------------------------------------------------------------------------------------------
    def _scope(self, filters: Filters) -> dict[str, list[tuple[str, str, str]]]:
        """blob SHA → [(repo, ref, path)] for every file the filters admit."""
        refs = [s for s in self.list_refs(filters.repo) if filters.ref is None or s.ref == filters.ref]
        scope: dict[str, list[tuple[str, str, str]]] = {}
        for state in sorted(refs, key=lambda s: (s.repo, s.ref)):
            for path, f in sorted(self.ref_files(state.repo, state.ref).items()):
                if filters.path and not (
                    glob_match(filters.path, path) if any(c in filters.path for c in "*?[")
                    else path.startswith(filters.path)
                ):  # fmt: skip
                    continue
                if filters.language and f.language != filters.language:
                    continue
                scope.setdefault(f.blob_sha, []).append((state.repo, state.ref, path))
        return scope

    def _content_filter(self, scope: dict[str, list[tuple[str, str, str]]], filters: Filters) -> Any:
        from weaviate.classes.query import Filter

        f = Filter.by_property("blob_sha").contains_any(sorted(scope))
        if filters.kind:
            f = f & Filter.by_property("kind").equal(filters.kind)
        return f

    @staticmethod
    def _expand(obj: Any, scope: dict[str, list[tuple[str, str, str]]], score: float = 0.0) -> list[Hit]:
        p = obj.properties
        return [
            Hit(
                id=str(obj.uuid),
                repo=repo,
                ref=ref,
                path=path,
                symbol=p["symbol"],
                kind=p["kind"],
                start_line=p["start_line"],
                end_line=p["end_line"],
                score=score,
                blob_sha=p["blob_sha"],
                language=p["language"],
                signature=p.get("signature") or "",
                docstring=p.get("docstring") or "",
                text=p.get("text") or "",
            )
            for repo, ref, path in scope.get(p["blob_sha"], [])
        ]

    # -- queries ---------------------------------------------------------------------------------------
    def search(self, text: str, vector: Sequence[float] | None, k: int, alpha: float, filters: Filters) -> list[Hit]:
        from weaviate.classes.query import MetadataQuery

        from rag_indexer.store.base import query_terms

        scope = self._scope(filters)
        terms = query_terms(text)
        if not scope or (not terms and vector is None and not self.server_vectorizes):
            return []
        where = self._content_filter(scope, filters)
        limit = max(k * 4, 50)
        keyword_text = " ".join(terms)
        results: list[tuple[float, Any]] = []
        for collection in (self.symbols_c, self.files):
            if (vector is None and not self.server_vectorizes) or alpha == 0:
                res = self._retry(lambda c=collection: c.query.bm25(  # type: ignore[misc]
                    keyword_text, query_properties=["names^3", "text"], filters=where, limit=limit,
                    return_metadata=MetadataQuery(score=True), return_properties=CONTENT_PROPS,
                ))  # fmt: skip
            else:
                res = self._retry(lambda c=collection: c.query.hybrid(  # type: ignore[misc]
                    keyword_text or text, vector=list(vector) if vector is not None else None, alpha=alpha,
                    query_properties=["names^3", "text"], filters=where, limit=limit,
                    return_metadata=MetadataQuery(score=True), return_properties=CONTENT_PROPS,
                ))  # fmt: skip
            results.extend((float(o.metadata.score or 0.0), o) for o in res.objects)
        results.sort(key=lambda so: -so[0])
        return dedupe_hits((h for score, o in results for h in self._expand(o, scope, score)), k)

    def lookup_names(self, name: str, filters: Filters) -> list[Hit]:
        from weaviate.classes.query import Filter

        scope = self._scope(filters)
        if not scope:
            return []
        match = Filter.by_property("name").equal(name) | Filter.by_property("symbol").equal(name)
        objects = self._by_blobs(self.symbols_c, scope, CONTENT_PROPS, match)
        hits = [h for o in objects for h in self._expand(o, scope, 1.0)]
        return sorted(hits, key=lambda h: (h.path, h.start_line, h.end_line))

    def chunks_at(self, path: str, filters: Filters) -> list[Hit]:
        scope = self._scope(filters)
        scope = {sha: [e for e in entries if e[2] == path] for sha, entries in scope.items()}
        scope = {sha: entries for sha, entries in scope.items() if entries}
        if not scope:
            return []
        objects = self._by_blobs(self.files, scope, CONTENT_PROPS) + self._by_blobs(
            self.symbols_c, scope, CONTENT_PROPS
        )
        hits = [h for o in objects for h in self._expand(o, scope)]
        return sorted(hits, key=lambda h: (h.repo, h.ref, h.start_line, h.kind != "file", h.end_line))

    def get_chunks(self, ids: Sequence[str], filters: Filters) -> list[Hit]:
        from weaviate.classes.query import Filter

        if not ids:
            return []
        scope = self._scope(filters)
        hits: list[Hit] = []
        for collection in (self.files, self.symbols_c):
            objects = self._fetch_all(collection, Filter.by_id().contains_any(list(ids)), CONTENT_PROPS)
            hits.extend(h for o in objects for h in self._expand(o, scope))
        return sorted(hits, key=lambda h: (h.repo, h.ref, h.path))

    def file_lines(self, filters: Filters) -> dict[tuple[str, str, str], int]:
        if filters.kind not in (None, "file"):
            return {}
        scope = self._scope(filters)
        lines: dict[str, int] = {}
        for o in self._by_blobs(self.files, scope, ["blob_sha", "end_line"]):
            sha = o.properties["blob_sha"]
            lines[sha] = max(lines.get(sha, 0), int(o.properties["end_line"]))  # a split file: its last part
        return {entry: n for sha, n in lines.items() for entry in scope[sha]}

    def file_texts(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        scope = self._scope(filters)
        if filters.kind not in (None, "file"):
            return
        # Literals must all occur (case-sensitively unless ignore-case); the caller confirms with the regex.
        needles = query.literals if query is not None and not query.ignore_case else ()
        for i in range(0, len(scope), 200):
            part = dict(sorted(scope.items())[i : i + 200])
            for o in self._by_blobs(self.files, part, CONTENT_PROPS):
                if all(n in o.properties["text"] for n in needles):
                    yield from self._expand(o, scope)

    def symbols(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        from weaviate.classes.query import Filter

        scope = self._scope(filters)
        props = [p for p in CONTENT_PROPS if p != "text"]
        extra = Filter.by_property("part").less_or_equal(1)
        if filters.kind:
            extra = extra & Filter.by_property("kind").equal(filters.kind)
        for o in self._by_blobs(self.symbols_c, scope, props, extra):
            if query is None or query.matches(o.properties["symbol"]):
                yield from self._expand(o, scope)

    def symbol_spans(self, blob_shas: Iterable[str]) -> dict[str, list[tuple[str, int, int]]]:
        spans: dict[tuple[str, str], tuple[str, int, int]] = {}
        props = ["blob_sha", "symbol", "symbol_key", "start_line", "end_line"]
        for o in self._by_blobs(self.symbols_c, blob_shas, props):
            p = o.properties
            key = (p["blob_sha"], p["symbol_key"])
            start, end = int(p["start_line"]), int(p["end_line"])
            if key in spans:  # parts of one split symbol: merge their ranges
                _, s0, e0 = spans[key]
                start, end = min(start, s0), max(end, e0)
            spans[key] = (p["symbol"], start, end)
        out: dict[str, list[tuple[str, int, int]]] = {}
        for (sha, _), span in spans.items():
            out.setdefault(sha, []).append(span)
        return out

    def gc(self) -> int:
        from weaviate.classes.query import Filter

        live = {f.blob_sha for s in self.list_refs() for f in self.ref_files(s.repo, s.ref).values()}
        stored = {str(o.properties["blob_sha"]) for o in self.blobs.iterator(return_properties=["blob_sha"])}
        orphans = sorted(stored - live)
        for i in range(0, len(orphans), FILTER_CHUNK):
            where = Filter.by_property("blob_sha").contains_any(orphans[i : i + FILTER_CHUNK])
            # marker first: a crash part-way leaves chunks without a marker, which re-indexing overwrites
            for collection in (self.blobs, self.files, self.symbols_c):
                self._retry(lambda c=collection, w=where: c.data.delete_many(where=w))  # type: ignore[misc]
        return len(orphans)

    def close(self) -> None:
        self.client.close()
