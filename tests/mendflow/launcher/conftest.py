"""Every launcher behind one fixture, ``launcher``, so the contract in ``test_common.py`` runs once per backend.

A test describes a job by what it does (a ``Job``: print these lines, write these outputs, exit with this code,
hang, outgrow its memory, fail to start); each ``LauncherCase`` turns that into its backend's terms and runs it
through the real launcher: a real sandboxed process for the local launcher; for Kubernetes a real Job on the
real control plane, whose pod kwok plays out (kwok runs no container, so the pod's ending, exit code and
termination message, the one the in-pod wrapper ``mendflow_runner.transfer`` writes, come from the annotations
of ``tests/fixtures/kwok-stages``). A new backend is a new ``LauncherCase`` and one more entry in ``CASES``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k
from kubernetes.client.rest import ApiException
from mendflow_runner.transfer import summary

from mendflow.launcher.base import JobResult, JobSpec, OnOutput
from mendflow.launcher.local import JOB_MARKER, LocalLauncher
from mendflow.settings import KubernetesSettings, SandboxSettings, Settings
from tests.fixtures.kube import (
    EXIT_CODE_ANNOTATION,
    MESSAGE_ANNOTATION,
    OUTCOME_ANNOTATION,
    PULL_ERROR_IMAGE_MARKER,
)
from tests.k8s import fixtures as k8s_fixtures
from tests.k8s.fixtures import JOBS_NS, Deployed
from tests.mendflow.launcher.test_kubernetes import (
    GRACE_SEC,
    TERMINATE_ANNOTATION,
    KwokLauncher,
    _spec,
    use_kubeconfig,
)

_session_fixture = k8s_fixtures.k8s_deployed_fixture  # `k8s_deployed`, with its end-of-session leftover check


@dataclass(frozen=True)
class Job:
    """What a job does, in no backend's terms."""

    prints: tuple[str, ...] = ()
    exit_code: int = 0
    writes: dict[str, str] = field(default_factory=dict)  # out/<name> -> text the job writes there
    outputs: tuple[str, ...] = ()  # output names the spec asks the launcher to deliver
    env: dict[str, str] = field(default_factory=dict)  # the spec's env
    hangs: bool = False
    exhausts_memory: bool = False  # uses more memory, all processes together, than its limit
    cannot_start: bool = False
    timeout_sec: int = 60
    memory_limit_mb: int = 256


class LauncherCase(ABC):
    """One backend: runs ``Job``s through its real launcher and says what they left behind."""

    name: str
    no_output_stream: str | None = None  # why this backend's test harness can show no streamed line, if so
    unstartable: str  # what a ``cannot_start`` job names that cannot start (a command, an image)

    @abstractmethod
    def run(self, job: Job, on_output: OnOutput | None = None) -> JobResult: ...

    @abstractmethod
    def output_url(self, name: str) -> str:
        """Where the output ``name`` is delivered (a URL this backend can deliver to)."""

    @abstractmethod
    def job_env(self, job: Job) -> dict[str, str]:
        """Run ``job`` and return the environment its command ran with."""

    @abstractmethod
    def leftovers(self) -> list[str]:
        """What the jobs run so far left behind (processes, directories, Jobs, pods)."""


# -- local ------------------------------------------------------------------------------------------------

ENV_LINE = "job-env: "
# Four processes, each under the per-process address-space limit, together over the job's memory: the kernel's
# OOM killer (the job's memory cgroup) ends it, as it ends a test run with parallel workers.
HOG = """
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray({share} * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(120)
        os._exit(0)
    kids.append(pid)
os.wait()
"""


def local_script(job: Job) -> str:
    lines = ["import json, os, sys, time"]
    lines += [f"open(os.path.join('out', {n!r}), 'w').write({t!r})" for n, t in job.writes.items()]
    lines += [f"print({line!r}, flush=True)" for line in job.prints]
    if job.exhausts_memory:
        lines.append(HOG.format(share=job.memory_limit_mb * 2 // 5))
    if job.hangs:
        lines.append("time.sleep(600)")
    lines.append(f"sys.exit({job.exit_code})")
    return "\n".join(lines)


class LocalCase(LauncherCase):
    name = "local"
    unstartable = "/nonexistent/mendflow-binary"

    def __init__(self, base: Path) -> None:
        self.base = base
        self.prefix = f"common-{uuid.uuid4().hex[:6]}"
        self.launcher = LocalLauncher(Settings(cache_dir=base / "cache", sandbox=SandboxSettings(local_base_dir=base)))

    def spec(self, job: Job, command: list[str]) -> JobSpec:
        return JobSpec(
            name=self.prefix,
            command=command,
            env=job.env,
            timeout_sec=job.timeout_sec,
            memory_limit_mb=job.memory_limit_mb,
            outputs={name: self.output_url(name) for name in job.outputs},
        )

    def run(self, job: Job, on_output: OnOutput | None = None) -> JobResult:
        command = [self.unstartable] if job.cannot_start else ["python", "-c", local_script(job)]
        return self.launcher.run(self.spec(job, command), on_output)

    def output_url(self, name: str) -> str:
        return (self.base / "delivered" / name).as_uri()

    def job_env(self, job: Job) -> dict[str, str]:
        code = f"import json, os; print({ENV_LINE!r} + json.dumps(dict(os.environ)), flush=True)"
        result = self.launcher.run(self.spec(job, ["python", "-c", code]))
        line = next(x for x in result.log_tail.splitlines() if x.startswith(ENV_LINE))
        env: dict[str, str] = json.loads(line.removeprefix(ENV_LINE))
        return env

    def leftovers(self) -> list[str]:
        jobs = self.base / "jobs"
        left = [f"dir {p.name}" for p in jobs.iterdir()] if jobs.is_dir() else []
        deadline = time.monotonic() + 10  # finished jobs' directories are deleted in the background
        while (parked := _entries(self.launcher.trash)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left += [f"trash {name}" for name in parked]
        return left + [f"pid {pid}" for pid in _pids_with_env(f"{JOB_MARKER}={self.prefix}-".encode())]


def _entries(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir()] if directory.is_dir() else []


def _pids_with_env(needle: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if any(value.startswith(needle) for value in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


# -- kubernetes -------------------------------------------------------------------------------------------


class KubernetesCase(LauncherCase):
    name = "kubernetes"
    unstartable = f"registry.invalid/{PULL_ERROR_IMAGE_MARKER}:1"
    no_output_stream = "kwok runs no container and serves no pod log (pods/log is 404), so no line can stream"

    def __init__(self, settings: Settings, batch: Any) -> None:
        self.settings, self.batch = settings, batch
        self.names: list[str] = []

    def spec(self, job: Job) -> JobSpec:
        return _spec(
            image=self.unstartable if job.cannot_start else "ci-runner-python",
            env=job.env,
            timeout_sec=job.timeout_sec,
            memory_limit_mb=job.memory_limit_mb,
            outputs={name: self.output_url(name) for name in job.outputs},
        )

    def run(self, job: Job, on_output: OnOutput | None = None, patch: Callable[[Any], None] | None = None) -> JobResult:
        launcher = KwokLauncher(self.settings, self.annotations(job), patch)
        try:
            return launcher.run(self.spec(job), on_output)
        finally:
            self.names += launcher.job_names

    def annotations(self, job: Job) -> dict[str, str]:
        if job.exhausts_memory:
            return {OUTCOME_ANNOTATION: "hang", TERMINATE_ANNOTATION: "oom"}
        if job.hangs:
            return {OUTCOME_ANNOTATION: "hang"}
        if job.exit_code == 0:
            if job.prints or job.writes:  # kwok's success stage sets no termination message to carry them
                pytest.skip("kwok's pod-succeeded stage carries no termination message (no output, no delivery)")
            return {}
        # What the in-pod wrapper writes as its termination message: what it delivered and the output's tail.
        delivered = [name for name in job.outputs if name in job.writes]
        message = summary(job.exit_code, delivered, None, deque(f"{line}\n" for line in job.prints))
        return {OUTCOME_ANNOTATION: "fail", EXIT_CODE_ANNOTATION: str(job.exit_code), MESSAGE_ANNOTATION: message}

    def output_url(self, name: str) -> str:
        return f"https://store.example/bucket/{name}?X-Amz-Signature=0"

    def job_env(self, job: Job) -> dict[str, str]:
        sent: list[Any] = []
        self.run(job, patch=sent.append)
        return {var.name: var.value for var in sent[0].spec.template.spec.containers[0].env or []}

    def leftovers(self) -> list[str]:
        return [f"job {name}" for name in self.names if _job_alive(self.batch, name)]


def _job_alive(batch: Any, name: str) -> bool:
    try:
        job = batch.read_namespaced_job(name, JOBS_NS)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return job.metadata.deletion_timestamp is None


# -- the fixture ------------------------------------------------------------------------------------------


def local_case(request: pytest.FixtureRequest) -> LauncherCase:
    # The job's uid must reach its base directory: pytest's tmp_path (mode 0700, root's) is out of its reach.
    base = Path(tempfile.mkdtemp(prefix="mendflow-common-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    return LocalCase(base)


def kubernetes_case(request: pytest.FixtureRequest) -> LauncherCase:
    deployed: Deployed = request.getfixturevalue("k8s_deployed")
    use_kubeconfig(request.getfixturevalue("monkeypatch"), deployed.worker_kubeconfig)
    settings = Settings(
        kubernetes=KubernetesSettings(namespace=JOBS_NS, context="mendflow-test", image_pull_grace_sec=GRACE_SEC)
    )
    return KubernetesCase(settings, k.BatchV1Api(deployed.admin()))


CASES: dict[str, Callable[[pytest.FixtureRequest], LauncherCase]] = {
    "local": local_case,
    "kubernetes": kubernetes_case,
}


# A real control plane starts in tens of seconds: its runs are "slow", the local ones are not.
@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.slow] if name != "local" else []) for name in CASES])
def launcher(request: pytest.FixtureRequest) -> LauncherCase:
    return CASES[request.param](request)
