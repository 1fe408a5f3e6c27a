"""open_store: the one way flow code gets a store, chosen by URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.errors import ConfigError
from mendflow.settings import Settings
from mendflow.store import open_store
from mendflow.store.file import FileStore
from mendflow.store.s3 import S3Store


def test_file_url_opens_a_file_store_at_that_path(tmp_path: Path) -> None:
    store = open_store((tmp_path / "my store").as_uri(), Settings())
    assert isinstance(store, FileStore)
    assert store.root == tmp_path / "my store"


def test_s3_url_opens_an_s3_store_with_bucket_and_prefix() -> None:
    store = open_store("s3://artefacts/team/ci/", Settings())
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix) == ("artefacts", "team/ci")


def test_s3_url_passes_the_s3_settings_on() -> None:
    settings = Settings(s3={"endpoint_url": "http://minio.invalid:9000"})
    store = open_store("s3://artefacts", settings)
    assert isinstance(store, S3Store)
    assert store.settings.endpoint_url == "http://minio.invalid:9000"


@pytest.mark.parametrize("url", ["http://example.com/x", "/plain/path", "file://host/abs", "file:relative", "s3:///x"])
def test_unusable_urls_raise_config_error_with_a_hint(url: str) -> None:
    with pytest.raises(ConfigError) as info:
        open_store(url, Settings())
    assert "MENDFLOW_STORE_URL" in (info.value.hint or "")
