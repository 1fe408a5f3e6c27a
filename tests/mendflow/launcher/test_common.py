"""What every launcher promises, run against each backend: a new launcher is a new ``LauncherCase`` here.

A job is described by what it does (succeed, fail with a code and a line, hang); each case turns that into
its backend's terms: a real process for the local launcher, a pod that kwok plays out on the real control
plane for Kubernetes. The assertions are the contract, the same for both.
"""

from __future__ import annotations

import shutil
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k
from kubernetes.client.rest import ApiException

from mendflow.launcher.base import JobResult, JobSpec, JobState
from mendflow.launcher.local import LocalLauncher
from mendflow.settings import KubernetesSettings, SandboxSettings, Settings
from tests.fixtures.kube import EXIT_CODE_ANNOTATION, MESSAGE_ANNOTATION, OUTCOME_ANNOTATION
from tests.k8s import fixtures as k8s_fixtures
from tests.k8s.fixtures import JOBS_NS, Deployed
from tests.mendflow.launcher.test_kubernetes import GRACE_SEC, KwokLauncher, _spec, use_kubeconfig

pytestmark = pytest.mark.slow
_session_fixture = k8s_fixtures.k8s_deployed_fixture

FAIL_LINE = "E   assert 1 == 2"
SCRIPTS = {
    "succeed": "print('done')",
    "fail": f"print({FAIL_LINE!r}, flush=True); raise SystemExit(3)",
    "hang": "import time; time.sleep(120)",
}


class LauncherCase(ABC):
    @abstractmethod
    def run(self, does: str, timeout_sec: int = 60) -> JobResult:
        """Run a job that does ``does`` (a key of SCRIPTS)."""

    @abstractmethod
    def leftovers(self) -> list[str]:
        """What the jobs run so far left behind (processes, directories, Jobs)."""


class LocalCase(LauncherCase):
    def __init__(self, base: Path) -> None:
        self.base = base
        self.launcher = LocalLauncher(Settings(cache_dir=base / "cache", sandbox=SandboxSettings(local_base_dir=base)))

    def run(self, does: str, timeout_sec: int = 60) -> JobResult:
        spec = JobSpec(name=f"common-{does}", command=["python", "-c", SCRIPTS[does]], timeout_sec=timeout_sec)
        return self.launcher.run(spec)

    def leftovers(self) -> list[str]:
        jobs = self.base / "jobs"
        return [p.name for p in jobs.iterdir()] if jobs.is_dir() else []


class KubernetesCase(LauncherCase):
    OUTCOMES: dict[str, dict[str, str]] = {
        "succeed": {},
        "fail": {OUTCOME_ANNOTATION: "fail", EXIT_CODE_ANNOTATION: "3", MESSAGE_ANNOTATION: FAIL_LINE},
        "hang": {OUTCOME_ANNOTATION: "hang"},
    }

    def __init__(self, settings: Settings, batch: Any) -> None:
        self.settings, self.batch = settings, batch
        self.names: list[str] = []

    def run(self, does: str, timeout_sec: int = 60) -> JobResult:
        launcher = KwokLauncher(self.settings, self.OUTCOMES[does])
        result = launcher.run(_spec(timeout_sec=timeout_sec))
        self.names += launcher.job_names
        return result

    def leftovers(self) -> list[str]:
        return [name for name in self.names if _job_alive(self.batch, name)]


def _job_alive(batch: Any, name: str) -> bool:
    try:
        job = batch.read_namespaced_job(name, JOBS_NS)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return job.metadata.deletion_timestamp is None


@pytest.fixture(params=["local", "kubernetes"])
def case(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LauncherCase:
    if request.param == "local":
        # the job's uid must reach its base directory: pytest's tmp_path (mode 0700, root's) is out of its reach
        base = Path(tempfile.mkdtemp(prefix="mendflow-common-", dir="/var/tmp"))
        request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
        return LocalCase(base)
    deployed: Deployed = request.getfixturevalue("k8s_deployed")
    use_kubeconfig(monkeypatch, deployed.worker_kubeconfig)
    settings = Settings(
        kubernetes=KubernetesSettings(namespace=JOBS_NS, context="mendflow-test", image_pull_grace_sec=GRACE_SEC)
    )
    return KubernetesCase(settings, k.BatchV1Api(deployed.admin()))


def test_a_job_that_succeeds_is_succeeded_with_exit_0(case: LauncherCase) -> None:
    result = case.run("succeed")
    assert (result.state, result.exit_code) == (JobState.SUCCEEDED, 0), result.reason


def test_a_non_zero_exit_is_failed_with_its_code(case: LauncherCase) -> None:
    result = case.run("fail")
    assert (result.state, result.exit_code) == (JobState.FAILED, 3) and "code 3" in result.reason


def test_a_failed_job_keeps_the_tail_of_its_output(case: LauncherCase) -> None:
    assert FAIL_LINE in case.run("fail").log_tail


def test_a_job_past_its_timeout_is_timed_out(case: LauncherCase) -> None:
    assert case.run("hang", timeout_sec=2).state is JobState.TIMED_OUT


def test_nothing_of_a_job_is_left_once_it_returns(case: LauncherCase) -> None:
    for does in ("succeed", "fail"):
        case.run(does)
    case.run("hang", timeout_sec=2)
    assert case.leftovers() == []
