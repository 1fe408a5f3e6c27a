"""A job split at its dependency phase, its two pods run the way a kubelet would run them (kwok runs none).

Each pod is its manifest's own command and environment (``build_job`` of ``phase_spec``), with the volumes'
paths mapped to directories here, the real in-pod transfer wrapper and the real S3 API (moto) behind the
presigned URLs. The offline pod's command runs in a network namespace of its own, with no network at all (what
the overlay's NetworkPolicy leaves it but the store, which its wrapper reaches before and after the command), and
with an empty dependency cache: it can only build from the first pod's archive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mendflow.contracts import BuildReport, BuildStatus
from mendflow.jobcode import RUNNER_COMMAND, RUNNER_IMAGE
from mendflow.keys import HANDOFF, REPORT
from mendflow.launcher.base import Handoff, JobSpec
from mendflow.launcher.k8s_manifest import CACHE_DIR, DEPENDENCIES, OFFLINE, WORKSPACE, build_job, phase_spec
from mendflow.settings import Settings
from mendflow.store.s3 import S3Store
from tests.fixtures.repos import RepoFactory
from tests.fixtures.s3 import S3Bucket, S3Server
from tests.images.mendflow_runner.helpers import RUNNER_DIR, TOOLS_BIN, demo_files, snapshot

pytestmark = pytest.mark.slow  # a moto server, two real builds

PREFIX = "repos/acme/demo/abc/B1/1/.staging/t"


@pytest.fixture
def store(s3_server: S3Server, s3_bucket: S3Bucket) -> S3Store:
    return S3Store(s3_bucket.name, "t", s3_server.settings())


def _spec(store: S3Store) -> JobSpec:
    return JobSpec(
        name="build-b1-abc-1",
        image=RUNNER_IMAGE,
        command=list(RUNNER_COMMAND),
        env={"MENDFLOW_JOB_REPO": "acme/demo", "MENDFLOW_JOB_STAGE": "B1", "MENDFLOW_JOB_TIMEOUT_SEC": "300"},
        timeout_sec=300,
        inputs={"source.tar.gz": store.download_url(f"{PREFIX}/source.tar.gz")},
        outputs={n: store.upload_url(f"{PREFIX}/{n}") for n in ("coverage.json", "runner.log", REPORT)},
        handoff=Handoff.at(store, f"{PREFIX}/{HANDOFF}"),
    )


def _run_pod(spec: JobSpec, pod: Path, offline: bool) -> dict[str, Any]:
    """Run the pod's container as a kubelet would, with its emptyDirs at ``pod/<volume>``; returns the wrapper's
    termination message."""
    container = build_job(spec, Settings(), "job").spec.template.spec.containers[0]
    volumes = {WORKSPACE: pod / "workspace", CACHE_DIR: pod / "cache", "/tmp": pod / "tmp"}
    for path in volumes.values():
        path.mkdir(parents=True)

    def local(text: str) -> str:  # a path on a volume, where that volume is here
        for mount, path in volumes.items():
            if text == mount or text.startswith(f"{mount}/"):
                return str(path) + text[len(mount) :]
        return text

    env = {var.name: local(var.value) for var in container.env}
    env |= {  # the image's own: its interpreter, uv and ruff, the runner installed
        "PATH": f"{TOOLS_BIN}:/usr/bin:/bin",
        "PYTHONPATH": str(RUNNER_DIR),
        "SSL_CERT_FILE": os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
        "MENDFLOW_TERMINATION_LOG": str(pod / "termination-log"),
    }
    argv = [sys.executable if part == "python" else local(part) for part in container.command]
    if offline:  # the NetworkPolicy's part: the command has no network; the wrapper still reaches the store
        cut = argv.index("--") + 1
        argv[cut:cut] = ["unshare", "--net", "--"]
    proc = subprocess.run(argv, env=env, cwd=volumes[WORKSPACE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return dict(json.loads((pod / "termination-log").read_text()))


def test_the_two_pods_build_the_commit_through_the_store(
    make_repo: RepoFactory, tmp_path: Path, store: S3Store
) -> None:
    store.put_file(f"{PREFIX}/source.tar.gz", snapshot(make_repo(demo_files()), tmp_path / "src.tar.gz"))
    spec = _spec(store)
    first = _run_pod(phase_spec(spec, DEPENDENCIES, spec.timeout_sec), tmp_path / "pod-1", offline=False)
    assert "env.tar.gz" in first["delivered"] and REPORT not in first["delivered"]
    assert store.size(f"{PREFIX}/{HANDOFF}") > 0
    second = _run_pod(phase_spec(spec, OFFLINE, spec.timeout_sec), tmp_path / "pod-2", offline=True)
    report = BuildReport.model_validate_json(store.get_bytes(f"{PREFIX}/{REPORT}"))
    assert REPORT in second["delivered"]
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason
    assert report.coverage is not None and report.coverage.line_pct > 0
    assert not any((tmp_path / "pod-2" / "cache").iterdir())  # nothing installed in the offline pod
