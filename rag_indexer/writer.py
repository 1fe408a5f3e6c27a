"""Index one batch of blobs: read, chunk, embed and store them. The indexer and its helper processes share it."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from rag_indexer.chunker import chunk_file
from rag_indexer.config import IndexerConfig
from rag_indexer.embeddings import EmbeddingService
from rag_indexer.models import BlobChunks
from rag_indexer.reader import TreeEntry, TreeReader, decode_blob, is_binary
from rag_indexer.store.base import IndexStore

BINARY = "binary"


@dataclass(frozen=True, slots=True)
class StoredBlob:
    """What the indexer needs to know of a stored blob (its chunks stay in the store)."""

    blob_sha: str
    language: str
    chunks: int
    symbols: int  # distinct symbol keys: a file adding this blob adds that many symbols (no store query)


@dataclass(frozen=True, slots=True)
class StoredBatch:
    blobs: list[StoredBlob]
    texts_embedded: int


class BlobWriter:
    def __init__(
        self, reader: TreeReader, store: IndexStore, embeddings: EmbeddingService, config: IndexerConfig
    ) -> None:
        self.reader = reader
        self.store = store
        self.embeddings = embeddings
        self.config = config

    def write(self, entries: list[TreeEntry]) -> StoredBatch:
        """Store the batch in one store transaction; the store marks each blob indexed only with it."""
        embedded = self.embeddings.texts_embedded
        items = [self._chunks(entry) for entry in entries]
        self._embed(items)
        self.store.write_blobs(items)
        blobs = [StoredBlob(item.blob_sha, item.language, len(item.chunks), _symbol_count(item)) for item in items]
        return StoredBatch(blobs, self.embeddings.texts_embedded - embedded)

    def _chunks(self, entry: TreeEntry) -> BlobChunks:
        data = self.reader.read(entry.blob_sha)
        if is_binary(data):
            # Recorded (with no chunks) so the next run does not read it again.
            return BlobChunks(blob_sha=entry.blob_sha, language=BINARY, encoding="", chunks=[])
        decoded = decode_blob(data)
        # A UTF-8 blob without a BOM is its own encoding: the chunker need not encode the text again.
        source = data if decoded.encoding == "utf-8" and not data.startswith(codecs.BOM_UTF8) else None
        chunks = chunk_file(entry.blob_sha, decoded.text, entry.language, self.config, source)
        return BlobChunks(blob_sha=entry.blob_sha, language=entry.language, encoding=decoded.encoding, chunks=chunks)

    def _embed(self, items: list[BlobChunks]) -> None:
        if not self.embeddings.enabled or self.store.server_vectorizes:
            return
        kinds = self.config.embed_kinds
        chunks = [c for item in items for c in item.chunks if kinds is None or c.kind in kinds]
        vectors = iter(self.embeddings.embed_chunks(chunks) or [])
        for item in items:
            item.vectors = [next(vectors) if kinds is None or c.kind in kinds else None for c in item.chunks]


def _symbol_count(item: BlobChunks) -> int:
    """What ``IndexStore.blob_symbols`` would give for this blob, counted: the parts of a symbol share its key."""
    return len({c.symbol_key for c in item.chunks if c.kind != "file"})
