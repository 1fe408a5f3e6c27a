"""Both store backends behind one fixture, so common behaviour is tested once for each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mendflow.store.base import ArtefactStore
from mendflow.store.file import FileStore
from mendflow.store.s3 import S3Store
from tests.fixtures.s3 import S3Bucket, S3Server


class SimulatedCrash(Exception):
    """Raised in place of a store's commit step."""


def _crash(*_args: object, **_kwargs: object) -> None:
    raise SimulatedCrash


@dataclass
class StoreCase:
    store: ArtefactStore
    break_commit: Callable[[pytest.MonkeyPatch], None]  # makes the next commit step raise SimulatedCrash


def file_case(root: Path) -> StoreCase:
    def break_commit(mp: pytest.MonkeyPatch) -> None:
        mp.setattr("mendflow.store.file._commit", _crash)

    return StoreCase(FileStore(root), break_commit)


def s3_case(server: S3Server, bucket: S3Bucket, prefix: str = "ci") -> StoreCase:
    store = S3Store(bucket.name, prefix, server.settings())

    def break_commit(mp: pytest.MonkeyPatch) -> None:
        mp.setattr(store, "_copy", _crash)

    return StoreCase(store, break_commit)


@pytest.fixture(params=["file", "s3"])
def store_case(request: pytest.FixtureRequest, tmp_path: Path) -> StoreCase:
    if request.param == "file":
        return file_case(tmp_path / "artefacts")
    return s3_case(request.getfixturevalue("s3_server"), request.getfixturevalue("s3_bucket"))


@pytest.fixture
def store(store_case: StoreCase) -> ArtefactStore:
    return store_case.store
