"""Query API, run against every store (the shared suite): search, filters, lookups, grep, snippets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mendflow.errors import CodeIndexError, InputError
from rag_indexer.api import CodeIndex


@pytest.fixture
def indexed(code_index: CodeIndex, sample_repo: Path) -> CodeIndex:
    code_index.index(sample_repo, "HEAD")
    return code_index


def test_search_ranks_the_matching_symbol_first(indexed: CodeIndex) -> None:
    hits = indexed.search("divide refusing zero", k=5)
    assert hits[0].path == "calc/core.py"
    assert hits[0].symbol == "Calculator.divide"


def test_search_hit_carries_location_kind_blob_and_text(indexed: CodeIndex, sample_repo: Path) -> None:
    hit = next(h for h in indexed.search("ServeInvoice", k=10) if h.symbol == "Handler.ServeInvoice")
    assert (hit.kind, hit.start_line, hit.end_line, hit.language) == ("method", 7, 9, "go")
    assert hit.text.startswith("func (h *Handler) ServeInvoice(id string) error {")
    assert hit.signature == "func (h *Handler) ServeInvoice(id string) error"
    assert hit.docstring == "ServeInvoice writes one invoice."
    assert len(hit.blob_sha) == 40 and hit.score > 0
    assert hit.repo == f"local/{sample_repo.name}" and hit.ref == "HEAD"  # the identity, not the path


def test_search_files_returns_each_file_once_best_first(indexed: CodeIndex) -> None:
    hits = indexed.search_files("divide zero calculator", k=3)
    assert hits[0].path == "calc/core.py"
    assert len({h.path for h in hits}) == len(hits)


def test_search_files_fills_in_with_the_longest_source_files_when_hits_run_out(indexed: CodeIndex) -> None:
    hits = indexed.search_files("zzyzx", k=2)  # no chunk has the word
    assert [(h.kind, h.score) for h in hits] == [("file", 0.0), ("file", 0.0)]
    lines = [h.end_line for h in hits]
    assert lines == sorted(lines, reverse=True) and not any("test" in h.path for h in hits)


def test_search_files_puts_a_file_the_query_names_first_even_without_a_chunk_hit(indexed: CodeIndex) -> None:
    assert not indexed.search("zzyzx README.md", k=5)  # no chunk has a word of the query
    assert indexed.search_files("zzyzx README.md", k=2)[0].path == "README.md"  # the shortest file


def test_search_filters_by_language(indexed: CodeIndex) -> None:
    hits = indexed.search("invoice", k=10, filters={"language": "go"})
    assert hits and {h.language for h in hits} == {"go"}


def test_search_filters_by_path_prefix_and_glob(indexed: CodeIndex) -> None:
    assert {h.path for h in indexed.search("invoice calculator", k=20, filters={"path": "server/"})} == {
        "server/handler.go"
    }
    assert {h.path for h in indexed.search("invoice calculator", k=20, filters={"path": "*.md"})} == {"README.md"}


def test_search_filters_by_repo(code_index: CodeIndex, sample_repo: Path, make_repo) -> None:
    other = make_repo({"other.py": "def divide_other():\n    return 1\n"}, name="other")
    code_index.index(sample_repo)
    code_index.index(other)
    hits = code_index.search("divide", k=20, filters={"repo": str(other)})
    assert {h.path for h in hits} == {"other.py"}


def test_search_with_no_terms_returns_nothing(indexed: CodeIndex) -> None:
    assert indexed.search("the of and", k=5) == []


def test_search_rejects_alpha_outside_unit_interval(indexed: CodeIndex) -> None:
    with pytest.raises(InputError, match="alpha"):
        indexed.search("divide", alpha=1.5)


def test_definitions_of_finds_short_and_qualified_names(indexed: CodeIndex) -> None:
    short = indexed.definitions_of("divide")
    qualified = indexed.definitions_of("Calculator.divide")
    assert [(h.path, h.symbol, h.start_line) for h in short] == [("calc/core.py", "Calculator.divide", 7)]
    assert [h.id for h in qualified] == [h.id for h in short]
    assert indexed.definitions_of("divid") == []  # exact lookup, not fuzzy


def test_symbols_in_lists_a_files_symbols_in_line_order(indexed: CodeIndex) -> None:
    symbols = indexed.symbols_in("calc/core.py")
    assert [(s.symbol, s.kind) for s in symbols] == [
        ("Calculator", "class"),
        ("Calculator.divide", "method"),
        ("parse_amount", "function"),
    ]


def test_grep_like_exact_reports_lines_with_their_enclosing_symbol(indexed: CodeIndex) -> None:
    hits = [h for h in indexed.grep_like("raise ZeroDivisionError") if h.kind == "line"]
    assert [(h.path, h.start_line, h.symbol) for h in hits] == [("calc/core.py", 10, "Calculator.divide")]
    assert hits[0].text.strip() == 'raise ZeroDivisionError("b is zero")'


def test_grep_like_ignore_case_finds_the_line_in_any_case(indexed: CodeIndex) -> None:
    hits = [h for h in indexed.grep_like("RAISE zerodivisionerror", ignore_case=True) if h.kind == "line"]
    assert [(h.path, h.start_line, h.text.strip()) for h in hits] == [
        ("calc/core.py", 10, 'raise ZeroDivisionError("b is zero")')
    ]


def test_grep_like_regex_matches_symbol_names_and_text(indexed: CodeIndex) -> None:
    hits = indexed.grep_like(r"render\w+", regex=True)
    assert ("renderTitle", "function") in {(h.symbol, h.kind) for h in hits}
    assert any(h.kind == "line" and h.path == "web/render.ts" and h.start_line == 2 for h in hits)


def test_grep_like_rejects_a_bad_regex(indexed: CodeIndex) -> None:
    with pytest.raises(InputError, match="regular expression"):
        indexed.grep_like("(unclosed", regex=True)


def test_grep_lines_yields_every_matching_line_with_its_number(indexed: CodeIndex) -> None:
    lines = list(indexed.grep_lines("float", filters={"path": "calc/"}))
    assert [(path, line) for path, line, _ in lines] == [
        ("calc/core.py", 7),
        ("calc/core.py", 14),
        ("calc/core.py", 16),
    ]
    assert lines[2][2] == "    return float(text.strip())"


def test_grep_lines_ignore_case_matches_in_ascii_and_non_ascii_files(
    code_index: CodeIndex, make_repo: Callable[..., Path]
) -> None:
    repo = make_repo({"a.py": "X = 'ZeroDivisionError'\n", "b.py": "# naïve\nraise zerodivisionerror\n"}, name="fold")
    code_index.index(repo, "HEAD")
    lines = sorted(code_index.grep_lines("ZERODivisionError", ignore_case=True))  # Weaviate: any file order
    assert lines == [("a.py", 1, "X = 'ZeroDivisionError'"), ("b.py", 2, "raise zerodivisionerror")]


def test_snippet_by_location_with_radius(indexed: CodeIndex) -> None:
    snip = indexed.snippet("calc/core.py:9-10", radius=1)
    assert (snip.start_line, snip.end_line) == (8, 11)
    assert snip.text.splitlines()[0].strip() == '"""Divide a by b, refusing zero."""'


def test_snippet_by_chunk_id(indexed: CodeIndex) -> None:
    hit = indexed.definitions_of("parse_amount")[0]
    snip = indexed.snippet(hit.id)
    assert (snip.path, snip.start_line, snip.end_line) == ("calc/core.py", 14, 16)
    assert snip.text.startswith("def parse_amount")


def test_snippet_of_unknown_path_is_a_clear_error(indexed: CodeIndex) -> None:
    with pytest.raises(CodeIndexError, match="not in the index"):
        indexed.snippet("nope.py:1-2")


def test_results_follow_the_filtered_ref(code_index: CodeIndex, sample_repo: Path) -> None:
    from tests.fixtures.repos import commit_files

    code_index.index(sample_repo, "main")
    commit_files(sample_repo, {"calc/extra.py": "def modulo(a, b):\n    return a % b\n"})
    code_index.index(sample_repo, "HEAD")
    assert code_index.definitions_of("modulo", filters={"ref": "main"}) == []
    assert [h.ref for h in code_index.definitions_of("modulo", filters={"ref": "HEAD"})] == ["HEAD"]


def test_search_filters_by_kind(indexed: CodeIndex) -> None:
    hits = indexed.search("calculator divide invoice", k=10, filters={"kind": "file"})
    assert hits and {h.kind for h in hits} == {"file"} and {h.symbol for h in hits} == {""}


def test_grep_like_ignore_case_finds_the_line(indexed: CodeIndex) -> None:
    hits = [h for h in indexed.grep_like("raise zerodivisionerror", ignore_case=True) if h.kind == "line"]
    assert [(h.path, h.start_line, h.symbol) for h in hits] == [("calc/core.py", 10, "Calculator.divide")]


def test_grep_like_regex_needs_more_than_its_literals(indexed: CodeIndex) -> None:
    # Both literal parts occur in calc/core.py, but never in this order on one line.
    assert indexed.grep_like(r"return \w+ZeroDivisionError", regex=True) == []
    hits = indexed.grep_like(r"def \w+\(self, a", regex=True)
    assert [(h.kind, h.path, h.start_line) for h in hits] == [("line", "calc/core.py", 7)]


def test_grep_like_follows_the_filtered_ref(code_index: CodeIndex, sample_repo: Path) -> None:
    from tests.fixtures.repos import commit_files

    code_index.index(sample_repo, "main")
    commit_files(sample_repo, {"calc/extra.py": "def modulo(a, b):\n    return a % b  # MODULO_MARKER\n"})
    code_index.index(sample_repo, "HEAD")
    assert code_index.grep_like("MODULO_MARKER", filters={"ref": "main"}) == []
    hits = code_index.grep_like("MODULO_MARKER", filters={"ref": "HEAD"})
    assert [(h.path, h.start_line, h.symbol) for h in hits] == [("calc/extra.py", 2, "modulo")]
    assert [h.symbol for h in code_index.grep_like("modul", filters={"ref": "HEAD"}) if h.kind != "line"] == ["modulo"]
