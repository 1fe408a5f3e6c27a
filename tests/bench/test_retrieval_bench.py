"""The retrieval bench's baseline: identifier-split tokens and rank_bm25's Okapi formula."""

from __future__ import annotations

import math

import pytest

from bench import retrieval_bench


def test_tokens_split_snake_and_camel_case_and_keep_the_name() -> None:
    words = ["super", "len", "super_len", "tens", "add", "tensadd", "42"]
    assert retrieval_bench.tokens("super_len(TensAdd) 42") == words


def test_okapi_scores_a_rare_term_as_rank_bm25_does() -> None:
    model = retrieval_bench.OkapiBM25([["a", "b"], ["b", "c"], ["b", "d"]])
    idf = math.log(3 - 1 + 0.5) - math.log(1 + 0.5)  # tf 1, document of average length: tf part is 1
    assert model.scores(["a"]) == {0: pytest.approx(idf)}


def test_okapi_floors_a_negative_idf_at_epsilon_times_the_average() -> None:
    model = retrieval_bench.OkapiBM25([["a", "b"], ["b", "c"], ["b", "d"]])
    rare, common = math.log(2.5 / 1.5), math.log(0.5 / 3.5)
    assert model.idf["b"] == pytest.approx(0.25 * (3 * rare + common) / 4)
