"""Artefact stores. Flow code calls ``open_store`` and never imports a backend module directly."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from mendflow.errors import ConfigError
from mendflow.settings import Settings, get_settings
from mendflow.store.base import ArtefactStore

__all__ = ["ArtefactStore", "open_store"]

_URL_HINT = "set MENDFLOW_STORE_URL to file:///absolute/path or s3://bucket/prefix"


def open_store(url: str, settings: Settings | None = None) -> ArtefactStore:
    """The store named by ``url``: ``file:///abs/path`` or ``s3://bucket[/prefix]``."""
    settings = settings or get_settings()
    if settings.s3.bucket_block:
        return _bucket_block_store(settings)
    parts = urlsplit(url)
    if parts.scheme == "file":
        return _file_store(url, parts.netloc, unquote(parts.path))
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ConfigError(f"store URL {url!r} names no bucket", hint=_URL_HINT)
        from mendflow.blocks import s3_credentials
        from mendflow.store.s3 import S3Store  # boto3 is slow to import; load it only when used

        return S3Store(parts.netloc, unquote(parts.path).strip("/"), s3_credentials(settings.s3))
    raise ConfigError(f"unsupported store URL {url!r}", hint=_URL_HINT)


def _bucket_block_store(settings: Settings) -> ArtefactStore:
    if settings.store_url:
        raise ConfigError(
            "both MENDFLOW_STORE_URL and MENDFLOW_S3__BUCKET_BLOCK name a store", hint="set only one of them"
        )
    from mendflow.blocks import s3_bucket
    from mendflow.store.s3 import S3Store

    return S3Store(*s3_bucket(settings.s3))


def _file_store(url: str, host: str, path: str) -> ArtefactStore:
    if host not in ("", "localhost") or not path.startswith("/"):
        raise ConfigError(f"store URL {url!r} is not an absolute local path", hint=_URL_HINT)
    from mendflow.store.file import FileStore

    return FileStore(Path(path))
