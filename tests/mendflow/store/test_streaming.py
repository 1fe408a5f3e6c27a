"""Streaming and size-aware store operations, shared by every backend: put_file, size, copy, get_capped."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.errors import ArtefactNotFoundError, TooLargeError
from mendflow.store.base import ArtefactStore

KEY = "repos/acme/app/abc123/B1/1/coverage.json"


def test_put_file_stores_the_file_bytes(store: ArtefactStore, tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(bytes(range(256)) * 40_000)  # 10 MB: several multipart chunks on S3
    assert store.put_file(KEY, source) == store.url_for(KEY)
    assert store.get_bytes(KEY) == source.read_bytes()


def test_size_is_the_stored_length(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"x" * 1234)
    assert store.size(KEY) == 1234


def test_size_of_a_missing_key_is_not_found(store: ArtefactStore) -> None:
    with pytest.raises(ArtefactNotFoundError):
        store.size(KEY)


def test_copy_leaves_both_keys_with_the_bytes(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"report")
    store.copy(KEY, KEY + ".copy")
    assert (store.get_bytes(KEY), store.get_bytes(KEY + ".copy")) == (b"report", b"report")


def test_copy_of_a_missing_key_is_not_found(store: ArtefactStore) -> None:
    with pytest.raises(ArtefactNotFoundError):
        store.copy(KEY, KEY + ".copy")


def test_get_capped_reads_what_fits(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"y" * 100)
    assert store.get_capped(KEY, 100) == b"y" * 100


def test_get_capped_refuses_what_does_not_fit(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"y" * 101)
    with pytest.raises(TooLargeError, match=r"coverage\.json is 101 bytes"):
        store.get_capped(KEY, 100)
