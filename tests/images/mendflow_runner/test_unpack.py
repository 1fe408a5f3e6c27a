"""The snapshot is unpacked only when every member stays inside the workspace."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest

from tests.images.mendflow_runner.helpers import RUNNER_DIR

sys.path.insert(0, str(RUNNER_DIR))
from mendflow_runner.unpack import UnsafeArchiveError, unpack


def _tar(path: Path, *members: tarfile.TarInfo) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            tf.addfile(m, io.BytesIO(b"x" * m.size) if m.isfile() else None)
    return path


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_plain_archive_unpacks_into_dest(tmp_path: Path) -> None:
    root = unpack(_tar(tmp_path / "a.tgz", _file("pkg/a.py"), _link("pkg/b.py", "a.py")), tmp_path / "ws")
    assert (root / "pkg" / "a.py").read_text() == "x" and (root / "pkg" / "b.py").is_symlink()


@pytest.mark.parametrize(
    "member",
    [
        _file("/etc/evil"),
        _file("../evil"),
        _file("pkg/../../evil"),
        _link("l", "/etc/passwd"),
        _link("pkg/l", "../../etc"),
        _link("h", "../outside", tarfile.LNKTYPE),
    ],
    ids=["absolute", "dotdot", "nested-dotdot", "abs-symlink", "escaping-symlink", "escaping-hardlink"],
)
def test_escaping_member_is_refused_and_nothing_written(tmp_path: Path, member: tarfile.TarInfo) -> None:
    archive = _tar(tmp_path / "a.tgz", _file("ok.py"), member)
    with pytest.raises(UnsafeArchiveError):
        unpack(archive, tmp_path / "ws")
    assert list((tmp_path / "ws").iterdir()) == []
