"""k8s/base applied to the test control plane, the worker's identity, and the end-of-session leftover check.

Import it into a test module under any name (``from tests.k8s.fixtures import k8s_deployed_fixture``). It is
session-scoped: its teardown, after every test that used it, asserts that no stage Job or Pod is left.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.kube import KubeCluster

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "k8s" / "base"
CONTROL_NS, JOBS_NS = "mendflow", "mendflow-jobs"
WORKER_USER = f"system:serviceaccount:{CONTROL_NS}:mendflow-worker"
WORKER_GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{CONTROL_NS}", "system:authenticated")
LEFTOVER_WAIT_SEC = 60.0


@dataclass
class Deployed:
    cluster: KubeCluster
    worker_kubeconfig: Path  # authenticates as the mendflow-worker ServiceAccount (RBAC from k8s/base)

    def admin(self) -> Any:
        return self.cluster.api_client()


def kubectl(cluster: KubeCluster, *args: str) -> str:
    proc = subprocess.run(
        ["kubectl", f"--kubeconfig={cluster.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def leftovers(cluster: KubeCluster) -> list[str]:
    from kubernetes import client as k

    api = cluster.api_client()
    batch, core = k.BatchV1Api(api), k.CoreV1Api(api)
    found = [
        f"job/{j.metadata.namespace}/{j.metadata.name}"
        for j in batch.list_job_for_all_namespaces(label_selector="app.kubernetes.io/managed-by=mendflow").items
    ]
    found += [f"job/{JOBS_NS}/{j.metadata.name}" for j in batch.list_namespaced_job(JOBS_NS).items]
    found += [f"pod/{JOBS_NS}/{p.metadata.name}" for p in core.list_namespaced_pod(JOBS_NS).items]
    found += [f"pod/{CONTROL_NS}/{p.metadata.name}" for p in core.list_namespaced_pod(CONTROL_NS).items]
    return sorted(set(found))


def give_nodes_ephemeral_storage(cluster: KubeCluster, size: str = "200Gi") -> None:
    """kwok's fake nodes report no ephemeral-storage, so pods that request it (stage pods do, like on any
    real node) would be Unschedulable. Add it to their status, once: kwok's heartbeat only touches conditions.
    """
    from kubernetes import client as k

    core = k.CoreV1Api(cluster.api_client())
    for name in cluster.node_names:
        status = core.read_node_status(name).status
        if "ephemeral-storage" not in (status.allocatable or {}):
            storage = {"ephemeral-storage": size}
            core.patch_node_status(name, {"status": {"capacity": storage, "allocatable": storage}})


@pytest.fixture(scope="session", name="k8s_deployed")  # the name, whatever a test module imports it as
def k8s_deployed_fixture(kube_cluster: KubeCluster) -> Iterator[Deployed]:
    give_nodes_ephemeral_storage(kube_cluster)
    kubectl(kube_cluster, "apply", "-k", str(BASE))
    for ns, sa in ((CONTROL_NS, "mendflow-worker"), (JOBS_NS, "mendflow-job")):
        kube_cluster.wait_for_service_account(ns, sa)
    worker = kube_cluster.kubeconfig_for(WORKER_USER, WORKER_GROUPS)
    yield Deployed(kube_cluster, worker)
    # The worker Deployment's pod runs forever on kwok; it is not a stage leftover.
    kubectl(kube_cluster, "delete", "deployment", "prefect-worker", "-n", CONTROL_NS, "--ignore-not-found")
    deadline = time.monotonic() + LEFTOVER_WAIT_SEC  # Background deletion: the GC removes pods shortly
    while (left := leftovers(kube_cluster)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"left behind after the suite: {left}"
