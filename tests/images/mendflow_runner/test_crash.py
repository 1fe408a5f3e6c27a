"""A bug in the runner itself still ends in a report (in-process: the only way to make the runner fail)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from tests.images.mendflow_runner.helpers import RUNNER_DIR


def test_exception_in_a_step_is_errored_runner_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(RUNNER_DIR))
    from mendflow_runner import __main__ as runner

    def explode(self: object) -> bool:
        raise RuntimeError("boom in unpack")

    monkeypatch.setattr(runner.Build, "_unpack", explode)
    source = tmp_path / "src.tar"
    source.write_bytes(b"")
    rc = runner.main(["--source", str(source), "--out", str(tmp_path / "out"), "--commit", "abc"])
    report = BuildReport.model_validate(json.loads((tmp_path / "out" / "report.json").read_text()))
    assert rc == 0
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.RUNNER_CRASH)
    assert report.error_reason == "RuntimeError: boom in unpack"
    assert "Traceback" in (tmp_path / "out" / "runner.log").read_text()
    sys.modules.pop("mendflow_runner.__main__", None)
