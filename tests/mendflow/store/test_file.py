"""FileStore specifics: the embedded default, a directory on the trusted side."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

from mendflow.errors import StoreError, StoreUnreachableError
from mendflow.store.file import FileStore


def test_check_creates_a_missing_root(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    FileStore(root).check()
    assert root.is_dir()


def test_check_on_a_root_that_cannot_be_a_directory_raises_unreachable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreUnreachableError, match="not usable") as info:
        FileStore(blocker / "artefacts").check()
    assert "\n" not in info.value.one_line()


def test_check_leaves_no_probe_file_behind(tmp_path: Path) -> None:
    FileStore(tmp_path).check()
    assert list(tmp_path.iterdir()) == []


def test_put_writes_the_file_under_root(tmp_path: Path) -> None:
    FileStore(tmp_path).put_bytes("r/c/B1/1/report.json", b"{}")
    assert (tmp_path / "r/c/B1/1/report.json").read_bytes() == b"{}"


def test_crashed_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_args: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr("mendflow.store.file._commit", crash)
    with pytest.raises(StoreError, match="disk gone"):
        FileStore(tmp_path).put_bytes("r/report.json", b"x")
    assert os.listdir(tmp_path / "r") == []


def test_in_flight_temp_files_are_hidden_from_list(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.put_bytes("r/report.json", b"x")
    (tmp_path / "r" / ".tmp-report.json-abc").write_bytes(b"half")
    assert store.list("r") == ["r/report.json"]


def test_upload_url_is_a_file_url_a_launcher_can_write_to(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    url = store.upload_url("r/c/B1/1/out.tar.gz")
    parts = urlsplit(url)
    assert parts.scheme == "file"
    Path(url2pathname(parts.path)).write_bytes(b"job output")
    assert store.get_bytes("r/c/B1/1/out.tar.gz") == b"job output"


def test_delete_of_everything_keeps_the_root(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "root")
    store.put_bytes("a/b", b"x")
    store.delete_prefix("")
    assert (tmp_path / "root").is_dir()
    assert store.list("") == []
