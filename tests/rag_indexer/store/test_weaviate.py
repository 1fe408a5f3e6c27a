"""Weaviate-only behaviour: failed objects are detected, an outage mid-batch is survived without duplicates."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mendflow.errors import CodeIndexError
from rag_indexer.api import CodeIndex
from tests.rag_indexer.conftest import IndexFactory

pytestmark = pytest.mark.slow


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:  # overrides the parametrized one: Weaviate only
    import uuid

    try:
        server = request.getfixturevalue("weaviate_server")
    except pytest.FixtureLookupError:
        pytest.skip("no weaviate_server fixture (tests/fixtures/weaviate.py) in this checkout")
    return {
        "backend": "weaviate", "weaviate_url": server.url, "weaviate_grpc_port": server.grpc_port,
        "collection_prefix": f"T{uuid.uuid4().hex[:10]}", "store_retry_delay_sec": 0.5, "_server": server,
    }  # fmt: skip


def counts(index: CodeIndex) -> tuple[int, int, int]:
    store: Any = index.store
    return tuple(  # type: ignore[return-value]
        c.aggregate.over_all(total_count=True).total_count for c in (store.files, store.symbols_c, store.blobs)
    )


def test_objects_weaviate_refuses_are_reported_not_ignored(code_index: CodeIndex) -> None:
    from weaviate.classes.data import DataObject

    store: Any = code_index.store
    good = DataObject(properties={"blob_sha": "a" * 40, "start_line": 1})
    bad = DataObject(properties={"blob_sha": "b" * 40, "start_line": "not a number"})
    with pytest.raises(CodeIndexError, match=r"refused 1 objects.*start_line"):
        store._insert(store.files, [good, bad])
    with pytest.raises(CodeIndexError, match="refused 1 objects"):  # all failed: the client raises instead
        store._insert(store.files, [bad])


def test_outage_mid_batch_is_retried_without_duplicates_or_loss(
    make_index: IndexFactory, backend: dict[str, Any], sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = backend["_server"]
    index = make_index(write_batch_blobs=2, store_retries=10)
    store: Any = index.store
    original = store._insert
    calls = {"n": 0}
    restarted = threading.Event()

    def crash_between_files_and_symbols(collection: Any, objects: list[Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # first batch: files sent, symbols not yet
            server.stop(graceful=False)
            threading.Thread(target=lambda: (time.sleep(2), server.start(), restarted.set()), daemon=True).start()
        original(collection, objects)

    monkeypatch.setattr(store, "_insert", crash_between_files_and_symbols)
    report = index.index(sample_repo)
    assert restarted.is_set()
    assert report.files.added == 4 and report.symbols.added == 8
    assert counts(index) == (4, 8, 4)  # one object per chunk and per blob: nothing twice, nothing missing
    assert [h.symbol for h in index.definitions_of("ServeInvoice")] == ["Handler.ServeInvoice"]


def test_index_cut_off_by_an_outage_is_completed_by_the_next_run(
    make_index: IndexFactory, backend: dict[str, Any], sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = backend["_server"]
    index = make_index(write_batch_blobs=1, store_retries=2, store_retry_delay_sec=0.2)
    store: Any = index.store
    original = store.write_blobs
    calls = {"n": 0}

    def outage_after_two_blobs(items: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            server.stop(graceful=False)
        original(items)

    monkeypatch.setattr(store, "write_blobs", outage_after_two_blobs)
    try:
        with pytest.raises(CodeIndexError, match="failed 2 times"):
            index.index(sample_repo)
    finally:
        server.start()
    monkeypatch.setattr(store, "write_blobs", original)
    report = index.index(sample_repo)
    assert report.blobs_parsed == 2 and report.blobs_reused == 2
    assert counts(index) == (4, 8, 4)
