"""Incremental, content-addressed indexing, run against every store (the shared suite)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from mendflow.errors import CommitNotFoundError, RepoNotFoundError
from rag_indexer.api import CodeIndex
from tests.fixtures.repos import commit_files
from tests.rag_indexer.conftest import SAMPLE_FILES, IndexFactory
from tests.rag_indexer.gitutil import create_branch, rebase_onto, switch


def test_first_index_counts_files_and_symbols(code_index: CodeIndex, sample_repo: Path) -> None:
    report = code_index.index(sample_repo)
    assert (report.files.added, report.files.changed, report.files.removed) == (4, 0, 0)
    # Calculator, Calculator.divide, parse_amount, renderTitle, PageWidget, PageWidget.draw,
    # Handler, Handler.ServeInvoice
    assert report.symbols.added == 8
    assert report.blobs_parsed == 4 and not report.noop


def test_reindexing_an_unchanged_tree_is_a_noop(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    again = code_index.index(sample_repo)
    assert again.noop and again.blobs_parsed == 0 and again.chunks_written == 0


def test_only_changed_blobs_are_parsed(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    text = (sample_repo / "calc/core.py").read_text().replace("return float(text.strip())", "return 0.0")
    commit_files(sample_repo, {"calc/core.py": text})
    report = code_index.index(sample_repo)
    assert report.blobs_parsed == 1 and report.blobs_reused == 3
    assert (report.files.added, report.files.changed, report.files.removed) == (0, 1, 0)
    assert (report.symbols.added, report.symbols.changed, report.symbols.removed) == (0, 1, 0)


def test_deleted_file_vanishes_from_that_refs_results(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    commit_files(sample_repo, {"server/handler.go": None})
    report = code_index.index(sample_repo)
    assert report.files.removed == 1 and report.symbols.removed == 2
    assert code_index.definitions_of("ServeInvoice") == []
    assert all(h.path != "server/handler.go" for h in code_index.search("invoice", k=20))


def test_rename_reuses_the_blob_and_moves_results(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    text = (sample_repo / "calc/core.py").read_text()
    commit_files(sample_repo, {"calc/core.py": None, "calc/arith.py": text})
    report = code_index.index(sample_repo)
    assert report.blobs_parsed == 0
    assert (report.files.added, report.files.removed) == (1, 1)
    assert [h.path for h in code_index.definitions_of("divide")] == ["calc/arith.py"]


def test_branch_switch_only_changes_the_mapping(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    create_branch(sample_repo, "feature")
    switch(sample_repo, "feature")
    commit_files(sample_repo, {"calc/feature.py": "def feature_flag():\n    return True\n"})
    assert code_index.index(sample_repo).blobs_parsed == 1
    switch(sample_repo, "main")
    back = code_index.index(sample_repo)
    assert back.blobs_parsed == 0 and back.files.removed == 1
    assert code_index.definitions_of("feature_flag") == []


def test_rebase_reuses_every_blob(code_index: CodeIndex, sample_repo: Path) -> None:
    create_branch(sample_repo, "feature")
    switch(sample_repo, "feature")
    commit_files(sample_repo, {"calc/feature.py": "def feature_flag():\n    return True\n"})
    switch(sample_repo, "main")
    commit_files(sample_repo, {"docs/notes.md": "# Notes\n"})
    code_index.index(sample_repo, "main")
    before = code_index.index(sample_repo, "feature")
    new_tip = rebase_onto(sample_repo, "feature", "main")
    after = code_index.index(sample_repo, "feature")
    assert after.commit == new_tip and after.previous_commit == before.commit
    assert after.blobs_parsed == 0 and after.files.added == 1  # docs/notes.md, already known from main
    assert [h.path for h in code_index.definitions_of("feature_flag", filters={"ref": "feature"})] == [
        "calc/feature.py"
    ]


def test_binary_vendored_and_oversize_files_are_skipped(make_index: IndexFactory, make_repo: Any) -> None:
    repo = make_repo(
        {
            "app.py": "def app():\n    pass\n",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "vendor/lib.py": "def vendored():\n    pass\n",
            "gen/api_pb2.py": "def generated():\n    pass\n",
            "big.py": "x = 1\n" * 200,
        }
    )
    index = make_index(max_file_bytes=1000)
    report = index.index(repo)
    assert report.skipped == {"binary": 1, "vendored": 1, "generated": 1, "oversize": 1}
    assert report.files.added == 1
    assert index.grep_like("def ") and {h.path for h in index.grep_like("def ")} == {"app.py"}


def test_gitattributes_vendored_and_generated_are_honoured(make_index: IndexFactory, make_repo: Any) -> None:
    repo = make_repo(
        {
            ".gitattributes": "assets/*.js linguist-vendored\nschema.py linguist-generated=true\n"
            "vendor/** linguist-vendored=false\n",
            "assets/jquery.js": "function jq() {}\n",
            "schema.py": "def schema():\n    pass\n",
            "vendor/ours.py": "def ours():\n    pass\n",
        }
    )
    index = make_index()
    report = index.index(repo)
    assert report.skipped == {"vendored": 1, "generated": 1}
    assert [h.path for h in index.definitions_of("ours")] == ["vendor/ours.py"]


def test_non_utf8_file_is_indexed_losslessly(make_index: IndexFactory, make_repo: Any) -> None:
    repo = make_repo({"legacy.py": "def caf\u00e9_total():\n    return 'na\u00efve'\n".encode("latin-1")})
    index = make_index()
    index.index(repo)
    [hit] = index.definitions_of("caf\u00e9_total")
    assert "na\u00efve" in hit.text and hit.start_line == 1


def test_huge_symbol_is_split_into_parts_and_nothing_is_lost(make_index: IndexFactory, make_repo: Any) -> None:
    body = "".join(f"    value_{i} = {i}\n" for i in range(250))
    repo = make_repo({"huge.py": f"def huge():\n{body}    return value_249\n"})
    index = make_index(max_symbol_lines=100)
    index.index(repo)
    parts = index.definitions_of("huge")
    assert len(parts) == 3
    assert [(p.start_line, p.end_line) for p in parts] == [(1, 100), (101, 200), (201, 252)]
    assert "\n".join(p.text for p in parts).count("value_") == 251


def test_interrupted_index_is_completed_by_the_next_run(
    make_index: IndexFactory, sample_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = make_index(write_batch_blobs=1)
    original = index.store.write_blobs
    calls = {"n": 0}

    def crash_on_third_batch(items: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated crash mid-index")
        original(items)

    monkeypatch.setattr(index.store, "write_blobs", crash_on_third_batch)
    with pytest.raises(KeyboardInterrupt):
        index.index(sample_repo)
    assert index.store.get_ref(str(sample_repo.resolve()), "HEAD") is None  # mapping untouched
    monkeypatch.setattr(index.store, "write_blobs", original)
    report = index.index(sample_repo)
    assert report.blobs_parsed == 2 and report.blobs_reused == 2
    assert report.files.added == 4 and report.symbols.added == 8


def test_status_shows_the_indexed_commit_and_staleness(code_index: CodeIndex, sample_repo: Path) -> None:
    report = code_index.index(sample_repo)
    assert code_index.status(sample_repo).indexed.commit == report.commit  # type: ignore[union-attr]
    assert not code_index.status(sample_repo).stale
    commit_files(sample_repo, {"new.py": "x = 1\n"})
    assert code_index.status(sample_repo).stale


def test_gc_drops_blobs_no_ref_maps(code_index: CodeIndex, sample_repo: Path) -> None:
    code_index.index(sample_repo)
    commit_files(sample_repo, {"README.md": None})
    code_index.index(sample_repo)
    assert code_index.gc() == 1
    assert code_index.gc() == 0


def test_unknown_ref_and_non_repo_are_clear_errors(code_index: CodeIndex, sample_repo: Path, tmp_path: Path) -> None:
    with pytest.raises(CommitNotFoundError, match="nope"):
        code_index.index(sample_repo, "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(RepoNotFoundError):
        code_index.index(tmp_path / "plain")


def test_helper_processes_give_the_same_index(make_index: IndexFactory, sample_repo: Path, tmp_path: Path) -> None:
    def chunks(index: CodeIndex) -> list[tuple[str, str, int, int, str]]:
        hits = [h for path in SAMPLE_FILES for h in index.store.chunks_at(path, index._filters(None))]
        return sorted((h.id, h.symbol, h.start_line, h.end_line, h.text) for h in hits)

    alone = make_index(index_dir=tmp_path / "alone", collection_prefix=f"A{uuid.uuid4().hex[:10]}", processes=1)
    alone.index(sample_repo)
    # One blob per batch, so the helper gets batches of its own.
    shared = make_index(processes=2, helper_min_blobs=1, write_batch_blobs=1)
    report = shared.index(sample_repo)
    assert (report.blobs_parsed, report.chunks_written, report.symbols.added) == (4, 12, 8)
    assert chunks(shared) == chunks(alone)
    assert [h.symbol for h in shared.definitions_of("divide")] == ["Calculator.divide"]


def test_a_symbol_split_into_parts_counts_as_one_added_symbol(make_index: IndexFactory, sample_repo: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(30))
    commit_files(sample_repo, {"long.py": f"def long():\n{body}"})
    report = make_index(max_symbol_lines=10).index(sample_repo)
    assert report.chunks_written == 12 + 1 + 4  # the sample's, long.py's file chunk and its 4 parts
    assert report.symbols.added == 8 + 1
