"""Publishing a build's artefacts: staged files move to their final keys within their size limits."""

from __future__ import annotations

from pathlib import Path

from mendflow.ci.job import MIB, errored_report, publish
from mendflow.contracts import FailReason
from mendflow.settings import LimitsSettings
from mendflow.store.file import FileStore
from tests.fixtures.repos import RepoFactory, local_source


def test_an_artefact_over_its_limit_is_not_kept(tmp_path: Path, make_repo: RepoFactory, mendflow_env: object) -> None:
    store = FileStore(tmp_path / "store")
    store.put_bytes("staging/coverage.json", b"x" * (MIB + 1))
    store.put_bytes("staging/runner.log", b"{}")
    report = errored_report(local_source(make_repo({"a.py": ""})), "B1", 1, FailReason.TESTS, "why", 1.0)
    publish(store, "staging", "final", report, LimitsSettings(job_output_mb=1))
    assert store.list("final") == ["final/report.json", "final/runner.log"]


def test_a_log_over_its_limit_keeps_its_tail(tmp_path: Path, make_repo: RepoFactory, mendflow_env: object) -> None:
    # cockroachdb/apd 3.2.3's `go test -json` made a 74 MB runner.log, which was not kept at all
    store = FileStore(tmp_path / "store")
    store.put_bytes("staging/runner.log", b"h" * MIB + b"t" * 1000)
    report = errored_report(local_source(make_repo({"a.py": ""})), "B1", 1, FailReason.TESTS, "why", 1.0)
    publish(store, "staging", "final", report, LimitsSettings(job_log_mb=1))
    kept = store.get_bytes("final/runner.log")
    said, tail = kept.split(b"\n", 1)
    assert len(kept) <= MIB and tail.endswith(b"t" * 1000) and said.startswith(b"[mendflow: the first ")
