"""One index run: commit → tree listing → parse and embed only unknown blobs → store → swap the mapping.

Order matters for crash safety: blobs are written (and marked indexed by the store only once it confirmed
them) before the (repo, ref) mapping is replaced. An interrupted run leaves the old mapping in place plus some
finished blobs; the next run skips those and completes the rest.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from rag_indexer.config import IndexerConfig
from rag_indexer.cpus import usable_cpus
from rag_indexer.embeddings import EmbeddingService
from rag_indexer.helpers import HelperPool
from rag_indexer.models import ChangeCounts, IndexReport, RefFile, RefState
from rag_indexer.reader import TreeEntry, TreeReader, open_repo, repo_key, resolve_commit
from rag_indexer.sizes import BlobSizes
from rag_indexer.store.base import IndexStore
from rag_indexer.writer import BINARY, BlobWriter, StoredBatch


def _batches(items: list[TreeEntry], size: int) -> list[list[TreeEntry]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class Indexer:
    def __init__(self, store: IndexStore, embeddings: EmbeddingService, config: IndexerConfig) -> None:
        self.store = store
        self.embeddings = embeddings
        self.config = config

    def index(self, repo_path: str | Path, ref: str = "HEAD", repo_id: str | None = None) -> IndexReport:
        started = time.perf_counter()
        repo = open_repo(repo_path)
        key = repo_id or repo_key(repo)
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
        with BlobSizes(self.config.index_dir / "blob_sizes.sqlite") as sizes:
            listing = reader.listing(commit, sizes)
        report.skipped = dict(listing.skipped)
        known = self.store.indexed_blobs({e.blob_sha for e in listing.entries})
        todo: dict[str, TreeEntry] = {}
        for entry in listing.entries:
            if entry.blob_sha not in known:
                todo.setdefault(entry.blob_sha, entry)
        report.blobs_reused = len({e.blob_sha for e in listing.entries} - set(todo))
        languages = dict(known)
        symbol_counts: dict[str, int] = {}  # of the blobs written now
        writer = BlobWriter(reader, self.store, self.embeddings, self.config)
        for batch in self._write_all(writer, list(todo.values())):
            report.texts_embedded += batch.texts_embedded
            for blob in batch.blobs:
                languages[blob.blob_sha] = blob.language
                symbol_counts[blob.blob_sha] = blob.symbols
                report.chunks_written += blob.chunks
        report.blobs_parsed = sum(1 for sha in todo if languages.get(sha) != BINARY)

        files = [
            RefFile(path=e.path, blob_sha=e.blob_sha, language=languages[e.blob_sha])
            for e in listing.entries
            if languages.get(e.blob_sha) != BINARY
        ]
        binaries = len(listing.entries) - len(files)
        if binaries:
            report.skipped[BINARY] = report.skipped.get(BINARY, 0) + binaries
        old_files = self.store.ref_files(key, ref) if previous else {}
        self._count_changes(report, old_files, {f.path: f for f in files}, symbol_counts)
        self.store.set_ref(self._state(key, ref, listing.commit, listing.tree, len(files)), files)
        report.seconds = time.perf_counter() - started
        return report

    @staticmethod
    def _state(repo: str, ref: str, commit: str, tree: str, files: int) -> RefState:
        return RefState(repo=repo, ref=ref, commit=commit, tree=tree, indexed_at=datetime.now(UTC), files=files)

    def _processes(self, blobs: int) -> int:
        if blobs < self.config.helper_min_blobs:
            return 1  # incremental runs: a helper's start-up would cost more than it saves
        return self.config.processes or min(4, usable_cpus())

    def _write_all(self, writer: BlobWriter, entries: list[TreeEntry]) -> Iterator[StoredBatch]:
        """Write every entry's blob, batch by batch; with many blobs, helper processes take batches too."""
        batches = _batches(entries, self.config.write_batch_blobs)
        helpers = min(self._processes(len(entries)), len(batches)) - 1
        if helpers <= 0:
            for batch in batches:
                yield writer.write(batch)
            return
        with HelperPool(writer.reader.repo.path, self.config, helpers) as pool:
            yield from pool.share(batches, writer.write)

    def _count_changes(
        self, report: IndexReport, old: dict[str, RefFile], new: dict[str, RefFile], written: dict[str, int]
    ) -> None:
        """File and symbol changes between two mappings. ``written``: symbol counts of the blobs this run wrote.

        A path new to the ref adds all its blob's symbols; when this run wrote that blob its count is known, so
        the store is asked only for the blobs a diff needs (a cold index asks for none).
        """
        changed = [
            (old.get(path), new.get(path))
            for path in old.keys() | new.keys()
            if path not in old or path not in new or old[path].blob_sha != new[path].blob_sha
        ]

        def counted(before: RefFile | None, after: RefFile | None) -> int | None:
            """The symbols a path new to the ref adds, when this run wrote its blob (else the store says)."""
            return written.get(after.blob_sha) if before is None and after is not None else None

        needed = {
            f.blob_sha for before, after in changed if counted(before, after) is None for f in (before, after) if f
        }
        symbols = self.store.blob_symbols(needed) if needed else {}
        files, syms = ChangeCounts(), ChangeCounts()
        for before, after in changed:
            if before is None:
                files.added += 1
            elif after is None:
                files.removed += 1
            else:
                files.changed += 1
            if (count := counted(before, after)) is not None:
                syms.added += count
                continue
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
