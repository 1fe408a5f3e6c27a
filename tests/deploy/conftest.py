"""Real parts for the deployment tests: `prefect deploy` of this checkout's prefect.yaml, a process worker,
`mendflow webhook` as a subprocess, and a git repository with a small passing Python project.

The process deployments `git_clone` mendflow's code on the worker, so the tests deploy them from a git
snapshot of this working tree (``code_snapshot``): workers run the code under test, not the last commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import pygit2
import pytest
import yaml
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.client.schemas.objects import FlowRun

from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings
from tests.fixtures.prefect import PrefectServer, free_port, stop
from tests.fixtures.repos import commit_files

ROOT = Path(__file__).resolve().parents[2]
PREFECT_YAML = ROOT / "prefect.yaml"
HAS_PIPELINE = (ROOT / "flows" / "pipeline.py").exists()
HAS_REINDEX = (ROOT / "flows" / "reindex.py").exists()
# The push trigger lives on the pipeline; until flows/pipeline.py exists the same trigger drives ci_build,
# whose parameters (repo, commit, branch) have the same names.
TARGET = "self-healing-pipeline/default" if HAS_PIPELINE else "ci-build/default"

GITHUB_SECRET = "gh-secret"
GITLAB_TOKEN = "gl-token"
GIT_SECRET = "hook-secret"
MAX_BODY = 64 * 1024

PROJECT = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc/__init__.py": '"""Tiny calculator."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n',
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n",
}

T = TypeVar("T")


def poll(what: str, probe: Callable[[], T | None], timeout: float = 90, every: float = 1.0) -> T:
    """Events reach automations asynchronously: wait for ``probe`` to return something, up to a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (value := probe()) is not None:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def prefect_cli(
    server: PrefectServer, *args: str, timeout: float = 300, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "prefect", "--no-prompt", *args],
        cwd=cwd,
        env={**os.environ, **server.env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"prefect {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


def pipeline_trigger() -> dict[str, Any]:
    config = yaml.safe_load(PREFECT_YAML.read_text())
    pipeline = next(d for d in config["deployments"] if d["entrypoint"].endswith(":self_healing_pipeline"))
    return dict(pipeline["triggers"][0])


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {result.stderr[-2000:]}")
    return result.stdout


def code_snapshot(dest: Path, branch: str = "main") -> Path:
    """A git repository holding this working tree as one commit on ``branch`` (tracked and untracked files
    that .gitignore lets through): what a worker clones, uncommitted changes included."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    dest.mkdir(parents=True)
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():  # a tracked file deleted in the working tree is listed but gone
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    git(dest, "init", "-q", "-b", branch)
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=mendflow-tests", "-c", "user.email=tests@mendflow.invalid", "commit", "-qm", "code")
    return dest


@dataclass
class Deployed:
    target_id: UUID
    deploy_seconds: float
    code_repo: Path  # what the process deployments clone


def create_pools(server: PrefectServer) -> None:
    prefect_cli(server, "work-pool", "create", "mendflow-process", "--type", "process", "--overwrite")
    template = ROOT / "k8s" / "prefect" / "base-job-template.json"
    prefect_cli(
        server,
        *("work-pool", "create", "mendflow-kubernetes", "--type", "kubernetes", "--overwrite"),
        *("--base-job-template", str(template)),
    )


@pytest.fixture(scope="module")
def deployed(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Deployed:
    """Pools created, then this checkout's prefect.yaml deployed, cloning from a snapshot of the working tree."""
    code = code_snapshot(tmp_path_factory.mktemp("code") / "mendflow")
    env = {"MENDFLOW_CODE_REPO": str(code), "MENDFLOW_CODE_BRANCH": "main"}
    create_pools(prefect_server)
    started = time.monotonic()
    if HAS_PIPELINE and HAS_REINDEX:
        prefect_cli(prefect_server, "deploy", "--all", env=env)
    else:
        trigger = [] if HAS_PIPELINE else ["--trigger", json.dumps(pipeline_trigger())]
        prefect_cli(prefect_server, "deploy", "--name", TARGET, *trigger, env=env)
        if HAS_REINDEX:
            prefect_cli(prefect_server, "deploy", "--name", "reindex-repo/default", env=env)
    elapsed = time.monotonic() - started
    with get_client(sync_client=True) as client:
        return Deployed(client.read_deployment_by_name(TARGET).id, elapsed, code)


def _start(cmd: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture(scope="module")
def worker(
    prefect_server: PrefectServer, deployed: Deployed, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A real process worker on mendflow-process, started outside the checkout; yields its log."""
    home = tmp_path_factory.mktemp("worker")
    env = {
        **os.environ,
        **prefect_server.env,
        "MENDFLOW_STATE_DIR": str(home / "state"),
        # The test is about what starts runs; a pipeline merging into the test repo would race its commits.
        "MENDFLOW_MERGE_MODE": "none",
        "PREFECT_WORKER_QUERY_SECONDS": "2",
    }
    log = home / "worker.log"
    cmd = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "mendflow-process", "--type", "process"]
    proc = _start(cmd, env, log, cwd=home)
    yield log
    stop(proc)
    # A run the worker was still executing (the timeout tests leave one) died with it; what its job left (its
    # directory, its uid's claim) is what `mendflow reap` is for.
    LocalLauncher(Settings()).reap(older_than_sec=0)


@dataclass
class Webhook:
    url: str
    port: int
    log: Path


@pytest.fixture(scope="module")
def webhook(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhook]:
    """`mendflow webhook` itself, as a subprocess on a free port."""
    home = tmp_path_factory.mktemp("webhook")
    port = free_port()
    env = {
        **os.environ,
        **prefect_server.env,
        "MENDFLOW_WEBHOOK_GITHUB_SECRET": GITHUB_SECRET,
        "MENDFLOW_WEBHOOK_GITLAB_TOKEN": GITLAB_TOKEN,
        "MENDFLOW_WEBHOOK_GIT_SECRET": GIT_SECRET,
        "MENDFLOW_WEBHOOK_ALLOWED_BRANCHES": "main,release/*",
        "MENDFLOW_WEBHOOK_MAX_BODY_BYTES": str(MAX_BODY),
        "MENDFLOW_WEBHOOK_DEDUP_DB": str(home / "deliveries.sqlite3"),
        "MENDFLOW_WEBHOOK_PORT": str(port),
    }
    log = home / "webhook.log"
    proc = _start([str(Path(sys.executable).with_name("mendflow")), "webhook"], env, log)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool | None:
        if proc.poll() is not None:
            raise AssertionError(f"mendflow webhook exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as resp:
                return True if resp.status == 200 else None
        except OSError:
            return None

    poll("mendflow webhook to be healthy", healthy, timeout=60, every=0.3)
    yield Webhook(url, port, log)
    stop(proc)


@dataclass
class SourceRepo:
    path: Path

    def commit(self, message: str) -> str:
        """A new commit on main (a changed docstring keeps the project passing)."""
        return commit_files(
            self.path,
            {
                "calc/__init__.py": PROJECT["calc/__init__.py"].replace(
                    "Tiny calculator.", f"Tiny calculator: {message}."
                )
            },
            message,
        )


@pytest.fixture(scope="module")
def source_repo(tmp_path_factory: pytest.TempPathFactory) -> SourceRepo:
    path = tmp_path_factory.mktemp("src") / "calc"
    pygit2.init_repository(str(path), initial_head="main")
    commit_files(path, dict(PROJECT), "initial")
    return SourceRepo(path)


def runs_of(deployment_id: UUID) -> list[FlowRun]:
    with get_client(sync_client=True) as client:
        return _runs(client, deployment_id)


def _runs(client: SyncPrefectClient, deployment_id: UUID) -> list[FlowRun]:
    return client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])))


def run_for_commit(deployment_id: UUID, commit: str) -> FlowRun | None:
    matches = [run for run in runs_of(deployment_id) if run.parameters.get("commit") == commit]
    return matches[0] if matches else None
