"""FileStore specifics: the embedded default, a directory on the trusted side."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mendflow.errors import StoreError
from mendflow.store.file import FileStore


def test_check_creates_a_missing_root(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    FileStore(root).check()
    assert root.is_dir()


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


def test_delete_of_everything_keeps_the_root(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "root")
    store.put_bytes("a/b", b"x")
    store.delete_prefix("")
    assert (tmp_path / "root").is_dir()
    assert store.list("") == []
