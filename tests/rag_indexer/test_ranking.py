"""File-level ranking of chunk hits: aggregation, path words, test files by convention and by intent."""

from __future__ import annotations

import pytest

from rag_indexer import ranking
from rag_indexer.models import Hit


def hit(path: str, score: float, symbol: str = "f") -> Hit:
    return Hit(
        id=f"{path}:{symbol}", repo="acme/app", ref="HEAD", path=path, symbol=symbol, kind="function",
        start_line=1, end_line=2, blob_sha="0" * 40, language="python", text="", score=score,
    )  # fmt: skip


@pytest.mark.parametrize(
    "path",
    ["tests/test_io.py", "pkg/tests/helpers.py", "conftest.py", "cmd/root_test.go", "src/app.spec.ts",
     "src/__tests__/x.js", "lib/util.test.js", "src/test/java/FooTest.java"],
)  # fmt: skip
def test_test_files_are_recognised_by_convention(path: str) -> None:
    assert ranking.is_test_path(path)


@pytest.mark.parametrize("path", ["src/requests/models.py", "command.go", "lib/adapters/http.js", "src/latest.ts"])
def test_source_files_are_not_tests(path: str) -> None:
    assert not ranking.is_test_path(path)


def test_path_words_split_folders_snake_and_camel_case() -> None:
    assert ranking.path_words("src/helper/zsh_completions/parseHTTPHeader.ts") == {
        "src", "helper", "zsh", "completions", "parse", "http", "header", "ts",
    }  # fmt: skip


def test_a_file_with_a_second_matching_chunk_ranks_above_one_with_a_single_chunk() -> None:
    hits = [hit("a.py", 10.0), hit("b.py", 10.0, "g"), hit("b.py", 6.0, "h")]
    assert [h.path for h in ranking.rank_files(hits, "x", 2)] == ["b.py", "a.py"]


def test_one_file_is_returned_once_with_its_best_chunk_and_the_file_score() -> None:
    ranked = ranking.rank_files([hit("a.py", 4.0, "weak"), hit("a.py", 8.0, "strong")], "x", 5)
    assert [(h.path, h.symbol, h.score) for h in ranked] == [("a.py", "weak", 8.0 + 4.0 * ranking.DECAY)]


def test_a_query_word_in_the_path_lifts_the_file() -> None:
    hits = [hit("core/misc.go", 10.0), hit("zsh_completions.go", 9.5)]
    assert [h.path for h in ranking.rank_files(hits, "fix completion", 2)] == ["zsh_completions.go", "core/misc.go"]


def test_a_file_defining_a_name_the_query_spells_as_code_ranks_first() -> None:
    hits = [hit("pkg/models.py", 10.0, "Request.prepare"), hit("pkg/utils.py", 9.0, "super_len")]
    ranked = ranking.rank_files(hits, "Make super_len count bytes", 2)
    assert [h.path for h in ranked] == ["pkg/utils.py", "pkg/models.py"]


def test_code_names_are_snake_or_camel_case_words() -> None:
    assert ranking.code_names("Fix TensAdd and super_len, not Tensor or HTTP or add") == {"tensadd", "super_len"}


def test_short_words_match_path_words_only_exactly() -> None:
    assert ranking.path_scores(["io"], ["pkg/iosys.py", "pkg/io.py"]).keys() == {"pkg/io.py"}


def test_test_files_rank_below_sources_unless_the_query_asks_for_tests() -> None:
    hits = [hit("tests/test_parse.py", 10.0), hit("pkg/parse.py", 8.0)]
    assert [h.path for h in ranking.rank_files(hits, "parse", 2)] == ["pkg/parse.py", "tests/test_parse.py"]
    assert [h.path for h in ranking.rank_files(hits, "parse tests", 2)] == ["tests/test_parse.py", "pkg/parse.py"]


def test_of_two_equal_matches_the_longer_file_ranks_first() -> None:
    lines = {("acme/app", "HEAD", "short.py"): 20, ("acme/app", "HEAD", "long.py"): 2000}
    hits = [hit("short.py", 10.0), hit("long.py", 10.0)]
    assert [h.path for h in ranking.rank_files(hits, "x", 2, lines)] == ["long.py", "short.py"]


def test_the_longest_files_fill_in_skipping_those_ranked_and_tests() -> None:
    lines = {("r", "HEAD", p): n for p, n in [("a.py", 10), ("b.py", 900), ("tests/test_b.py", 5000), ("c.py", 300)]}
    assert ranking.longest_files(lines, "fix for #160", [("r", "HEAD", "b.py")], 5) == [
        ("r", "HEAD", "c.py"),
        ("r", "HEAD", "a.py"),
    ]


def test_file_mentions_are_the_file_names_and_paths_a_query_spells() -> None:
    assert ranking.file_mentions("Fix doc/man_docs.go and ./README.md (#12)") == {"doc/man_docs.go", "readme.md"}


@pytest.mark.parametrize(
    ("path", "mention", "named"),
    [("cobra/doc/util.go", "doc/util.go", True), ("cobra/doc/util.go", "util.go", True),
     ("cobra/doc/myutil.go", "util.go", False), ("sympy/printing/__init__.py", "sympy/__init__.py", False)],
)  # fmt: skip
def test_a_mention_names_a_file_by_its_whole_path_or_its_last_components(path: str, mention: str, named: bool) -> None:
    assert ranking.is_named(path, {mention}) is named


def test_a_file_the_query_names_ranks_above_files_that_score_higher() -> None:
    hits = [hit("pkg/models.py", 10.0, "cleanup"), hit("pkg/help.py", 1.0), hit("pkg/utils.py", 5.0)]
    ranked = ranking.rank_files(hits, "cleanup help.py", 3)
    assert [h.path for h in ranked] == ["pkg/help.py", "pkg/models.py", "pkg/utils.py"]
    assert ranked[0].score > ranked[1].score


def test_named_files_outside_the_hits_are_listed_longest_first() -> None:
    lines = {("r", "HEAD", p): n for p, n in [("a/__init__.py", 10), ("b/__init__.py", 90), ("c/__init__.py", 50)]}
    assert ranking.named_files(lines, "fix __init__.py", [("r", "HEAD", "b/__init__.py")], 5) == [
        ("r", "HEAD", "c/__init__.py"),
        ("r", "HEAD", "a/__init__.py"),
    ]


def test_no_file_joins_the_pool_when_the_query_names_none() -> None:
    assert ranking.named_files({("r", "HEAD", "help.py"): 10}, "cleanup help", [], 5) == []
