"""The ``ArtefactStore`` contract (``mendflow/store/base.py`` and the key rules of ``mendflow/store/keys.py``),
run against every backend by the ``store_case`` fixture (``conftest.py``): the file store and S3 (moto over HTTP).
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from mendflow.errors import ArtefactNotFoundError, StoreError, StoreUnreachableError, TooLargeError
from mendflow.store.base import ArtefactStore
from tests.mendflow.store.conftest import SimulatedCrash, StoreCase

KEY = "repos/acme/app/abc123/B1/1/report.json"
DIR_ONLY = "repos/acme/app/abc123/B1"  # a prefix of KEY, never a key itself


def _fetch(url: str) -> bytes:
    """How a credential-free job downloads: file:// is read by the local launcher, http(s) by plain urllib."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        data: bytes = resp.read()
        return data


def _job_upload(url: str, data: bytes) -> None:
    """How a credential-free job's output arrives at an upload URL: the local launcher writes file:// URLs,
    the in-pod wrapper PUTs presigned http(s) URLs with no AWS header."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        Path(unquote(parts.path)).write_bytes(data)
        return
    headers = {"Content-Type": "application/octet-stream"}  # urllib's default form type would be mangled
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="PUT", headers=headers), timeout=10):
        pass


# -- check ---------------------------------------------------------------------------------------------------


def test_check_passes_on_a_usable_store(store: ArtefactStore) -> None:
    store.check()
    store.put_bytes(KEY, b"x")  # and the store is then usable
    assert store.exists(KEY)


def test_check_on_an_unusable_store_is_one_line_naming_it_with_advice(store_case: StoreCase) -> None:
    with pytest.raises(StoreUnreachableError) as info:
        store_case.unusable.check()
    line = info.value.one_line()
    assert store_case.unusable_name in line and "\n" not in line and info.value.hint


# -- write and read ------------------------------------------------------------------------------------------


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


def test_put_file_stores_the_file_bytes_and_returns_the_url(store: ArtefactStore, tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(bytes(range(256)) * 40_000)  # 10 MB: several multipart chunks on S3
    assert store.put_file(KEY, source) == store.url_for(KEY)
    assert store.get_bytes(KEY) == source.read_bytes()


def test_size_is_the_stored_length(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"x" * 1234)
    assert store.size(KEY) == 1234


def test_exists_is_true_only_after_put(store: ArtefactStore) -> None:
    assert not store.exists(KEY)
    store.put_bytes(KEY, b"x")
    assert store.exists(KEY)


def test_a_prefix_of_keys_does_not_exist_as_a_key(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"x")
    assert not store.exists(DIR_ONLY)


# -- atomicity: readers never see half an object -------------------------------------------------------------


def test_a_reader_sees_nothing_at_the_key_while_it_is_being_written(
    store_case: StoreCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, seen = store_case.store, []

    def peek(*_args: object) -> None:  # runs where the commit would: the bytes are written, not yet published
        seen.append((store.exists(KEY), store.list("")))
        raise SimulatedCrash

    store_case.replace_commit(monkeypatch, peek)
    with pytest.raises(SimulatedCrash):
        store.put_bytes(KEY, b"half")
    assert seen == [(False, [])]


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


def test_crash_before_commit_of_a_streamed_file_leaves_nothing(
    store_case: StoreCase, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = tmp_path / "report.json"
    source.write_bytes(b"{}" * 1000)
    store_case.break_commit(monkeypatch)
    with pytest.raises(SimulatedCrash):
        store_case.store.put_file(KEY, source)
    monkeypatch.undo()
    assert store_case.store.list("") == []


# -- missing keys --------------------------------------------------------------------------------------------

MISSING_READS: dict[str, Callable[[ArtefactStore, str], object]] = {
    "get_bytes": lambda s, key: s.get_bytes(key),
    "size": lambda s, key: s.size(key),
    "get_capped": lambda s, key: s.get_capped(key, 100),
    "get_tail": lambda s, key: s.get_tail(key, 100),
    "copy": lambda s, key: s.copy(key, "elsewhere/copy.json"),
}


@pytest.mark.parametrize("read", list(MISSING_READS))
def test_reading_a_missing_key_raises_artefact_not_found(store: ArtefactStore, read: str) -> None:
    with pytest.raises(ArtefactNotFoundError, match="not found"):
        MISSING_READS[read](store, KEY)


@pytest.mark.parametrize("read", list(MISSING_READS))
def test_reading_a_prefix_of_keys_as_a_key_raises_artefact_not_found(store_case: StoreCase, read: str) -> None:
    store_case.store.put_bytes(KEY, b"x")
    with pytest.raises(ArtefactNotFoundError):
        MISSING_READS[read](store_case.store, DIR_ONLY)


# -- size limits ---------------------------------------------------------------------------------------------


def test_get_capped_reads_what_fits(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"y" * 100)
    assert store.get_capped(KEY, 100) == b"y" * 100


def test_get_capped_refuses_what_does_not_fit(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"y" * 101)
    with pytest.raises(TooLargeError, match=r"report\.json is 101 bytes"):
        store.get_capped(KEY, 100)


@pytest.mark.parametrize(("stored", "tail"), [(b"head-tail", b"tail"), (b"ail", b"ail"), (b"", b"")])
def test_get_tail_reads_the_last_bytes_alone(store: ArtefactStore, stored: bytes, tail: bytes) -> None:
    store.put_bytes(KEY, stored)
    assert store.get_tail(KEY, 4) == tail


# -- copy ----------------------------------------------------------------------------------------------------


def test_copy_leaves_both_keys_with_the_bytes_and_returns_the_url(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"report")
    assert store.copy(KEY, KEY + ".copy") == store.url_for(KEY + ".copy")
    assert (store.get_bytes(KEY), store.get_bytes(KEY + ".copy")) == (b"report", b"report")


def test_copy_over_an_existing_key_replaces_it(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"new")
    store.put_bytes(KEY + ".copy", b"old and longer")
    store.copy(KEY, KEY + ".copy")
    assert store.get_bytes(KEY + ".copy") == b"new"


# -- list and delete -----------------------------------------------------------------------------------------


def test_list_returns_sorted_keys_under_the_prefix_only(store: ArtefactStore) -> None:
    for key in ["demo/c1/B1/1/z.txt", "demo/c1/B1/1/a.txt", "demo/c1/B2/1/a.txt", "demo/c10/B1/1/a.txt"]:
        store.put_bytes(key, b"x")
    assert store.list("demo/c1/B1") == ["demo/c1/B1/1/a.txt", "demo/c1/B1/1/z.txt"]


def test_list_treats_the_prefix_as_a_directory_not_a_string_prefix(store: ArtefactStore) -> None:
    store.put_bytes("demo/c1/a.txt", b"x")
    store.put_bytes("demo/c10/a.txt", b"x")
    assert store.list("demo/c1") == ["demo/c1/a.txt"]


def test_list_of_the_empty_prefix_is_every_key(store: ArtefactStore) -> None:
    store.put_bytes("b/x", b"x")
    store.put_bytes("a/y", b"x")
    assert store.list("") == ["a/y", "b/x"]


def test_list_of_an_unknown_prefix_is_empty(store: ArtefactStore) -> None:
    assert store.list("nothing/here") == []


def test_delete_prefix_removes_only_keys_under_it(store: ArtefactStore) -> None:
    gone = "demo/c1/B1/1"
    store.put_bytes(f"{gone}/report.json", b"x")
    store.put_bytes(f"{gone}/logs/out.txt", b"x")
    store.put_bytes("demo/c1/B1/2/report.json", b"x")
    store.delete_prefix(gone)
    assert store.list("") == ["demo/c1/B1/2/report.json"]


def test_delete_prefix_treats_the_prefix_as_a_directory_not_a_string_prefix(store: ArtefactStore) -> None:
    store.put_bytes("demo/c1/a.txt", b"x")
    store.put_bytes("demo/c10/a.txt", b"x")
    store.delete_prefix("demo/c1")
    assert store.list("") == ["demo/c10/a.txt"]


def test_delete_prefix_naming_a_key_leaves_that_key(store_case: StoreCase) -> None:
    # keys.normalize_prefix: a prefix names a directory, so 'a/report.json' means 'a/report.json/...'.
    store_case.store.put_bytes(KEY, b"x")
    store_case.store.delete_prefix(KEY)
    assert store_case.store.list("") == [KEY]


def test_delete_prefix_of_an_unknown_prefix_changes_nothing(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"x")
    store.delete_prefix("nothing/here")
    assert store.list("") == [KEY]


# -- keys ----------------------------------------------------------------------------------------------------

UNSAFE_KEYS = ["../escape", "a/../../b", "/etc/passwd", "a\\b", "a//b", "", "a/./b", "a/.tmp/b", "a/\nb"]


@pytest.mark.parametrize("key", UNSAFE_KEYS)
def test_unsafe_keys_are_rejected_with_a_hint(store: ArtefactStore, key: str) -> None:
    with pytest.raises(StoreError, match="invalid artefact key") as info:
        store.put_bytes(key, b"x")
    assert info.value.hint


KEYED_OPERATIONS: dict[str, Callable[[ArtefactStore, str], object]] = {
    "get_bytes": lambda s, key: s.get_bytes(key),
    "exists": lambda s, key: s.exists(key),
    "size": lambda s, key: s.size(key),
    "copy to": lambda s, key: s.copy(KEY, key),
    "download_url": lambda s, key: s.download_url(key),
    "upload_url": lambda s, key: s.upload_url(key),
    "list": lambda s, key: s.list(key),
    "delete_prefix": lambda s, key: s.delete_prefix(key),
}


@pytest.mark.parametrize("operation", list(KEYED_OPERATIONS))
def test_every_operation_refuses_a_key_that_climbs_out(store: ArtefactStore, operation: str) -> None:
    store.put_bytes(KEY, b"x")
    with pytest.raises(StoreError, match="invalid artefact key"):
        KEYED_OPERATIONS[operation](store, "../outside")
    assert store.list("") == [KEY]


# -- URLs ----------------------------------------------------------------------------------------------------


def test_download_url_serves_the_object_without_credentials(store: ArtefactStore) -> None:
    store.put_bytes(KEY, b"payload")
    assert _fetch(store.download_url(KEY)) == b"payload"


def test_what_a_job_writes_to_the_upload_url_is_read_through_the_store(store: ArtefactStore) -> None:
    _job_upload(store.upload_url(KEY), b"job output")
    assert store.get_bytes(KEY) == b"job output"


def test_url_for_names_the_key_without_credentials(store: ArtefactStore) -> None:
    url = store.url_for(KEY)
    assert url.endswith(KEY)
    assert "Signature" not in url and "testing" not in url
