"""``mendflow reap`` on the local launcher: a job directory left by a killed run is removed."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from mendflow.cli import main
from mendflow.settings import get_settings


def test_reap_removes_a_leftover_local_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = Path(f"/var/tmp/mendflow-reap-{uuid.uuid4().hex[:8]}")  # its own base: no other job is touched
    leftover = base / "jobs" / "build-0123abcd"
    leftover.mkdir(parents=True)
    monkeypatch.setenv("MENDFLOW_SANDBOX__LOCAL_BASE_DIR", str(base))
    monkeypatch.setenv("MENDFLOW_LAUNCHER", "local")
    monkeypatch.setattr("sys.argv", ["mendflow", "reap", "--older-than", "0"])
    get_settings.cache_clear()  # settings are read once per process: this test's base must be the one used
    try:
        with pytest.raises(SystemExit) as exit_info:
            main()
            raise SystemExit(0)
        assert exit_info.value.code in (0, None)
        assert capsys.readouterr().out == "deleted local job build-0123abcd\n"
        assert not leftover.exists()
    finally:
        get_settings.cache_clear()
        shutil.rmtree(base, ignore_errors=True)
