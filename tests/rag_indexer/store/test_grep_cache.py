"""Where grep packs live and which answers a grep: locators go stale with refs; one builder per pack."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rag_indexer.models import RefState
from rag_indexer.store import DATABASE_FILE, grep_cache, grep_pack
from rag_indexer.store.embedded import EmbeddedStore


@pytest.fixture
def index_dir(tmp_path: Path) -> str:
    (tmp_path / DATABASE_FILE).touch()
    return str(tmp_path)


def test_a_locator_gives_its_tree_under_the_token_it_was_written_with(index_dir: str) -> None:
    grep_cache.refs_changed(index_dir)
    token = grep_cache.refs_token(index_dir)
    assert token is not None
    grep_cache.remember(index_dir, "tree\0/repo\0\0stamp", token, "abc123")
    assert grep_cache.recall(index_dir, "tree\0/repo\0\0stamp") == "abc123"
    assert grep_cache.recall(index_dir, "tree\0/repo\0\0other stamp") is None


@pytest.mark.parametrize("change", [grep_cache.refs_changing, grep_cache.refs_changed])
def test_a_ref_changing_voids_every_locator(index_dir: str, change: object) -> None:
    grep_cache.refs_changed(index_dir)
    grep_cache.remember(index_dir, "id\0acme/calc\0", grep_cache.refs_token(index_dir) or "", "abc123")
    change(index_dir)  # type: ignore[operator]
    assert grep_cache.recall(index_dir, "id\0acme/calc\0") is None


def test_a_locator_under_another_key_with_the_same_hash_is_not_trusted(index_dir: str) -> None:
    grep_cache.refs_changed(index_dir)
    token = grep_cache.refs_token(index_dir) or ""
    grep_cache.remember(index_dir, "id\0acme/calc\0", token, "abc123")
    locator = next((Path(index_dir) / "grep" / "at").iterdir())
    locator.write_text(f"{token}\tabc123\tid\0acme/other\0")
    assert grep_cache.recall(index_dir, "id\0acme/calc\0") is None


def test_the_first_token_never_replaces_one(index_dir: str) -> None:
    grep_cache.first_token(index_dir)
    first = grep_cache.refs_token(index_dir)
    grep_cache.first_token(index_dir)
    assert first is not None and grep_cache.refs_token(index_dir) == first
    grep_cache.refs_changing(index_dir)
    grep_cache.first_token(index_dir)
    assert grep_cache.refs_token(index_dir) is None  # a ref in flight stays in flight


def test_setting_a_ref_gives_the_index_a_new_token(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path)
    index_dir = str(tmp_path)
    grep_cache.first_token(index_dir)
    before = grep_cache.refs_token(index_dir)
    state = RefState(repo="acme/calc", ref="HEAD", commit="c" * 40, tree="t" * 40, indexed_at=datetime.now(UTC))
    store.set_ref(state, [])
    store.close()
    assert grep_cache.refs_token(index_dir) not in (None, before)


def test_a_new_database_voids_every_locator(index_dir: str) -> None:
    grep_cache.refs_changed(index_dir)
    grep_cache.remember(index_dir, "id\0acme/calc\0", grep_cache.refs_token(index_dir) or "", "abc123")
    database = Path(index_dir) / DATABASE_FILE
    database.rename(database.with_suffix(".old"))
    database.touch()  # deleted and begun again: a new inode
    assert grep_cache.recall(index_dir, "id\0acme/calc\0") is None


def test_only_the_newest_packs_are_kept(tmp_path: Path) -> None:
    for n in range(4):
        path = grep_cache.pack_path(str(tmp_path), f"tree{n}")
        grep_pack.write_pack(path, [])
        os.utime(path, (time.time() + n, time.time() + n))
    grep_cache.prune(str(tmp_path), keep=2)
    kept = sorted(p.name for p in (tmp_path / "grep" / "packs").iterdir())
    assert kept == [Path(grep_cache.pack_path(str(tmp_path), f"tree{n}")).name for n in (2, 3)]


def test_one_builder_claims_a_pack_until_its_claim_goes_stale(tmp_path: Path) -> None:
    lock = str(tmp_path / "tree.pack.building")
    assert grep_cache.claim(lock)
    assert not grep_cache.claim(lock)
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    assert grep_cache.claim(lock)
