"""The artefact store interface: flat keys, built by ``mendflow/keys.py`` (``repos/<owner>/<name>/<sha>/…``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from mendflow.errors import TooLargeError


class ArtefactStore(ABC):
    """Every write is atomic per key (temporary key, then commit); readers never see half an object."""

    url: str

    @abstractmethod
    def check(self) -> None:
        """Raise StoreUnreachableError with advice when the store cannot be used."""

    @abstractmethod
    def put_bytes(self, key: str, data: bytes) -> str:
        """Write ``data`` at ``key`` atomically; return the artefact's URL."""

    def put_file(self, key: str, path: Path) -> str:
        """Write the file at ``path`` to ``key`` atomically, streamed; return the artefact's URL.

        Backends override this to stream; the fallback reads the file whole.
        """
        return self.put_bytes(key, path.read_bytes())

    @abstractmethod
    def get_bytes(self, key: str) -> bytes:
        """Read ``key``; raise ArtefactNotFoundError when absent."""

    def get_capped(self, key: str, max_bytes: int) -> bytes:
        """Read ``key`` only when it holds at most ``max_bytes``: for what a job wrote, which may be anything."""
        size = self.size(key)
        if size > max_bytes:
            raise TooLargeError(
                f"{key.rsplit('/', 1)[-1]} is {size} bytes, over the {max_bytes} a job may return",
                hint="raise MENDFLOW_LIMITS__JOB_OUTPUT_MB if the repository really needs it",
            )
        return self.get_bytes(key)

    @abstractmethod
    def get_tail(self, key: str, max_bytes: int) -> bytes:
        """The last ``max_bytes`` of ``key`` (all of it when shorter), without reading the rest; raise
        ArtefactNotFoundError when absent."""

    @abstractmethod
    def size(self, key: str) -> int:
        """Bytes stored at ``key``; raise ArtefactNotFoundError when absent."""

    @abstractmethod
    def copy(self, source_key: str, dest_key: str) -> str:
        """Copy one key to another atomically, without passing the bytes through memory; return its URL."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Keys under ``prefix``, sorted."""

    @abstractmethod
    def delete_prefix(self, prefix: str) -> None: ...

    @abstractmethod
    def download_url(self, key: str) -> str:
        """A URL a job may GET without credentials (file:// for the file store, presigned for S3)."""

    @abstractmethod
    def upload_url(self, key: str) -> str:
        """A URL a job may PUT to without credentials."""

    @abstractmethod
    def url_for(self, key: str) -> str:
        """The canonical, credential-free address of ``key`` (shown in reports)."""
