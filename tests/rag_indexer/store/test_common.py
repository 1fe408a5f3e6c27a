"""The ``IndexStore`` contract (``rag_indexer/store/base.py``), run against every backend by the ``index_store``
fixture (``conftest.py``). Blobs are written as the indexer writes them (``BlobChunks``), without git or a
parser, so each test shows one store behaviour; the indexer's own behaviour is ``tests/rag_indexer/test_*.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rag_indexer.models import BlobChunks, Chunk, ChunkKind, Filters, RefFile, RefState, chunk_id, content_hash
from rag_indexer.store.base import IndexStore
from rag_indexer.store.embedded import EmbeddedStore

REPO, OTHER_REPO = "acme/app", "acme/other"
CALC, RENDER, CALC_V2 = "a" * 40, "b" * 40, "c" * 40

CALC_TEXT = (
    "def divide_amounts(total, parts):\n"
    '    """Split a total into equal shares."""\n'
    "    return total / parts\n"
    "\n"
    "def parse_invoice(text):\n"
    "    return text.strip()\n"
)
CALC_V2_TEXT = "def triple_quantity(quantity):\n    return quantity * 3\n"
RENDER_TEXT = "export function renderTitle(title: string): string {\n  return title;\n}\n"


def symbol(sha: str, text: str, qualified: str, language: str, kind: ChunkKind = "function") -> Chunk:
    """The chunk of the symbol whose definition line contains its short name."""
    name = qualified.rsplit(".", 1)[-1]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if name in line)
    end = next((i - 1 for i in range(start + 1, len(lines) + 1) if not lines[i - 1].strip()), len(lines))
    body = "\n".join(lines[start - 1 : end])
    return Chunk(
        id=chunk_id(sha, qualified), blob_sha=sha, kind=kind, start_line=start, end_line=end, language=language,
        text=body, content_hash=content_hash(body), symbol=qualified, symbol_key=qualified, name=name,
        signature=lines[start - 1].strip(),
    )  # fmt: skip


def blob(sha: str, text: str, symbols: list[str], language: str = "python") -> BlobChunks:
    whole = Chunk(
        id=chunk_id(sha, ""), blob_sha=sha, kind="file", start_line=1, end_line=len(text.splitlines()),
        language=language, text=text, content_hash=content_hash(text),
    )  # fmt: skip
    chunks = [whole, *(symbol(sha, text, s, language) for s in symbols)]
    return BlobChunks(blob_sha=sha, language=language, encoding="utf-8", chunks=chunks)


BLOBS = {
    CALC: blob(CALC, CALC_TEXT, ["divide_amounts", "parse_invoice"]),
    RENDER: blob(RENDER, RENDER_TEXT, ["renderTitle"], "typescript"),
    CALC_V2: blob(CALC_V2, CALC_V2_TEXT, ["triple_quantity"]),
}
LANGUAGE = {CALC: "python", RENDER: "typescript", CALC_V2: "python"}


def set_ref(store: IndexStore, files: dict[str, str], ref: str = "main", repo: str = REPO) -> None:
    """Map (repo, ref) to ``files`` (path → blob SHA), as one index run does."""
    state = RefState(repo=repo, ref=ref, commit="1" * 40, tree="2" * 40, indexed_at=datetime.now(UTC), files=len(files))
    store.set_ref(state, [RefFile(path=p, blob_sha=sha, language=LANGUAGE[sha]) for p, sha in files.items()])


def indexed(store: IndexStore, files: dict[str, str] | None = None, **ref: str) -> IndexStore:
    files = {"calc/core.py": CALC, "web/render.ts": RENDER} if files is None else files
    store.write_blobs([BLOBS[sha] for sha in set(files.values())])
    set_ref(store, files, **ref)
    return store


def found(store: IndexStore, text: str, **filters: str) -> list[tuple[str, str]]:
    """(path, symbol) of the keyword-only search hits for ``text`` within ``filters``, sorted; the file
    chunk's symbol is ''."""
    hits = store.search(text, None, 10, 0.0, Filters(**filters))
    return sorted((h.path, h.symbol) for h in hits)


# -- content -------------------------------------------------------------------------------------------------


def test_written_blobs_are_reported_indexed_with_their_language(index_store: IndexStore) -> None:
    index_store.write_blobs([BLOBS[CALC], BLOBS[RENDER]])
    assert index_store.indexed_blobs([CALC, RENDER, CALC_V2]) == {CALC: "python", RENDER: "typescript"}


def test_writing_a_blob_again_keeps_one_copy_of_each_chunk(index_store: IndexStore) -> None:
    indexed(index_store)
    index_store.write_blobs([BLOBS[CALC]])  # a retried batch
    assert found(index_store, "divide") == [("calc/core.py", ""), ("calc/core.py", "divide_amounts")]


def test_blob_symbols_maps_each_symbol_to_its_content_hash(index_store: IndexStore) -> None:
    index_store.write_blobs([BLOBS[CALC]])
    expected = {c.symbol_key: c.content_hash for c in BLOBS[CALC].chunks if c.kind != "file"}
    assert index_store.blob_symbols([CALC]) == {CALC: expected}


# -- mapping -------------------------------------------------------------------------------------------------


def test_a_ref_reads_back_as_it_was_set(index_store: IndexStore) -> None:
    indexed(index_store)
    state = index_store.get_ref(REPO, "main")
    assert state is not None and (state.commit, state.files) == ("1" * 40, 2)
    assert {p: f.blob_sha for p, f in index_store.ref_files(REPO, "main").items()} == {
        "calc/core.py": CALC,
        "web/render.ts": RENDER,
    }


def test_an_unknown_ref_is_none_and_has_no_files(index_store: IndexStore) -> None:
    assert (index_store.get_ref(REPO, "nope"), index_store.ref_files(REPO, "nope")) == (None, {})


def test_list_refs_names_every_ref_or_one_repos(index_store: IndexStore) -> None:
    indexed(index_store)
    indexed(index_store, ref="dev")
    indexed(index_store, repo=OTHER_REPO)
    assert sorted((r.repo, r.ref) for r in index_store.list_refs()) == [
        (REPO, "dev"),
        (REPO, "main"),
        (OTHER_REPO, "main"),
    ]
    assert sorted(r.ref for r in index_store.list_refs(REPO)) == ["dev", "main"]


def test_set_ref_replaces_the_whole_mapping(index_store: IndexStore) -> None:
    indexed(index_store)
    set_ref(index_store, {"web/render.ts": RENDER})
    assert list(index_store.ref_files(REPO, "main")) == ["web/render.ts"]


# -- search --------------------------------------------------------------------------------------------------


def test_keyword_search_finds_the_symbol_at_its_path(index_store: IndexStore) -> None:
    indexed(index_store)
    hits = index_store.search("divide amounts", None, 10, 0.0, Filters())
    assert (hits[0].path, hits[0].symbol, hits[0].repo, hits[0].ref) == ("calc/core.py", "divide_amounts", REPO, "main")


def test_a_blob_no_ref_maps_is_never_found(index_store: IndexStore) -> None:
    indexed(index_store)
    index_store.write_blobs([BLOBS[CALC_V2]])
    assert found(index_store, "triple_quantity") == []


def test_a_path_removed_from_the_ref_vanishes_from_its_results(index_store: IndexStore) -> None:
    indexed(index_store)
    set_ref(index_store, {"web/render.ts": RENDER})
    assert found(index_store, "divide_amounts") == []


def test_a_changed_blob_replaces_the_old_content_at_its_path(index_store: IndexStore) -> None:
    indexed(index_store)
    indexed(index_store, {"calc/core.py": CALC_V2, "web/render.ts": RENDER})  # the next commit changed the file
    assert (found(index_store, "divide_amounts"), found(index_store, "triple_quantity")) == (
        [],
        [("calc/core.py", ""), ("calc/core.py", "triple_quantity")],
    )


def test_one_blob_at_two_paths_is_found_at_both(index_store: IndexStore, request: pytest.FixtureRequest) -> None:
    if isinstance(index_store, EmbeddedStore):
        why = "EmbeddedStore.search keys keyword rows by rowid: a blob's copies collapse into its last path"
        request.applymarker(pytest.mark.xfail(strict=True, reason=why))
    indexed(index_store, {"calc/core.py": CALC, "legacy/core.py": CALC})
    assert found(index_store, "parse_invoice", kind="function") == [
        ("calc/core.py", "parse_invoice"),
        ("legacy/core.py", "parse_invoice"),
    ]


def test_file_lines_counts_each_file_of_the_scope(index_store: IndexStore) -> None:
    indexed(index_store)
    indexed(index_store, {"calc/core.py": CALC_V2}, ref="dev")
    assert index_store.file_lines(Filters(repo=REPO, ref="main")) == {
        (REPO, "main", "calc/core.py"): len(CALC_TEXT.splitlines()),
        (REPO, "main", "web/render.ts"): len(RENDER_TEXT.splitlines()),
    }


def test_file_lines_keeps_to_the_filtered_language(index_store: IndexStore) -> None:
    indexed(index_store)
    assert list(index_store.file_lines(Filters(language="typescript"))) == [(REPO, "main", "web/render.ts")]


def test_search_keeps_to_the_filtered_ref(index_store: IndexStore) -> None:
    indexed(index_store)
    indexed(index_store, {"calc/core.py": CALC_V2}, ref="dev")
    assert found(index_store, "triple_quantity", ref="main") == []
    assert found(index_store, "triple_quantity", ref="dev", kind="function") == [("calc/core.py", "triple_quantity")]


def test_search_keeps_to_the_filtered_repo(index_store: IndexStore) -> None:
    indexed(index_store)
    indexed(index_store, {"other/core.py": CALC_V2}, repo=OTHER_REPO)
    assert found(index_store, "triple_quantity", repo=REPO) == []


def test_search_keeps_to_the_filtered_language(index_store: IndexStore) -> None:
    indexed(index_store)
    assert {path for path, _ in found(index_store, "title divide", language="typescript")} == {"web/render.ts"}


def test_search_keeps_to_the_filtered_kind(index_store: IndexStore) -> None:
    indexed(index_store)
    assert found(index_store, "divide_amounts", kind="file") == [("calc/core.py", "")]


def test_search_keeps_to_the_filtered_path_prefix_and_glob(index_store: IndexStore) -> None:
    indexed(index_store)
    assert {p for p, _ in found(index_store, "title divide", path="web")} == {"web/render.ts"}
    assert {p for p, _ in found(index_store, "title divide", path="*.py")} == {"calc/core.py"}


def test_a_query_of_stopwords_only_finds_nothing(index_store: IndexStore) -> None:
    indexed(index_store)
    assert found(index_store, "the and of") == []


# -- lookups -------------------------------------------------------------------------------------------------


def test_lookup_names_matches_a_name_exactly(index_store: IndexStore) -> None:
    indexed(index_store)
    assert [h.symbol for h in index_store.lookup_names("renderTitle", Filters())] == ["renderTitle"]
    assert index_store.lookup_names("renderTit", Filters()) == []


def test_chunks_at_returns_every_chunk_of_the_blob_at_the_path(index_store: IndexStore) -> None:
    indexed(index_store)
    assert sorted(h.symbol for h in index_store.chunks_at("calc/core.py", Filters())) == [
        "",
        "divide_amounts",
        "parse_invoice",
    ]


def test_get_chunks_returns_the_chunks_asked_for_with_their_text(index_store: IndexStore) -> None:
    indexed(index_store)
    wanted = BLOBS[CALC].chunks[1]
    hits = index_store.get_chunks([wanted.id], Filters())
    assert [(h.id, h.path, h.text) for h in hits] == [(wanted.id, "calc/core.py", wanted.text)]


def test_file_texts_yields_each_file_in_scope_whole(index_store: IndexStore) -> None:
    indexed(index_store)
    texts = {h.path: h.text for h in index_store.file_texts(Filters(repo=REPO, ref="main"))}
    assert texts == {"calc/core.py": CALC_TEXT, "web/render.ts": RENDER_TEXT}


def test_symbols_yields_each_symbol_in_scope(index_store: IndexStore) -> None:
    indexed(index_store)
    assert sorted((h.path, h.symbol) for h in index_store.symbols(Filters(language="python"))) == [
        ("calc/core.py", "divide_amounts"),
        ("calc/core.py", "parse_invoice"),
    ]


def test_symbol_spans_give_each_symbols_lines(index_store: IndexStore) -> None:
    index_store.write_blobs([BLOBS[CALC]])
    assert sorted(index_store.symbol_spans([CALC])[CALC]) == [("divide_amounts", 1, 3), ("parse_invoice", 5, 6)]


# -- garbage ---------------------------------------------------------------------------------------------------


def test_gc_deletes_only_the_blobs_no_ref_maps(index_store: IndexStore) -> None:
    indexed(index_store)
    index_store.write_blobs([BLOBS[CALC_V2]])
    assert index_store.gc() == 1
    assert index_store.indexed_blobs([CALC, RENDER, CALC_V2]) == {CALC: "python", RENDER: "typescript"}
