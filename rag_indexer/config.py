"""The indexer's own knobs, built from ``Settings.index`` (and ``Settings.llm`` for embeddings).

Fields that ``IndexSettings`` does not carry yet have defaults here; they are listed in the report so the owner
can promote them into ``mendflow/settings.py`` (only that module reads the environment).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # only read here; importing it costs a query ~0.1 s (see mendflow/quick_settings.py)
    from mendflow.settings import Settings

# Paths linguist (GitHub) treats as vendored or generated, the common subset. A .gitattributes entry
# ``linguist-vendored=false`` / ``linguist-generated=false`` brings a path back.
DEFAULT_VENDORED_GLOBS: tuple[str, ...] = (
    "**/node_modules/**",
    "**/bower_components/**",
    "**/vendor/**",
    "**/third_party/**",
    "**/third-party/**",
    "**/.venv/**",
    "**/venv/**",
    "**/site-packages/**",
    "**/.yarn/**",
    "**/*.min.js",
    "**/*.min.css",
)
DEFAULT_GENERATED_GLOBS: tuple[str, ...] = (
    "**/*_pb2.py",
    "**/*_pb2_grpc.py",
    "**/*.pb.go",
    "**/*.generated.*",
    "**/__generated__/**",
    "**/package-lock.json",
    "**/yarn.lock",
    "**/pnpm-lock.yaml",
    "**/Cargo.lock",
    "**/go.sum",
    "**/poetry.lock",
    "**/uv.lock",
    "**/*.map",
)


class IndexerConfig(BaseModel):
    """Everything the indexer, the stores and the embedders need; one object passed down."""

    backend: Literal["embedded", "weaviate"] = "embedded"
    index_dir: Path = Field(description="Embedded store directory (and the embedding cache for any backend).")
    weaviate_url: str = "http://127.0.0.1:8080"
    weaviate_grpc_port: int = 50051
    weaviate_api_key: str | None = None
    collection_prefix: str = Field(default="Mendflow", description="Weaviate collection names start with this.")
    embeddings: Literal["none", "openai", "local", "wordllama", "weaviate"] = "none"
    embedding_model: str = "text-embedding-3-small"
    local_embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_max_retries: int = 4
    llm_timeout_sec: float = 120.0
    embed_kinds: list[str] | None = Field(
        default=None, description="Chunk kinds that get vectors (e.g. ['file'] to bound cost); None = all."
    )
    embed_batch_size: int = Field(default=64, description="Texts per embeddings request.")
    embed_max_chars: int = Field(
        6000, description="Characters of a chunk's text given to the embedder (the stored text is whole)."
    )
    max_file_bytes: int = 1_000_000
    max_symbol_lines: int = Field(default=400, description="Longer symbols are split into parts of at most this size.")
    max_chunk_chars: int = Field(default=40_000, description="Hard cap per chunk part in characters (long lines).")
    vendored_globs: tuple[str, ...] = DEFAULT_VENDORED_GLOBS
    generated_globs: tuple[str, ...] = DEFAULT_GENERATED_GLOBS
    write_batch_blobs: int = Field(default=200, description="Blobs per store transaction / Weaviate batch.")
    store_retries: int = Field(default=6, description="Attempts per batch when the store is unreachable.")
    store_retry_delay_sec: float = Field(default=1.0, description="First back-off between attempts; doubles.")
    bm25_max_df_ratio: float = Field(
        default=0.1, description="Embedded store: query terms in more than this share of chunks are dropped."
    )
    default_alpha: float = Field(default=0.5, description="Hybrid weight: 0 = BM25 only, 1 = vectors only.")
    processes: int = Field(
        default=0,
        ge=0,
        description="Processes indexing a cold index's blobs, this one included: 0 = one per usable CPU (at most "
        "4; a cgroup CPU quota counts), 1 = this process only. Helpers run as `python -m rag_indexer.helpers`, "
        "each writing to the store itself.",
    )
    helper_min_blobs: int = Field(
        default=300, description="Below this many blobs to parse, use no helpers (one takes ~0.5 s to start)."
    )

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> IndexerConfig:
        idx, llm = settings.index, settings.llm
        values: dict[str, object] = {
            "backend": idx.backend,
            "index_dir": settings.state_dir / "index",
            "weaviate_url": idx.weaviate_url,
            "weaviate_grpc_port": idx.weaviate_grpc_port,
            "embeddings": idx.embeddings,
            "embedding_model": llm.embedding_model,
            "llm_base_url": llm.base_url,
            "llm_api_key": llm.api_key.get_secret_value() if llm.api_key else None,
            "llm_max_retries": llm.max_retries,
            "llm_timeout_sec": llm.timeout_sec,
            "max_file_bytes": idx.max_file_bytes,
            "max_symbol_lines": idx.max_symbol_lines,
            "processes": idx.processes,
        }
        values.update(overrides)
        return cls.model_validate(values)
