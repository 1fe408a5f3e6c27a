"""``mendflow build`` from a shell: exit codes and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from mendflow.contracts import BuildReport, BuildStatus
from tests.fixtures.s3 import free_port
from tests.flows.sample_repos import FAILING, PASSING


def mendflow(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert result.returncode == code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert all(word in lines[0] for word in words), lines[0]


def test_unknown_path_is_refused(tmp_path: Path) -> None:
    assert_one_line_error(mendflow("build", str(tmp_path / "nowhere")), 2, "no such path")


def test_a_directory_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    assert_one_line_error(mendflow("build", str(tmp_path)), 2, "not a git repository")


def test_a_missing_commit_is_refused(make_repo) -> None:
    repo = make_repo(PASSING)
    assert_one_line_error(mendflow("build", str(repo), "--commit", "deadbeef"), 2, "deadbeef")


def test_an_unreachable_store_is_refused_before_anything_runs(make_repo, tmp_path: Path) -> None:
    env = {
        "MENDFLOW_STATE_DIR": str(tmp_path / "state"),
        "MENDFLOW_STORE_URL": "s3://bucket/ci",
        "MENDFLOW_S3__ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "MENDFLOW_S3__ACCESS_KEY_ID": "x",
        "MENDFLOW_S3__SECRET_ACCESS_KEY": "y",
    }
    result = mendflow("build", str(make_repo(PASSING)), env=env)
    assert_one_line_error(result, 69, "bucket")  # no verdict: never FAILED's 1
    assert not (tmp_path / "state").exists()  # nothing half-written


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server")
@pytest.mark.parametrize(
    ("files", "code", "status"), [(PASSING, 0, BuildStatus.PASSED), (FAILING, 1, BuildStatus.FAILED)]
)
def test_exit_code_follows_the_status(make_repo, tmp_path: Path, files, code, status) -> None:
    result = mendflow("build", str(make_repo(files)), "--json", env={"MENDFLOW_STATE_DIR": str(tmp_path / "s")})
    assert result.returncode == code, result.stderr[-2000:]
    assert BuildReport.model_validate(json.loads(result.stdout)).status is status


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return found


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server")
def test_a_terminated_build_leaves_no_process_of_its_job(make_repo, tmp_path: Path) -> None:
    """SIGTERM (a CI runner cancelling) unwinds through the launcher's cleanup: a test's own child dies too."""
    marker = f"mendflow-terminated-{uuid.uuid4().hex}"
    sleeper = f"import time; time.sleep(600)  # {marker}"
    waits = (
        "import subprocess, sys\n\n\n"
        f"def test_waits() -> None:\n    subprocess.run([sys.executable, '-c', {sleeper!r}])\n"
    )
    repo = make_repo({**PASSING, "tests/test_waits.py": waits})
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "s")}
    build = subprocess.Popen(
        [sys.executable, "-m", "mendflow.cli", "build", str(repo)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: bool(processes_with(marker)), 300), "the job's test never started"
        build.send_signal(signal.SIGTERM)
        assert build.wait(timeout=120) != 0
        assert wait_until(lambda: not processes_with(marker), 10)
    finally:
        build.kill()
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
