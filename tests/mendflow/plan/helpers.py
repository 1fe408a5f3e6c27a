"""Real build reports for repositories made in a test: coverage.py runs the repo's tests, the runner's own
converter turns its JSON into the BuildReport's Coverage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
from mendflow_runner import coverage_report

from mendflow.contracts import BuildReport, BuildStatus, Coverage
from tests.fixtures.repos import commit_files


def measured_report(repo_path: Path, source_dir: str = ".", tests_dir: str = "tests") -> BuildReport:
    """Run ``pytest`` under coverage in the work tree (which must be at HEAD) and report it for HEAD."""
    data = repo_path / ".coverage-data"
    data.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "COVERAGE_FILE": str(data / ".coverage"),
        "PYTHONPATH": str(repo_path / source_dir),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }  # the repo needs no plugin; autoloading ours costs seconds
    env.pop("COVERAGE_PROCESS_START", None)
    run = [
        sys.executable,
        "-m",
        "coverage",
        "run",
        "--branch",
        f"--source={repo_path / source_dir}",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",  # the report stands for the build's own run; a repo's addopts are the runner's business
        tests_dir,
    ]
    subprocess.run(run, cwd=repo_path, env=env, check=True, capture_output=True, timeout=120)
    out = data / "coverage.json"
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", "-q", "-o", str(out)],
        cwd=repo_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    raw = json.loads(out.read_text())
    cov = coverage_report.to_report(raw, repo_path)
    cov["files"] = [f for f in cov["files"] if not f["path"].startswith(tests_dir + "/")]
    sha = str(pygit2.Repository(str(repo_path)).head.target)
    return BuildReport(
        repo=repo_path.name, commit_sha=sha, status=BuildStatus.PASSED, coverage=Coverage.model_validate(cov)
    )


def new_repo(path: Path, files: dict[str, str | bytes | None]) -> Path:
    """Like the ``make_repo`` fixture, for module-scoped fixtures (one commit on 'main')."""
    pygit2.init_repository(str(path), initial_head="main")
    commit_files(path, files, "initial")
    return path


def checkout_branch(repo_path: Path, name: str, create: bool = False) -> None:
    repo = pygit2.Repository(str(repo_path))
    if create:
        repo.branches.local.create(name, repo.head.peel(pygit2.Commit))
    branch = repo.branches.local[name]
    repo.checkout(branch)
