"""Every index store behind one fixture, ``index_store``, so ``test_common.py`` runs once per backend: the
embedded SQLite store and Weaviate (a real server, ``tests/fixtures/weaviate.py``). A new backend is a new
``*_store`` function and one more entry in ``STORES``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rag_indexer.config import IndexerConfig
from rag_indexer.store import make_store
from rag_indexer.store.base import IndexStore
from rag_indexer.store.weaviate import WeaviateStore

Opened = tuple[IndexStore, Callable[[], None]]  # the store, and what removes its data


def embedded_store(_request: pytest.FixtureRequest, tmp_path: Path) -> Opened:
    return make_store(IndexerConfig(index_dir=tmp_path / "index")), lambda: None  # tmp_path goes by itself


def weaviate_store(request: pytest.FixtureRequest, tmp_path: Path) -> Opened:
    server = request.getfixturevalue("weaviate_server")
    config = IndexerConfig.model_validate(
        {
            "index_dir": tmp_path / "index",
            "backend": "weaviate",
            "weaviate_url": server.url,
            "weaviate_grpc_port": server.grpc_port,
            "collection_prefix": f"T{uuid.uuid4().hex[:10]}",  # a test's own collections
            "store_retry_delay_sec": 0.5,
        }
    )
    store = WeaviateStore(config)
    return store, store.drop


STORES: dict[str, Callable[[pytest.FixtureRequest, Path], Opened]] = {
    "embedded": embedded_store,
    "weaviate": weaviate_store,
}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.slow] if name != "embedded" else []) for name in STORES])
def index_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    store, remove = STORES[request.param](request, tmp_path)
    yield store
    remove()
    store.close()
