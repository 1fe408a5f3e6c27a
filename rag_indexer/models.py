"""Data the indexer passes around: chunks going in, hits coming out, the per-ref mapping and run reports."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

# Fixed namespace so every machine derives the same object id for the same (blob, symbol path).
CHUNK_NAMESPACE = uuid.UUID("5d0c3f0e-9a53-4c57-9f0e-6d1f2b7c8a11")

ChunkKind = Literal["file", "function", "method", "class", "interface", "type", "module"]


_NAMESPACE_SHA1 = hashlib.sha1(CHUNK_NAMESPACE.bytes, usedforsecurity=False)


def chunk_id(blob_sha: str, symbol_path: str) -> str:
    """Content-addressed id: the same blob yields the same ids on any branch, after any rebase.

    Exactly ``uuid.uuid5(CHUNK_NAMESPACE, ...)``, computed without building UUID objects (40k per cold index).
    """
    digest = _NAMESPACE_SHA1.copy()
    digest.update(f"{blob_sha}\x00{symbol_path}".encode())
    raw = bytearray(digest.digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    x = raw.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# Chunk and BlobChunks are slotted dataclasses, not pydantic models: a cold index builds ~40k of them from
# values the chunker has just typed (never from outside input), and parse workers pickle them back; a
# pydantic model cost several times more to build and to pickle here.
@dataclass(slots=True, kw_only=True)
class Chunk:
    """One retrievable unit of one blob: the whole file (symbol '') or one symbol (or one part of it).

    ``symbol`` is the qualified name ('Calculator.divide'; '' for the file chunk); ``symbol_key`` the same made
    unique in its file ('f~2' for a repeat); ``name`` its last component, for exact lookup; ``part`` the
    1-based part number when an oversize symbol was split (0 when whole) and ``parts`` their count.
    """

    id: str
    blob_sha: str
    kind: ChunkKind
    start_line: int
    end_line: int
    language: str
    text: str
    content_hash: str
    symbol: str = ""
    symbol_key: str = ""
    name: str = ""
    signature: str = ""
    docstring: str = ""
    part: int = 0
    parts: int = 0


@dataclass(slots=True, kw_only=True)
class BlobChunks:
    """Everything stored for one blob; written together, then the blob is marked indexed.

    ``vectors`` is aligned with ``chunks`` (None for a chunk whose kind is not embedded).
    """

    blob_sha: str
    language: str
    encoding: str
    chunks: list[Chunk]
    vectors: list[list[float] | None] | None = None


class RefFile(BaseModel):
    path: str
    blob_sha: str
    language: str


class RefState(BaseModel):
    """What (repo, ref) pointed at when it was last indexed completely."""

    repo: str
    ref: str
    commit: str
    tree: str
    indexed_at: datetime
    files: int = 0


class Hit(BaseModel):
    """A search, lookup or grep result, as the planner and builder consume it."""

    id: str
    repo: str
    ref: str
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    score: float = 0.0
    blob_sha: str
    language: str
    signature: str = ""
    docstring: str = ""
    text: str

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


class Snippet(BaseModel):
    repo: str
    ref: str
    path: str
    start_line: int
    end_line: int
    blob_sha: str
    text: str


class Filters(BaseModel):
    """Query scope; None means 'any'. ``path`` is a prefix or a glob (with * or ?)."""

    repo: str | None = None
    ref: str | None = None
    path: str | None = None
    language: str | None = None
    kind: str | None = None


class ChangeCounts(BaseModel):
    added: int = 0
    changed: int = 0
    removed: int = 0


class IndexReport(BaseModel):
    """The outcome of one index run for one (repo, ref)."""

    repo: str
    ref: str
    commit: str
    previous_commit: str | None = None
    noop: bool = False
    files: ChangeCounts = Field(default_factory=ChangeCounts)
    symbols: ChangeCounts = Field(default_factory=ChangeCounts)
    blobs_parsed: int = 0
    blobs_reused: int = 0
    chunks_written: int = 0
    texts_embedded: int = 0
    skipped: dict[str, int] = Field(default_factory=dict, description="reason → number of paths skipped")
    seconds: float = 0.0

    def to_markdown(self) -> str:
        rows = [
            "| | added | changed | removed |",
            "|---|---:|---:|---:|",
            f"| files | {self.files.added} | {self.files.changed} | {self.files.removed} |",
            f"| symbols | {self.symbols.added} | {self.symbols.changed} | {self.symbols.removed} |",
        ]
        skipped = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items())) or "none"
        head = f"### Code index `{self.repo}` @ `{self.ref}`\n\nIndexed commit `{self.commit}`"
        if self.previous_commit and self.previous_commit != self.commit:
            head += f" (was `{self.previous_commit}`)"
        tail = (
            f"\n\nBlobs parsed {self.blobs_parsed}, reused {self.blobs_reused}; chunks written "
            f"{self.chunks_written}; texts embedded {self.texts_embedded}; skipped: {skipped}; "
            f"{self.seconds:.2f} s{' (no-op)' if self.noop else ''}."
        )
        return head + "\n\n" + "\n".join(rows) + tail
