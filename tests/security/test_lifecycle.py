"""A run stopped by SIGTERM or SIGINT stops its jobs within 10 s and is recorded Cancelled, not Running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import SLOW_PROJECT, RepoFactory

pytestmark = [pytest.mark.slow]


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _job_pids(cli: subprocess.Popen[bytes]) -> set[int]:
    return {pid for pid in _descendants(cli.pid) if "-m mendflow_runner " in _cmdline(pid)}  # not its relay


def _wait_for_job(cli: subprocess.Popen[bytes], timeout: float = 240) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and cli.poll() is None:
        # the job's tests are running once the runner has a child (pytest under coverage)
        jobs = _job_pids(cli)
        if jobs and any(_descendants(pid) for pid in jobs):
            return jobs
        time.sleep(0.5)
    raise AssertionError("the build job never started")


def _job_dir(pid: int) -> Path:
    """The local launcher's directory of the job whose runner is ``pid`` (it starts in ``<job>/ws``)."""
    return Path(os.readlink(f"/proc/{pid}/cwd")).parent


def _last_run_state(server: PrefectServer) -> str:
    # this CLI's run: a ci-build that started (other tests' deployments leave scheduled runs in the future)
    body = {
        "limit": 1,
        "sort": "START_TIME_DESC",
        "flows": {"name": {"any_": ["ci-build"]}},
        "flow_runs": {"state": {"type": {"not_any_": ["SCHEDULED", "PENDING"]}}},
    }
    runs = httpx.post(f"{server.api_url}/flow_runs/filter", json=body, timeout=10).json()
    return str(runs[0]["state_type"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_jobs_and_cancels_the_run(
    sig: signal.Signals, make_repo: RepoFactory, prefect_server: PrefectServer, tmp_path: Path
) -> None:
    repo = make_repo(SLOW_PROJECT, name="slow")
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "state"), "PREFECT_API_URL": prefect_server.api_url}
    cli = subprocess.Popen([sys.executable, "-m", "mendflow.cli", "build", str(repo)], env=env)
    try:
        jobs = _wait_for_job(cli)
        job_dirs = {_job_dir(pid) for pid in jobs}
        assert job_dirs and all(d.parent.name == "jobs" for d in job_dirs), job_dirs
        cli.send_signal(sig)
        cli.wait(timeout=10)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in jobs):
            time.sleep(0.1)
        assert not [p for p in jobs if Path(f"/proc/{p}").exists()], "job processes outlived the run"
        assert not [d for d in job_dirs if d.exists()], "job directories outlived the run"
        assert _last_run_state(prefect_server) == "CANCELLED"
    finally:
        if cli.poll() is None:
            cli.kill()


def _temporary_servers(cli: subprocess.Popen[bytes]) -> set[int]:
    return {pid for pid in _descendants(cli.pid) if "prefect.server.api.server:create_app" in _cmdline(pid)}


def test_the_temporary_prefect_server_dies_with_a_killed_command(make_repo: RepoFactory, tmp_path: Path) -> None:
    repo = make_repo(SLOW_PROJECT, name="slow")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(MENDFLOW_STATE_DIR=str(tmp_path / "state"), PREFECT_HOME=str(tmp_path / "prefect"))
    cli = subprocess.Popen([sys.executable, "-m", "mendflow.cli", "build", str(repo)], env=env)
    try:
        _wait_for_job(cli)
        servers = _temporary_servers(cli)
        assert servers, "no temporary server was started"
        cli.kill()
        cli.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in servers):
            time.sleep(0.2)
        assert not [p for p in servers if Path(f"/proc/{p}").exists()], "the temporary server outlived its command"
    finally:
        if cli.poll() is None:
            cli.kill()
        # What the SIGKILLed command left of its job (processes, directory, its uid's claim), as `mendflow reap`
        # would later: gone before the next test, not sleeping out its 300 s beside it.
        LocalLauncher(Settings()).reap(older_than_sec=0)
