"""Artefacts as files under one local directory: the embedded default store."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

from mendflow.errors import ArtefactNotFoundError, StoreError, StoreUnreachableError
from mendflow.store.base import ArtefactStore
from mendflow.store.keys import TMP_MARKER, normalize_prefix, validate_key


class FileStore(ArtefactStore):
    """Keys map to paths under ``root``; writes go to a temp file in the same directory, then os.replace."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().absolute()
        self.url = self.root.as_uri()

    def check(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # os.access lies for root, so prove writability with a real temp file.
            with tempfile.TemporaryFile(dir=self.root, prefix=TMP_MARKER):
                pass
        except OSError as exc:
            raise StoreUnreachableError(
                f"file store {self.root} is not usable: {exc.strerror or exc}",
                hint="point MENDFLOW_STORE_URL at a writable directory or fix its permissions",
            ) from exc

    def put_bytes(self, key: str, data: bytes) -> str:
        return self._put(key, io.BytesIO(data))

    def put_file(self, key: str, path: Path) -> str:
        try:
            with path.open("rb") as src:
                return self._put(key, src)
        except FileNotFoundError as exc:
            raise StoreError(f"cannot write {key!r}: {path} is gone", hint="write the file before storing it") from exc

    def _put(self, key: str, src: BinaryIO) -> str:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write_stream(target, src)
        except OSError as exc:
            raise StoreError(
                f"cannot write {key!r} to {self.root}: {exc.strerror or exc}",
                hint="check free space and permissions of the store directory",
            ) from exc
        return self.url_for(key)

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise ArtefactNotFoundError(
                f"artefact {key!r} not found in {self.url}",
                hint="check the repo/commit/stage/attempt in the key, or rerun the stage that writes it",
            ) from exc

    def get_tail(self, key: str, max_bytes: int) -> bytes:
        start = max(self.size(key) - max_bytes, 0)
        with self._path(key).open("rb") as fh:
            fh.seek(start)
            return fh.read(max_bytes)

    def size(self, key: str) -> int:
        try:
            stat = self._path(key).stat()
            if not S_ISREG(stat.st_mode):  # a directory is a prefix of keys, not an artefact
                raise FileNotFoundError(key)
            return stat.st_size
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise ArtefactNotFoundError(
                f"artefact {key!r} not found in {self.url}",
                hint="check the repo/commit/stage/attempt in the key, or rerun the stage that writes it",
            ) from exc

    def copy(self, source_key: str, dest_key: str) -> str:
        self.size(source_key)  # a missing source is ArtefactNotFoundError, like the other backends
        return self.put_file(dest_key, self._path(source_key))

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        base = self.root / normalize_prefix(prefix)
        if not base.is_dir():
            return []
        keys = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(TMP_MARKER)]
            rel_dir = Path(dirpath).relative_to(self.root)
            keys += [(rel_dir / f).as_posix() for f in filenames if not f.startswith(TMP_MARKER)]
        return sorted(keys)

    def delete_prefix(self, prefix: str) -> None:
        norm = normalize_prefix(prefix)
        if not norm:
            # Keep the root itself: it may be a mount point or carry chosen permissions.
            for child in self.root.iterdir() if self.root.is_dir() else []:
                _remove(child)
            return
        if (self.root / norm).is_dir():  # a prefix names a directory; an artefact's own key is no prefix
            _remove(self.root / norm)

    def download_url(self, key: str) -> str:
        return self.url_for(key)

    def upload_url(self, key: str) -> str:
        # The local launcher copies the job's output here; make sure the directory exists for it.
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.as_uri()

    def url_for(self, key: str) -> str:
        return self._path(key).as_uri()

    def _path(self, key: str) -> Path:
        return self.root / validate_key(key)


def _atomic_write_stream(target: Path, src: BinaryIO) -> None:
    """Temp file in the same directory (same filesystem, so os.replace is atomic), fsync, then rename."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f"{TMP_MARKER}-{target.name}-")
    try:
        with os.fdopen(fd, "wb") as fh:
            shutil.copyfileobj(src, fh, 1024 * 1024)
            fh.flush()
            os.fsync(fh.fileno())
        _commit(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)


def _commit(tmp_name: str, target: Path) -> None:
    """The commit step: rename over the target, atomic on POSIX within one filesystem."""
    os.replace(tmp_name, target)


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself; best effort, some filesystems refuse fsync on directories."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
