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
    store.put_bytes("staging/coverage.json", b"{}")
    store.put_bytes("staging/runner.log", b"x" * (MIB + 1))
    report = errored_report(local_source(make_repo({"a.py": ""})), "B1", 1, FailReason.TESTS, "why", 1.0)
    publish(store, "staging", "final", report, LimitsSettings(job_log_mb=1))
    assert store.list("final") == ["final/coverage.json", "final/report.json"]
