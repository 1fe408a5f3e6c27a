"""An oversize repository is refused with one line and exit 2, and the trusted process never holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import SIGNATURE, RepoFactory
from tests.security.hostile import repo_files

pytestmark = [pytest.mark.slow]

MIB = 1024 * 1024
# Runs `mendflow <args>` as its only child and prints that child's peak RSS (KiB) last, keeping its exit code.
MEASURED = """
import resource, subprocess, sys
code = subprocess.run([sys.executable, "-m", "mendflow.cli", *sys.argv[1:]]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(code)
"""


def _repo_with_blob(path: Path, size: int) -> Path:
    """A repository whose one commit holds a ``size``-byte file (zeros: cheap on disk, huge once read)."""
    blob = path.parent / f"{path.name}.bin"
    with blob.open("wb") as f:
        f.truncate(size)
    repo = pygit2.init_repository(str(path), initial_head="main")
    builder = repo.TreeBuilder()
    builder.insert("huge.bin", repo.create_blob_fromdisk(str(blob)), pygit2.GIT_FILEMODE_BLOB)
    repo.create_commit("HEAD", SIGNATURE, SIGNATURE, "huge", builder.write(), [])
    blob.unlink()
    return path


def test_a_600_mb_repository_is_refused_in_one_line_under_500_mb(tmp_path: Path, prefect_server: PrefectServer) -> None:
    repo = _repo_with_blob(tmp_path / "huge", 600 * MIB)
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "state"), "PREFECT_API_URL": prefect_server.api_url}
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, "build", str(repo)], env=env, capture_output=True, text=True, timeout=600
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1 and "huge.bin" in errors[0], done.stderr
    assert int(done.stdout.split()[-1]) < 500 * 1024  # KiB


def test_a_repository_over_a_configured_limit_names_the_setting(tmp_path: Path, prefect_server: PrefectServer) -> None:
    repo = _repo_with_blob(tmp_path / "big", 3 * MIB)
    env = {
        **os.environ,
        "MENDFLOW_STATE_DIR": str(tmp_path / "state"),
        "PREFECT_API_URL": prefect_server.api_url,
        "MENDFLOW_LIMITS__SNAPSHOT_FILE_MB": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "build", str(repo)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 2 and "MENDFLOW_LIMITS__SNAPSHOT_FILE_MB" in done.stderr


# Pads the runner's report.json past the limit once it is written.
PAD = """
def tamper(path):
    text = open(path).read()
    if len(text) < 2_000_000:
        with open(path + ".p", "w") as f:
            f.write(text + " " * 2_100_000)
        os.replace(path + ".p", path)
"""


def test_an_oversize_job_report_errors_the_build_in_one_line(
    tmp_path: Path, prefect_server: PrefectServer, make_repo: RepoFactory
) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "pad"\nversion = "0"\n',
        "pad/__init__.py": "",
        "tests/test_pad.py": "def test_ok() -> None:\n    assert True\n",
        **repo_files("mendflow_runner", "report.json", PAD),
    }
    env = {
        **os.environ,
        "MENDFLOW_STATE_DIR": str(tmp_path / "state"),
        "PREFECT_API_URL": prefect_server.api_url,
        "MENDFLOW_LIMITS__JOB_OUTPUT_MB": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "build", str(make_repo(files, name="pad")), "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = BuildReport.model_validate_json(done.stdout)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT), done.stderr
    assert "report.json is" in (report.error_reason or "") and "MENDFLOW_LIMITS__JOB_OUTPUT_MB" in (
        report.error_reason or ""
    )
