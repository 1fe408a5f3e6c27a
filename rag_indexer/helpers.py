"""Helper processes that index batches of blobs beside the indexer's own process, on a cold index.

Why processes: tree-sitter's parse holds the GIL, so threads would not overlap. Why ``python -m`` children
rather than multiprocessing: a spawned multiprocessing child re-imports the caller's main module, which
breaks any caller without a ``__main__`` guard; these children import only this package. Each helper opens its
own store connection and writes its batches itself (the stores take concurrent writers), so chunks never
cross a pipe: jobs and replies are one JSON line each on the child's stdin and stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import IO, Any

import pygit2

from mendflow import errors
from mendflow.errors import CodeIndexError, MendflowError
from rag_indexer.config import IndexerConfig
from rag_indexer.embeddings import make_embeddings
from rag_indexer.reader import TreeEntry, TreeReader
from rag_indexer.store import make_store
from rag_indexer.writer import BlobWriter, StoredBatch, StoredBlob

Batch = list[TreeEntry]
_DONE = object()  # a driver thread's last word


class HelperPool:
    """``count`` helpers; ``share`` hands batches to them and to the caller's own writer, first come first served."""

    def __init__(self, git_dir: str, config: IndexerConfig, count: int) -> None:
        self._stop = threading.Event()
        self._procs: list[subprocess.Popen[str]] = []
        setup = json.dumps({"git_dir": git_dir, "config": config.model_dump(mode="json")})
        env = dict(os.environ)
        # The children must import this very package, wherever the parent found it: its own import path.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        # One helper runs per core already, so BLAS threads would only oversubscribe; and OpenBLAS starting its
        # pool when numpy is imported (for the gram signatures) costs each helper ~0.05 s of CPU.
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        for _ in range(count):
            proc = subprocess.Popen(
                [sys.executable, "-m", "rag_indexer.helpers"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            self._procs.append(proc)
            _send(proc, setup)  # the config carries credentials, so it goes by pipe, never by argv

    def __enter__(self) -> HelperPool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        for proc in self._procs:
            if proc.stdin:
                # A helper exits at the end of its input; one that died already has its error on record.
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.close()
        for proc in self._procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()

    def share(self, batches: list[Batch], write_here: Callable[[Batch], StoredBatch]) -> Iterator[StoredBatch]:
        """Each batch once stored, in the order batches finish; the first error stops the rest."""
        work: queue.SimpleQueue[Batch] = queue.SimpleQueue()
        for each in batches:
            work.put(each)
        results: queue.SimpleQueue[Any] = queue.SimpleQueue()
        drivers = [threading.Thread(target=self._drive, args=(p, work, results), daemon=True) for p in self._procs]
        for thread in drivers:
            thread.start()
        running = len(drivers)
        while running:
            batch = _take(work)
            if batch is not None:
                yield write_here(batch)
            # Wait for the helpers only once nothing is left for this process to do.
            for item in _drain(results, block=batch is None):
                if item is _DONE:
                    running -= 1
                elif isinstance(item, BaseException):
                    self._stop.set()
                    raise item
                else:
                    yield item

    def _drive(
        self, proc: subprocess.Popen[str], work: queue.SimpleQueue[Batch], results: queue.SimpleQueue[Any]
    ) -> None:
        try:
            while not self._stop.is_set():
                batch = _take(work)
                if batch is None:
                    break
                results.put(self._ask(proc, batch))
        except BaseException as exc:  # handed to the main thread, which raises it
            results.put(exc)
        finally:
            results.put(_DONE)

    def _ask(self, proc: subprocess.Popen[str], batch: Batch) -> StoredBatch:
        assert proc.stdout is not None
        try:
            _send(proc, json.dumps([[e.path, e.blob_sha, e.size, e.language] for e in batch]))
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = ""  # the helper is gone: reported below with its exit code
        if not line:
            raise CodeIndexError(
                f"an index helper process stopped unexpectedly (exit code {proc.wait()})",
                hint="its error is printed above; run the index again: finished batches are kept",
            )
        reply = json.loads(line)
        if "error" in reply:
            kind = getattr(errors, reply["kind"], CodeIndexError)
            raise kind(reply["error"], hint=reply["hint"])
        return StoredBatch([StoredBlob(*blob) for blob in reply["blobs"]], reply["texts_embedded"])


def _send(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


def _take(work: queue.SimpleQueue[Batch]) -> Batch | None:
    try:
        return work.get_nowait()
    except queue.Empty:
        return None


def _drain(results: queue.SimpleQueue[Any], block: bool) -> Iterator[Any]:
    if block:
        yield results.get()
    while True:
        try:
            yield results.get_nowait()
        except queue.Empty:
            return


def serve(jobs: IO[str], replies: IO[str]) -> None:
    """The helper's side: a setup line, then one batch per line, one reply per batch, until end of input."""
    setup = json.loads(jobs.readline())
    config = IndexerConfig.model_validate(setup["config"])
    store, embeddings = make_store(config), make_embeddings(config)
    writer = BlobWriter(TreeReader(pygit2.Repository(setup["git_dir"]), config), store, embeddings, config)
    try:
        for line in jobs:
            try:
                stored = writer.write([TreeEntry(*fields) for fields in json.loads(line)])
            except MendflowError as exc:
                _reply(replies, {"error": exc.args[0], "hint": exc.hint, "kind": type(exc).__name__})
                return
            blobs = [[b.blob_sha, b.language, b.chunks, b.symbols] for b in stored.blobs]
            _reply(replies, {"blobs": blobs, "texts_embedded": stored.texts_embedded})
    finally:
        store.close()
        embeddings.close()


def _reply(replies: IO[str], message: dict[str, Any]) -> None:
    replies.write(json.dumps(message) + "\n")
    replies.flush()


if __name__ == "__main__":
    # Replies get their own copy of stdout; anything a library prints goes to stderr instead.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    serve(sys.stdin, replies)
