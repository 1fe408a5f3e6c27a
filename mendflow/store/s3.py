"""Artefacts in an S3 bucket (AWS or a MinIO-style endpoint); jobs only ever get presigned URLs.

Atomicity: a single S3 PUT is already atomic (readers see the old object or the new one, never half).
We still write to ``<prefix>/.tmp/<uuid>`` and server-side copy to the final key so that a failure while
the body is being sent can never leave anything at the final key, and so that the temp write is where
retries happen. Publishing a *set* of objects is not atomic in S3; flows follow the report-last rule:
artefacts first, the report (which names them) last, so a reader that sees the report sees everything.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from mendflow.errors import ArtefactNotFoundError, StoreError, StoreUnreachableError
from mendflow.settings import S3Settings
from mendflow.store.base import ArtefactStore
from mendflow.store.keys import TMP_MARKER, normalize_prefix, validate_key

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Small timeouts and few retries: an unreachable store must fail in seconds, not minutes.
CONNECT_TIMEOUT_SEC = 2.0
READ_TIMEOUT_SEC = 30.0
MAX_ATTEMPTS = 2
_DELETE_BATCH = 1000  # DeleteObjects accepts at most 1000 keys
_CONNECT_ADVICE = "cannot connect: check MENDFLOW_S3__ENDPOINT_URL and the network"
_NOT_FOUND_CODES = {"404", "NoSuchKey", "NotFound"}


class S3Store(ArtefactStore):
    def __init__(self, bucket: str, prefix: str, settings: S3Settings) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.settings = settings
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._client = _make_client(settings)

    def check(self) -> None:
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            raise self._unreachable(_check_advice(_code(exc)), exc) from exc
        except NoCredentialsError as exc:
            advice = "no credentials: set MENDFLOW_S3__ACCESS_KEY_ID/SECRET_ACCESS_KEY or an AWS profile"
            raise self._unreachable(advice, exc) from exc
        except BotoCoreError as exc:
            raise self._unreachable(_CONNECT_ADVICE, exc) from exc

    def put_bytes(self, key: str, data: bytes) -> str:
        final = self._full(key)
        tmp = self._full_tmp()
        with self._errors(key):
            self._client.put_object(Bucket=self.bucket, Key=tmp, Body=data)
            try:
                self._copy(tmp, final)
            finally:
                self._client.delete_object(Bucket=self.bucket, Key=tmp)
        return self.url_for(key)

    def get_bytes(self, key: str) -> bytes:
        with self._errors(key):
            body: bytes = self._client.get_object(Bucket=self.bucket, Key=self._full(key))["Body"].read()
            return body

    def get_tail(self, key: str, max_bytes: int) -> bytes:
        if max_bytes <= 0 or self.size(key) == 0:  # S3 refuses a suffix range of an empty object (416)
            return b""
        with self._errors(key):
            ranged = self._client.get_object(Bucket=self.bucket, Key=self._full(key), Range=f"bytes=-{max_bytes}")
            body: bytes = ranged["Body"].read()
            return body

    def put_file(self, key: str, path: Path) -> str:
        tmp = self._full_tmp()
        with self._errors(key):
            self._client.upload_file(str(path), self.bucket, tmp)  # multipart, streamed from disk
            try:
                self._copy(tmp, self._full(key))
            finally:
                self._client.delete_object(Bucket=self.bucket, Key=tmp)
        return self.url_for(key)

    def size(self, key: str) -> int:
        with self._errors(key):
            length: int = self._client.head_object(Bucket=self.bucket, Key=self._full(key))["ContentLength"]
            return length

    def copy(self, source_key: str, dest_key: str) -> str:
        with self._errors(source_key):
            self._copy(self._full(source_key), self._full(dest_key))
        return self.url_for(dest_key)

    def exists(self, key: str) -> bool:
        try:
            with self._errors(key):
                self._client.head_object(Bucket=self.bucket, Key=self._full(key))
        except ArtefactNotFoundError:
            return False
        return True

    def list(self, prefix: str) -> list[str]:
        strip = len(self._full_prefix(""))
        keys = [k[strip:] for k in self._iter_keys(self._full_prefix(prefix))]
        return sorted(k for k in keys if not k.startswith(TMP_MARKER + "/"))

    def delete_prefix(self, prefix: str) -> None:
        keys = list(self._iter_keys(self._full_prefix(prefix)))
        with self._errors(prefix):
            for start in range(0, len(keys), _DELETE_BATCH):
                batch = keys[start : start + _DELETE_BATCH]
                self._client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True}
                )

    def download_url(self, key: str) -> str:
        return self._presign("get_object", key)

    def upload_url(self, key: str) -> str:
        # No ContentType in Params: then no header is signed and a bare urllib PUT is accepted.
        return self._presign("put_object", key)

    def url_for(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._full(key)}"

    # -- internals ------------------------------------------------------------------------------------

    def _copy(self, source_key: str, dest_key: str) -> None:
        """The commit step: server-side copy, so the final key only ever holds a complete object."""
        self._client.copy_object(
            Bucket=self.bucket, Key=dest_key, CopySource={"Bucket": self.bucket, "Key": source_key}
        )

    def _presign(self, method: str, key: str) -> str:
        params = {"Bucket": self.bucket, "Key": self._full(key)}
        with self._errors(key):
            url: str = self._client.generate_presigned_url(
                method, Params=params, ExpiresIn=self.settings.presign_expiry_sec
            )
            return url

    def _iter_keys(self, full_prefix: str) -> Iterator[str]:
        with self._errors(full_prefix):
            paginator = self._client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=full_prefix):
                yield from (obj["Key"] for obj in page.get("Contents", []))

    def _full(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _full_prefix(self, prefix: str) -> str:
        norm = normalize_prefix(prefix)
        return f"{self.prefix}/{norm}" if self.prefix else norm

    def _full_tmp(self) -> str:
        return self._full_prefix("") + f"{TMP_MARKER}/{uuid.uuid4().hex}"

    @contextmanager
    def _errors(self, key: str) -> Iterator[None]:
        """Turn botocore's exceptions into mendflow's, keeping the original as the cause."""
        try:
            yield
        except ClientError as exc:
            if _code(exc) in _NOT_FOUND_CODES:
                raise ArtefactNotFoundError(
                    f"artefact {key!r} not found in {self.url}",
                    hint="check the repo/commit/stage/attempt in the key, or rerun the stage that writes it",
                ) from exc
            if _code(exc) in {"403", "AccessDenied", "NoSuchBucket", "InvalidAccessKeyId"}:
                raise self._unreachable(_check_advice(_code(exc)), exc) from exc
            hint = "retry; if it persists check the store"
            raise StoreError(f"S3 request for {key!r} failed: {_short(exc)}", hint=hint) from exc
        except BotoCoreError as exc:
            raise self._unreachable(_CONNECT_ADVICE, exc) from exc

    def _unreachable(self, advice: str, exc: Exception) -> StoreUnreachableError:
        endpoint = self.settings.endpoint_url or "AWS"
        return StoreUnreachableError(f"S3 store {self.url} at {endpoint} is unusable: {_short(exc)}", hint=advice)


def _make_client(settings: S3Settings) -> S3Client:
    config = Config(
        connect_timeout=CONNECT_TIMEOUT_SEC,
        read_timeout=READ_TIMEOUT_SEC,
        retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        signature_version="s3v4",
        # MinIO-style endpoints rarely have wildcard DNS for virtual-host buckets.
        s3={"addressing_style": "path"} if settings.endpoint_url else None,
        # boto3's default CRC checksums on every upload break multipart uploads on S3-compatible stores
        # (MinIO, Ceph, moto) whose composite checksums differ; S3's own Content-MD5/ETag checks remain.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    key_id, secret = settings.access_key_id, settings.secret_access_key
    # None for both leaves boto3's default chain in charge (env, profile, instance role, IRSA).
    return boto3.session.Session().client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region_name,
        config=config,
        aws_access_key_id=key_id.get_secret_value() if key_id and secret else None,
        aws_secret_access_key=secret.get_secret_value() if key_id and secret else None,
    )


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _check_advice(code: str) -> str:
    if code in {"404", "NoSuchBucket", "NotFound"}:
        return "the bucket does not exist: create it or fix the bucket in MENDFLOW_STORE_URL"
    if code in {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"}:
        return "access denied: check MENDFLOW_S3__ACCESS_KEY_ID/SECRET_ACCESS_KEY and the bucket policy"
    return "check MENDFLOW_S3__ENDPOINT_URL, the bucket name and the credentials"


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())
