"""One index run: commit → tree listing → parse and embed only unknown blobs → store → swap the mapping.

Order matters for crash safety: blobs are written (and marked indexed by the store only once it confirmed
them) before the (repo, ref) mapping is replaced. An interrupted run leaves the old mapping in place plus some
finished blobs; the next run skips those and completes the rest.
"""

from __future__ import annotations

import codecs
import multiprocessing
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from rag_indexer.chunker import chunk_file
from rag_indexer.config import IndexerConfig
from rag_indexer.embeddings import EmbeddingService
from rag_indexer.models import BlobChunks, ChangeCounts, IndexReport, RefFile, RefState
from rag_indexer.reader import TreeEntry, TreeReader, decode_blob, is_binary, open_repo, repo_key, resolve_commit
from rag_indexer.store.base import IndexStore

BINARY = "binary"


def _batches(items: list[TreeEntry], size: int) -> Iterator[list[TreeEntry]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Indexer:
    def __init__(self, store: IndexStore, embeddings: EmbeddingService, config: IndexerConfig) -> None:
        self.store = store
        self.embeddings = embeddings
        self.config = config

    def index(self, repo_path: str | Path, ref: str = "HEAD") -> IndexReport:
        started = time.perf_counter()
        repo = open_repo(repo_path)
        key = repo_key(repo)
        commit = resolve_commit(repo, ref)
        previous = self.store.get_ref(key, ref)
        report = IndexReport(repo=key, ref=ref, commit=str(commit.id))
        report.previous_commit = previous.commit if previous else None
        if previous and previous.tree == str(commit.tree.id):
            # Same tree: nothing to parse; at most the commit id moved (e.g. an amended message).
            if previous.commit != str(commit.id):
                files = list(self.store.ref_files(key, ref).values())
                self.store.set_ref(self._state(key, ref, str(commit.id), previous.tree, len(files)), files)
            report.noop = True
            report.seconds = time.perf_counter() - started
            return report

        reader = TreeReader(repo, self.config)
        listing = reader.listing(commit)
        report.skipped = dict(listing.skipped)
        known = self.store.indexed_blobs({e.blob_sha for e in listing.entries})
        todo: dict[str, TreeEntry] = {}
        for entry in listing.entries:
            if entry.blob_sha not in known:
                todo.setdefault(entry.blob_sha, entry)
        report.blobs_reused = len({e.blob_sha for e in listing.entries} - set(todo))
        languages = dict(known)
        for items in self._chunked(reader, list(todo.values())):
            self._embed(items)
            self.store.write_blobs(items)
            for item in items:
                languages[item.blob_sha] = item.language
                report.chunks_written += len(item.chunks)
        report.blobs_parsed = sum(1 for sha in todo if languages.get(sha) != BINARY)
        report.texts_embedded = self.embeddings.texts_embedded

        files = [
            RefFile(path=e.path, blob_sha=e.blob_sha, language=languages[e.blob_sha])
            for e in listing.entries
            if languages.get(e.blob_sha) != BINARY
        ]
        binaries = len(listing.entries) - len(files)
        if binaries:
            report.skipped[BINARY] = report.skipped.get(BINARY, 0) + binaries
        old_files = self.store.ref_files(key, ref) if previous else {}
        self._count_changes(report, old_files, {f.path: f for f in files})
        self.store.set_ref(self._state(key, ref, listing.commit, listing.tree, len(files)), files)
        report.seconds = time.perf_counter() - started
        return report

    @staticmethod
    def _state(repo: str, ref: str, commit: str, tree: str, files: int) -> RefState:
        return RefState(repo=repo, ref=ref, commit=commit, tree=tree, indexed_at=datetime.now(UTC), files=files)

    def _workers(self, blobs: int) -> int:
        if blobs < self.config.parse_pool_min_blobs:
            return 1  # incremental runs: a pool's start-up would cost more than it saves
        wanted = self.config.parse_workers or min(4, os.cpu_count() or 1)
        return max(1, wanted)

    def _chunked(self, reader: TreeReader, entries: list[TreeEntry]) -> Iterator[list[BlobChunks]]:
        """Batches of parsed blobs, in order; parsed in worker processes when there are many.

        Parsing is CPU-bound and tree-sitter holds the GIL, so a cold index spreads it over processes
        while this one embeds and writes.
        """
        workers = self._workers(len(entries))
        if workers == 1:
            for batch in _batches(entries, self.config.write_batch_blobs):
                yield [_blob_chunks(reader, entry, self.config) for entry in batch]
            return
        size = max(1, min(self.config.write_batch_blobs, len(entries) // (workers * 8) or 1))
        ctx = multiprocessing.get_context("spawn")  # fork is unsafe with open SQLite/gRPC handles
        with ctx.Pool(workers) as pool:
            jobs = [(reader.repo.path, batch, self.config.model_dump_json()) for batch in _batches(entries, size)]
            yield from pool.imap(_parse_job, jobs)

    def _embed(self, items: list[BlobChunks]) -> None:
        if not self.embeddings.enabled or self.store.server_vectorizes:
            return
        kinds = self.config.embed_kinds
        chunks = [c for item in items for c in item.chunks if kinds is None or c.kind in kinds]
        vectors = iter(self.embeddings.embed_chunks(chunks) or [])
        for item in items:
            item.vectors = [next(vectors) if kinds is None or c.kind in kinds else None for c in item.chunks]

    def _count_changes(self, report: IndexReport, old: dict[str, RefFile], new: dict[str, RefFile]) -> None:
        changed_blobs: set[str] = set()
        for path in old.keys() | new.keys():
            before, after = old.get(path), new.get(path)
            if before and after and before.blob_sha == after.blob_sha:
                continue
            changed_blobs.update(f.blob_sha for f in (before, after) if f)
        symbols = self.store.blob_symbols(changed_blobs)
        files, syms = ChangeCounts(), ChangeCounts()
        for path in old.keys() | new.keys():
            before, after = old.get(path), new.get(path)
            if before and after and before.blob_sha == after.blob_sha:
                continue
            if before is None:
                files.added += 1
            elif after is None:
                files.removed += 1
            else:
                files.changed += 1
            _diff_symbols(
                syms,
                symbols.get(before.blob_sha, {}) if before else {},
                symbols.get(after.blob_sha, {}) if after else {},
            )
        report.files, report.symbols = files, syms


def _diff_symbols(counts: ChangeCounts, before: dict[str, str], after: dict[str, str]) -> None:
    counts.added += len(after.keys() - before.keys())
    counts.removed += len(before.keys() - after.keys())
    counts.changed += sum(1 for k in before.keys() & after.keys() if before[k] != after[k])


def _blob_chunks(reader: TreeReader, entry: TreeEntry, config: IndexerConfig) -> BlobChunks:
    data = reader.read(entry.blob_sha)
    if is_binary(data):
        # Recorded (with no chunks) so the next run does not read it again.
        return BlobChunks(blob_sha=entry.blob_sha, language=BINARY, encoding="", chunks=[])
    decoded = decode_blob(data)
    # A UTF-8 blob without a BOM is its own encoding: the chunker need not encode the text again.
    source = data if decoded.encoding == "utf-8" and not data.startswith(codecs.BOM_UTF8) else None
    chunks = chunk_file(entry.blob_sha, decoded.text, entry.language, config, source)
    return BlobChunks(blob_sha=entry.blob_sha, language=entry.language, encoding=decoded.encoding, chunks=chunks)


_WORKER_READERS: dict[str, TreeReader] = {}


def _parse_job(job: tuple[str, list[TreeEntry], str]) -> list[BlobChunks]:
    """Worker side: open the repository once per process, then read, decode and chunk a batch."""
    git_dir, entries, config_json = job
    config = IndexerConfig.model_validate_json(config_json)
    if git_dir not in _WORKER_READERS:
        _WORKER_READERS[git_dir] = TreeReader(pygit2.Repository(git_dir), config)
    reader = _WORKER_READERS[git_dir]
    return [_blob_chunks(reader, entry, config) for entry in entries]
