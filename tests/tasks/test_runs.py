"""Run plumbing on a real Prefect server: the merge lock per repo and branch."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from mendflow.source import Source
from tasks.runs import branch_lock
from tests.fixtures.prefect import PrefectServer

pytestmark = pytest.mark.slow


def source(repo_id: str, branch: str) -> Source:
    return Source(location=".", repo_id=repo_id, path=".", commit_sha="0" * 40, branch=branch, archive_key="")


def hold(src: Source, seconds: float, spans: list[tuple[float, float]]) -> None:
    with branch_lock(src):
        entered = time.monotonic()
        time.sleep(seconds)
        spans.append((entered, time.monotonic()))


def run_both(first: Source, second: Source) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    # Each thread runs in a copy of this context: Prefect's settings (the test server's URL) live in contextvars.
    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(hold, s, 3.0, spans)) for s in (first, second)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(spans) == 2
    return sorted(spans)


def test_two_runs_never_merge_into_one_branch_at_once(prefect_server: PrefectServer) -> None:
    (_, first_left), (second_entered, _) = run_both(source("lock/a", "main"), source("lock/a", "main"))
    assert second_entered >= first_left


def test_runs_on_different_branches_merge_side_by_side(prefect_server: PrefectServer) -> None:
    (_, first_left), (second_entered, _) = run_both(source("lock/b", "main"), source("lock/b", "release"))
    assert second_entered < first_left
