"""Behaviour every ArtefactStore shares, run against the file store and S3 (moto over HTTP)."""

from __future__ import annotations

import urllib.request

import pytest

from mendflow.errors import ArtefactNotFoundError, StoreError
from mendflow.store.base import ArtefactStore
from tests.mendflow.store.conftest import SimulatedCrash, StoreCase

KEY = "demo/abc123/B1/1/report.json"


def _fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        data: bytes = resp.read()
        return data


def test_put_then_get_returns_the_same_bytes(store: ArtefactStore) -> None:
    payload = bytes(range(256)) * 10
    store.put_bytes(KEY, payload)
    assert store.get_bytes(KEY) == payload


def test_put_returns_the_url_for_the_key(store: ArtefactStore) -> None:
    assert store.put_bytes(KEY, b"x") == store.url_for(KEY)


def test_overwrite_replaces_the_old_content(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"old")
    store.put_bytes(KEY, b"new")
    assert store.get_bytes(KEY) == b"new"


def test_failed_overwrite_keeps_the_old_object_intact(store_case: StoreCase, monkeypatch: pytest.MonkeyPatch) -> None:
    store_case.store.put_bytes(KEY, b"old")
    store_case.break_commit(monkeypatch)
    with pytest.raises(SimulatedCrash):
        store_case.store.put_bytes(KEY, b"new-and-much-longer")
    assert store_case.store.get_bytes(KEY) == b"old"


def test_crash_before_commit_leaves_nothing_at_the_final_key(
    store_case: StoreCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_case.break_commit(monkeypatch)
    with pytest.raises(SimulatedCrash):
        store_case.store.put_bytes(KEY, b"half")
    monkeypatch.undo()
    assert not store_case.store.exists(KEY)
    assert store_case.store.list("") == []


def test_exists_is_true_only_after_put(store: ArtefactStore) -> None:
    assert not store.exists(KEY)
    store.put_bytes(KEY, b"x")
    assert store.exists(KEY)


def test_missing_key_raises_artefact_not_found(store: ArtefactStore) -> None:
    with pytest.raises(ArtefactNotFoundError, match="not found"):
        store.get_bytes("demo/none/B1/1/report.json")


def test_list_returns_sorted_keys_under_the_prefix_only(store: ArtefactStore) -> None:
    for key in ["demo/c1/B1/1/z.txt", "demo/c1/B1/1/a.txt", "demo/c1/B2/1/a.txt", "demo/c10/B1/1/a.txt"]:
        store.put_bytes(key, b"x")
    assert store.list("demo/c1/B1") == ["demo/c1/B1/1/a.txt", "demo/c1/B1/1/z.txt"]


def test_list_treats_the_prefix_as_a_directory_not_a_string_prefix(store: ArtefactStore) -> None:
    store.put_bytes("demo/c1/a.txt", b"x")
    store.put_bytes("demo/c10/a.txt", b"x")
    assert store.list("demo/c1") == ["demo/c1/a.txt"]


def test_list_of_an_unknown_prefix_is_empty(store: ArtefactStore) -> None:
    assert store.list("nothing/here") == []


def test_delete_prefix_removes_only_keys_under_it(store: ArtefactStore) -> None:
    gone = "demo/c1/B1/1"
    store.put_bytes(f"{gone}/report.json", b"x")
    store.put_bytes(f"{gone}/logs/out.txt", b"x")
    store.put_bytes("demo/c1/B1/2/report.json", b"x")
    store.delete_prefix(gone)
    assert store.list("") == ["demo/c1/B1/2/report.json"]


@pytest.mark.parametrize(
    "key",
    ["../escape", "a/../../b", "/etc/passwd", "a\\b", "a//b", "", "a/./b", "a/.tmp/b", "a/\nb"],
)
def test_unsafe_keys_are_rejected_with_a_hint(store: ArtefactStore, key: str) -> None:
    with pytest.raises(StoreError, match="invalid artefact key") as info:
        store.put_bytes(key, b"x")
    assert info.value.hint


def test_download_url_serves_the_object_without_credentials(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"payload")
    assert _fetch(store.download_url(KEY)) == b"payload"


def test_url_for_carries_no_credentials(store: ArtefactStore) -> None:
    url = store.url_for(KEY)
    assert url.endswith(KEY)
    assert "Signature" not in url and "testing" not in url
