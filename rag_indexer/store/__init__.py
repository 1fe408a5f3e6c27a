"""Index stores: one interface (base.IndexStore), an embedded default and Weaviate."""

from __future__ import annotations

DATABASE_FILE = "index.sqlite"  # the embedded store's database, in its directory

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:  # not at run time: ``mendflow grep``'s read-only path imports this package without pydantic
    from rag_indexer.config import IndexerConfig
    from rag_indexer.store.base import IndexStore


def make_store(config: IndexerConfig) -> IndexStore:
    """The configured backend; each module is imported only when chosen (weaviate-client is heavy)."""
    if config.backend == "weaviate":
        from rag_indexer.store.weaviate import WeaviateStore

        return WeaviateStore(config)
    from rag_indexer.store.embedded import EmbeddedStore

    return EmbeddedStore(config.index_dir, max_df_ratio=config.bm25_max_df_ratio)
