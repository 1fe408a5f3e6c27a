"""S3Store specifics, against moto running as a real HTTP server."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from pydantic import SecretStr

from mendflow.errors import StoreUnreachableError
from mendflow.settings import S3Settings
from mendflow.store.s3 import S3Store
from tests.fixtures.s3 import ACCESS_KEY, REGION, SECRET_KEY, S3Bucket, S3Server, free_port

KEY = "demo/abc123/B1/1/out.tar.gz"


def _raw_client(server: S3Server):  # type: ignore[no-untyped-def]
    return boto3.client(
        "s3",
        endpoint_url=server.endpoint_url,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


def _settings_for(endpoint: str) -> S3Settings:
    return S3Settings(
        endpoint_url=endpoint,
        region_name=REGION,
        access_key_id=SecretStr(ACCESS_KEY),
        secret_access_key=SecretStr(SECRET_KEY),
    )


def test_presigned_put_url_signs_only_the_host_header(s3_server: S3Server, s3_bucket: S3Bucket) -> None:
    url = S3Store(s3_bucket.name, "ci", s3_server.settings()).upload_url(KEY)
    query = parse_qs(urlsplit(url).query)
    assert query["X-Amz-SignedHeaders"] == ["host"]
    assert query["X-Amz-Expires"] == [str(s3_server.settings().presign_expiry_sec)]


def test_keys_live_under_the_store_prefix_in_the_bucket(s3_server: S3Server, s3_bucket: S3Bucket) -> None:
    S3Store(s3_bucket.name, "team/ci/", s3_server.settings()).put_bytes(KEY, b"x")
    listed = _raw_client(s3_server).list_objects_v2(Bucket=s3_bucket.name)
    assert [o["Key"] for o in listed["Contents"]] == [f"team/ci/{KEY}"]


def test_successful_put_leaves_no_temporary_key(s3_server: S3Server, s3_bucket: S3Bucket) -> None:
    S3Store(s3_bucket.name, "ci", s3_server.settings()).put_bytes(KEY, b"x")
    listed = _raw_client(s3_server).list_objects_v2(Bucket=s3_bucket.name, Prefix="ci/.tmp/")
    assert listed.get("KeyCount", 0) == 0


def test_url_for_is_an_s3_url(s3_server: S3Server, s3_bucket: S3Bucket) -> None:
    store = S3Store(s3_bucket.name, "ci", s3_server.settings())
    assert store.url_for(KEY) == f"s3://{s3_bucket.name}/ci/{KEY}"


def test_check_on_a_missing_bucket_raises_unreachable(s3_server: S3Server, s3_bucket: S3Bucket) -> None:
    store = S3Store("no-such-bucket-here", "", s3_server.settings())
    with pytest.raises(StoreUnreachableError, match="no-such-bucket-here") as info:
        store.check()
    assert "does not exist" in (info.value.hint or "")


def test_check_on_a_closed_port_fails_fast_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    endpoint = f"http://127.0.0.1:{free_port()}"
    store = S3Store("bucket", "", _settings_for(endpoint))
    started = time.monotonic()
    with pytest.raises(StoreUnreachableError) as info:
        store.check()
    assert time.monotonic() - started < 5
    line = info.value.one_line()
    assert endpoint in line and "\n" not in line and "MENDFLOW_S3__ENDPOINT_URL" in line


def test_reads_on_a_closed_port_raise_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    store = S3Store("bucket", "", _settings_for(f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(StoreUnreachableError):
        store.get_bytes(KEY)
