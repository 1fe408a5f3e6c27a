"""Fetch and unpack the source snapshot, refusing anything that would land outside the workspace."""

from __future__ import annotations

import shutil
import tarfile
import urllib.request
from pathlib import Path, PurePosixPath

FETCH_TIMEOUT_SEC = 120


class UnsafeArchiveError(Exception):
    """The snapshot holds a member that would escape the workspace, or a kind of file we do not unpack."""


def fetch(source: str, dest_dir: Path) -> Path:
    """A local path is used in place; an http(s) URL (e.g. a presigned GET) is downloaded first."""
    if not source.startswith(("http://", "https://")):
        path = Path(source.removeprefix("file://"))
        if not path.is_file():
            raise FileNotFoundError(f"source snapshot {source} does not exist")
        return path
    target = dest_dir / "source.tar"
    with urllib.request.urlopen(source, timeout=FETCH_TIMEOUT_SEC) as resp, target.open("wb") as fh:
        shutil.copyfileobj(resp, fh)
    return target


def _check_member(m: tarfile.TarInfo) -> None:
    name = PurePosixPath(m.name)
    if name.is_absolute() or ".." in name.parts:
        raise UnsafeArchiveError(f"archive member {m.name!r} points outside the workspace")
    if m.issym() or m.islnk():
        target = PurePosixPath(m.linkname)
        resolved = target if m.islnk() else name.parent / target
        if target.is_absolute() or _escapes(resolved):
            raise UnsafeArchiveError(f"archive link {m.name!r} -> {m.linkname!r} escapes the workspace")
    elif not (m.isfile() or m.isdir()):
        raise UnsafeArchiveError(f"archive member {m.name!r} is a device or fifo")


def _escapes(path: PurePosixPath) -> bool:
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else 0 if part in ("", ".") else 1
        if depth < 0:
            return True
    return False


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack into ``dest`` (created); member names are relative to the repository root (``git archive``)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:*") as tf:
        members = tf.getmembers()
        for m in members:
            _check_member(m)
        if hasattr(tarfile, "data_filter"):
            # The 'data' filter re-checks paths and links and drops setuid bits and ownership.
            tf.extractall(dest, members=members, filter="data")
        else:  # Python < 3.11.4 (Debian 12's 3.11.2): our checks above, plus no special mode bits
            for m in members:
                m.mode &= 0o755
                m.uid = m.gid = 0
                m.uname = m.gname = ""
            tf.extractall(dest, members=members)
    return dest
