"""Snapshot size limits: a huge repository is refused from object headers, a large one is streamed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from mendflow.errors import TooLargeError
from mendflow.snapshot import SnapshotLimits, archive_to, resolve_commit, resolve_repo
from tests.fixtures.repos import SIGNATURE, RepoFactory

MIB = 1024 * 1024

# Archives a commit to a file in a fresh interpreter and prints its peak RSS and outcome, so the trusted
# process's memory is measured alone.
ARCHIVE_IN_CHILD = """
import json, resource, sys
from mendflow.errors import TooLargeError
from mendflow.snapshot import archive_to, resolve_commit, resolve_repo
repo = resolve_repo(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with open(sys.argv[2], "wb") as out:
        archive_to(repo, resolve_commit(repo)[0], out)
    outcome = "archived"
except TooLargeError as exc:
    outcome = str(exc)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "growth_mb": (peak - base) / 1024}))
"""


def _commit_blobs(path: Path, blobs: dict[str, Path]) -> None:
    """One commit holding each file in ``blobs``, written to the object store from disk (streamed by libgit2)."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    builder = repo.TreeBuilder()
    for name, source in blobs.items():
        builder.insert(name, repo.create_blob_fromdisk(str(source)), pygit2.GIT_FILEMODE_BLOB)
    repo.create_commit("HEAD", SIGNATURE, SIGNATURE, "big", builder.write(), [])


def _archive_in_child(repo: Path, out: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", ARCHIVE_IN_CHILD, str(repo), str(out)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def test_a_file_over_the_file_limit_is_refused_before_anything_is_written(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo({"big.bin": b"x" * 2048, "small.txt": "ok\n"}))
    out = io.BytesIO()
    with pytest.raises(TooLargeError, match=r"big\.bin"):
        archive_to(repo, resolve_commit(repo)[0], out, SnapshotLimits(max_bytes=MIB, max_file_bytes=1024))
    assert out.getvalue() == b""


def test_a_tree_over_the_total_limit_is_refused(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo({f"f{i}.txt": "y" * 600 for i in range(4)}))
    with pytest.raises(TooLargeError, match="a snapshot may hold"):
        archive_to(repo, resolve_commit(repo)[0], io.BytesIO(), SnapshotLimits(max_bytes=2000, max_file_bytes=1000))


@pytest.mark.slow
def test_a_600_mb_blob_is_refused_without_reading_it(tmp_path: Path) -> None:
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as f:
        f.truncate(600 * MIB)
    _commit_blobs(tmp_path / "repo", {"huge.bin": huge})
    huge.unlink()
    seen = _archive_in_child(tmp_path / "repo", tmp_path / "out.tar.gz")
    assert "huge.bin" in str(seen["outcome"])
    assert float(str(seen["growth_mb"])) < 50


@pytest.mark.slow
def test_a_large_tree_is_streamed_not_held(tmp_path: Path) -> None:
    chunks = {}
    for i in range(12):  # 12 files of 16 MiB of incompressible bytes: an in-memory archive would hold ~192 MiB
        chunks[f"data{i}.bin"] = tmp_path / f"data{i}.bin"
        chunks[f"data{i}.bin"].write_bytes(os.urandom(16 * MIB))
    _commit_blobs(tmp_path / "repo", chunks)
    seen = _archive_in_child(tmp_path / "repo", tmp_path / "out.tar.gz")
    assert seen["outcome"] == "archived"
    assert (tmp_path / "out.tar.gz").stat().st_size > 190 * MIB
    assert float(str(seen["growth_mb"])) < 100
