"""Every store backend behind one fixture, ``store_case``, so ``test_common.py`` runs once per backend.

A new backend is a new ``*_case`` function and one more entry in ``CASES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mendflow.store.base import ArtefactStore
from mendflow.store.file import FileStore
from mendflow.store.s3 import S3Store
from tests.fixtures.s3 import S3Bucket, S3Server

Commit = Callable[..., None]


class SimulatedCrash(Exception):
    """Raised in place of a store's commit step."""


def _crash(*_args: object, **_kwargs: object) -> None:
    raise SimulatedCrash


@dataclass
class StoreCase:
    name: str
    store: ArtefactStore
    replace_commit: Callable[[pytest.MonkeyPatch, Commit], None]  # runs the given step instead of the commit
    unusable: ArtefactStore  # the same backend pointed at a place it cannot use
    unusable_name: str  # what its error must name: the directory, the bucket

    def break_commit(self, mp: pytest.MonkeyPatch) -> None:
        """Makes the next commit step raise SimulatedCrash."""
        self.replace_commit(mp, _crash)


def file_case(tmp_path: Path) -> StoreCase:
    def replace_commit(mp: pytest.MonkeyPatch, step: Commit) -> None:
        mp.setattr("mendflow.store.file._commit", step)

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    return StoreCase("file", FileStore(tmp_path / "artefacts"), replace_commit, FileStore(blocker / "x"), str(blocker))


def s3_case(server: S3Server, bucket: S3Bucket, prefix: str = "ci") -> StoreCase:
    store = S3Store(bucket.name, prefix, server.settings())

    def replace_commit(mp: pytest.MonkeyPatch, step: Commit) -> None:
        mp.setattr(store, "_copy", step)

    missing = "no-such-bucket-here"
    return StoreCase("s3", store, replace_commit, S3Store(missing, prefix, server.settings()), missing)


CASES: dict[str, Callable[[pytest.FixtureRequest, Path], StoreCase]] = {
    "file": lambda _request, tmp_path: file_case(tmp_path),
    "s3": lambda request, _tmp: s3_case(request.getfixturevalue("s3_server"), request.getfixturevalue("s3_bucket")),
}


@pytest.fixture(params=list(CASES))
def store_case(request: pytest.FixtureRequest, tmp_path: Path) -> StoreCase:
    return CASES[request.param](request, tmp_path)


@pytest.fixture
def store(store_case: StoreCase) -> ArtefactStore:
    return store_case.store
