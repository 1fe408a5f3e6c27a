"""The temporary Prefect server a flow command starts itself when no Prefect API is configured."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mendflow.cli import server
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.errors import ConfigError
from tests.flows.sample_repos import PASSING

pytestmark = [pytest.mark.slow]


def _without_prefect_api(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    return {**env, **extra}


def _processes_with_env(entry: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and entry.encode() in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def test_a_build_runs_on_its_temporary_server_which_ends_with_it(make_repo, tmp_path: Path) -> None:
    home = f"PREFECT_HOME={tmp_path / 'prefect'}"
    env = _without_prefect_api(PREFECT_HOME=str(tmp_path / "prefect"), MENDFLOW_STATE_DIR=str(tmp_path / "state"))
    cmd = [sys.executable, "-m", "mendflow.cli", "build", str(make_repo(PASSING)), "--json"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert BuildReport.model_validate(json.loads(result.stdout)).status is BuildStatus.PASSED
    assert not _processes_with_env(home), "the temporary server outlived its command"


def test_a_profiles_api_is_used_rather_than_a_temporary_server(make_repo, tmp_path: Path) -> None:
    """Prefect's own settings are only read after its import; the server started before is then not used."""
    home = tmp_path / "prefect"
    home.mkdir()
    unreachable = "http://127.0.0.1:9/api"
    (home / "profiles.toml").write_text(f'active = "team"\n[profiles.team]\nPREFECT_API_URL = "{unreachable}"\n')
    cmd = [sys.executable, "-m", "mendflow.cli", "build", str(make_repo(PASSING))]
    env = _without_prefect_api(PREFECT_HOME=str(home), MENDFLOW_STATE_DIR=str(tmp_path / "state"))
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: the Prefect API at {unreachable} cannot be reached"), result.stderr


@pytest.fixture(autouse=True)
def _own_prefect_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Servers started in this process keep to a database of their own (not a session server's)."""
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))


def test_a_server_that_cannot_start_names_its_cause(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", f"sqlite+aiosqlite:///{tmp_path}/no/such/dir/p.db")
    with pytest.raises(ConfigError, match=r"exited with code \d+: .*OperationalError.*unable to open database"):
        server.TemporaryServer().wait_ready(120)


def test_a_server_that_does_not_answer_in_time_is_stopped() -> None:
    started = server.TemporaryServer()
    with pytest.raises(ConfigError, match="did not answer within 0 s"):
        started.wait_ready(0)
    assert started.process.poll() is not None


def test_a_port_taken_before_the_server_binds_it_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1]])
        free_port = server._free_port
        monkeypatch.setattr(server, "_free_port", lambda: next(ports, None) or free_port())
        started = server.TemporaryServer()
        try:
            started.wait_ready(120)
            assert started.port != taken.getsockname()[1]
        finally:
            started.stop()
