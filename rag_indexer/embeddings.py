"""Pluggable embeddings, batched and cached by content hash so an unchanged text is never embedded twice.

Providers: ``none`` (BM25 + symbols only), ``openai`` (any OpenAI-compatible endpoint, from Settings.llm),
``local`` (sentence-transformers, an optional extra imported lazily), ``wordllama`` (WordLlama's static
256-dimension token vectors, an optional extra whose wheel carries its weights: offline, no torch) and
``weaviate`` (the server vectorizes; only valid with the Weaviate backend, so nothing happens client-side).
"""

from __future__ import annotations

import array
import hashlib
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mendflow.errors import ConfigError, LLMError
from rag_indexer.config import IndexerConfig
from rag_indexer.models import Chunk


def embedding_input(chunk: Chunk, max_chars: int) -> str:
    """What the embedder sees for a chunk: kind, name, signature and docstring first, then the text.

    The stored chunk keeps its whole text; only this representation is capped, because embedding models
    accept a bounded input.
    """
    head = " ".join(p for p in (chunk.kind, chunk.symbol, chunk.signature) if p)
    parts = [head, chunk.docstring, chunk.text] if chunk.kind != "file" else [chunk.text]
    return "\n".join(p for p in parts if p)[:max_chars]


class Embedder(ABC):
    """Turns texts into vectors. ``model_key`` names the model so cached vectors never mix models."""

    model_key: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class OpenAIEmbedder(Embedder):
    def __init__(self, config: IndexerConfig) -> None:
        if not config.llm_base_url and not config.llm_api_key:
            raise ConfigError(
                "embeddings=openai needs an endpoint",
                hint="set MENDFLOW_LLM__BASE_URL and/or MENDFLOW_LLM__API_KEY, or MENDFLOW_INDEX__EMBEDDINGS=none",
            )
        import openai

        self._openai = openai
        self.client = openai.OpenAI(
            base_url=config.llm_base_url,
            api_key=config.llm_api_key or "not-needed",
            max_retries=config.llm_max_retries,
            timeout=config.llm_timeout_sec,
        )
        self.model = config.embedding_model
        self.model_key = f"openai:{config.llm_base_url or 'default'}:{self.model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            resp = self.client.embeddings.create(model=self.model, input=list(texts))
        except self._openai.OpenAIError as exc:
            raise LLMError(
                f"embeddings request failed: {exc}", hint="check MENDFLOW_LLM__BASE_URL / API key / model"
            ) from exc
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise LLMError(f"embeddings endpoint returned {len(data)} vectors for {len(texts)} inputs")
        return [list(d.embedding) for d in data]


class LocalEmbedder(Embedder):
    def __init__(self, config: IndexerConfig) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                "embeddings=local needs sentence-transformers",
                hint="install the extra: uv pip install 'mendflow[local-embeddings]'",
            ) from exc
        self.model: Any = SentenceTransformer(config.local_embedding_model, device="cpu")
        self.batch_size = config.embed_batch_size
        self.model_key = f"local:{config.local_embedding_model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True)
        return [list(map(float, v)) for v in vectors]


class WordLlamaEmbedder(Embedder):
    """WordLlama: a language model's token embeddings, averaged; ~1 ms per hundred chunks on one core."""

    model_key = "wordllama:l2_supercat:256"

    def __init__(self, config: IndexerConfig) -> None:
        try:
            import wordllama
        except ImportError as exc:
            raise ConfigError(
                "embeddings=wordllama needs wordllama", hint="install the extra: uv pip install 'mendflow[wordllama]'"
            ) from exc
        # 0.4's loader looks for its bundled tokenizer under tokenizer/, the wheel ships tokenizers/: pointing its
        # cache at the package finds both files there, and never downloads.
        bundled = Path(wordllama.__file__).parent
        self.model: Any = wordllama.WordLlama.load(cache_dir=bundled, disable_download=True)
        self.batch_size = config.embed_batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # Not normalised here: a text of no known token has a zero vector, which norm=True turns into NaNs;
        # the stores normalise with a guard.
        import numpy as np  # wordllama's own dependency: imported with it, never on a query without embeddings

        vectors = self.model.embed(list(texts), norm=False, batch_size=self.batch_size)
        return np.asarray(vectors, dtype=np.float32).tolist()


class EmbeddingCache:
    """(model, sha256(text)) → float32 vector, in its own SQLite file beside the index (any backend)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vec BLOB, PRIMARY KEY (model, hash))"
        )
        self.db.commit()

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        with self._lock:
            for i in range(0, len(hashes), 500):
                batch = list(hashes[i : i + 500])
                marks = ",".join("?" * len(batch))
                rows = self.db.execute(
                    f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})", [model, *batch]
                )
                for h, blob in rows:
                    found[h] = array.array("f", blob).tolist()  # float32
        return found

    def put_many(self, model: str, items: dict[str, list[float]]) -> None:
        with self._lock:
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(model, h, array.array("f", v).tobytes()) for h, v in items.items()],
            )
            self.db.commit()

    def close(self) -> None:
        self.db.close()


class EmbeddingService:
    """Batches and caches calls to one embedder; counts texts actually sent (for reports and tests)."""

    def __init__(self, embedder: Embedder | None, cache: EmbeddingCache | None, config: IndexerConfig) -> None:
        self.embedder = embedder
        self.cache = cache
        self.config = config
        self.texts_embedded = 0

    @property
    def enabled(self) -> bool:
        return self.embedder is not None

    def embed_chunks(self, chunks: Sequence[Chunk]) -> list[list[float]] | None:
        if self.embedder is None:
            return None
        return self.embed_texts([embedding_input(c, self.config.embed_max_chars) for c in chunks])

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        assert self.embedder is not None
        hashes = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        known = self.cache.get_many(self.embedder.model_key, hashes) if self.cache else {}
        missing: dict[str, str] = {h: t for h, t in zip(hashes, texts, strict=True) if h not in known}
        todo = list(missing.items())
        for i in range(0, len(todo), self.config.embed_batch_size):
            batch = todo[i : i + self.config.embed_batch_size]
            vectors = self.embedder.embed([t for _, t in batch])
            fresh = {h: v for (h, _), v in zip(batch, vectors, strict=True)}
            self.texts_embedded += len(batch)
            known.update(fresh)
            if self.cache:
                self.cache.put_many(self.embedder.model_key, fresh)
        return [known[h] for h in hashes]

    def embed_query(self, text: str) -> list[float] | None:
        if self.embedder is None:
            return None
        return self.embedder.embed([text[: self.config.embed_max_chars]])[0]

    def close(self) -> None:
        if self.cache:
            self.cache.close()


def make_embeddings(config: IndexerConfig) -> EmbeddingService:
    if config.embeddings == "none":
        return EmbeddingService(None, None, config)
    if config.embeddings == "weaviate":
        if config.backend != "weaviate":
            raise ConfigError(
                "embeddings=weaviate needs the Weaviate backend",
                hint="set MENDFLOW_INDEX__BACKEND=weaviate or choose embeddings none/openai/local",
            )
        return EmbeddingService(None, None, config)
    embedders: dict[str, Callable[[IndexerConfig], Embedder]] = {
        "openai": OpenAIEmbedder,
        "local": LocalEmbedder,
        "wordllama": WordLlamaEmbedder,
    }
    embedder = embedders[config.embeddings](config)
    return EmbeddingService(embedder, EmbeddingCache(config.index_dir / "embeddings.sqlite"), config)
