"""What the launcher costs on top of a bare pod: the same pod by ``kubectl create`` + ``kubectl wait`` as baseline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

import pytest
from kubernetes import client as k

from mendflow.launcher.base import JobSpec, JobState
from mendflow.launcher.kubernetes import KubernetesLauncher
from mendflow.settings import Settings
from tests.fixtures.kube_node import RealNode

pytestmark = [pytest.mark.real_node, pytest.mark.slow]
SAMPLES = 3
JOB = JobSpec(name="overhead", command=["true"], cpu_limit=0.5, memory_limit_mb=128, timeout_sec=60)


def kubectl_baseline(real_node: RealNode, settings: Settings, namespace: str, index: int) -> float:
    """Seconds from ``kubectl create`` of the launcher's own pod template to ``kubectl wait`` seeing Succeeded."""
    job: Any = KubernetesLauncher(settings).build_job(JOB, f"baseline-{index}")
    template = job.spec.template
    pod = k.V1Pod(api_version="v1", kind="Pod", metadata=k.V1ObjectMeta(name=f"baseline-{index}"), spec=template.spec)
    manifest = json.dumps(k.ApiClient().sanitize_for_serialization(pod))
    kubectl = ["kubectl", f"--kubeconfig={real_node.cluster.kubeconfig}", "-n", namespace]
    env = {**os.environ, "HOME": str(real_node.cluster.workdir / "home")}  # no ~/.kube cache of a developer's
    started = time.monotonic()
    subprocess.run([*kubectl, "create", "-f", "-"], input=manifest, text=True, check=True, env=env, capture_output=True)
    wait = [*kubectl, "wait", f"pod/baseline-{index}", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s"]
    subprocess.run(wait, check=True, env=env, capture_output=True)
    return time.monotonic() - started


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed: no baseline")
def test_a_stage_pod_through_the_launcher_costs_little_more_than_a_bare_pod(
    real_node: RealNode, node_settings: Settings, node_namespace: str
) -> None:
    baseline = [kubectl_baseline(real_node, node_settings, node_namespace, i) for i in range(SAMPLES)]
    launched = []
    for _ in range(SAMPLES):
        result = KubernetesLauncher(node_settings).run(JOB)
        assert result.state is JobState.SUCCEEDED, result
        launched.append(result.duration_sec)
    sys.stderr.write(f"\npod create->done: kubectl {sorted(baseline)} launcher {sorted(launched)}\n")
    # The launcher also creates a Job (the Job controller makes the pod), streams the log and deletes the Job.
    assert min(launched) < min(baseline) + 3.0
