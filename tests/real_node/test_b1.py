"""B1 of the shipped example, as a Job on the real kubelet node under restricted Pod Security."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k

from flows.ci import ci_build
from mendflow.contracts import BuildStatus
from mendflow.launcher.k8s_manifest import JOB_UID
from mendflow.settings import Settings
from tests.fixtures.kube_node import NODE_NAME, RealNode
from tests.real_node.conftest import PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]


def test_b1_of_the_example_passes_with_coverage_in_a_restricted_pod_on_the_real_node(
    real_node: RealNode, node_env: Settings, node_namespace: str, pod_log: PodLog, calc_repo: Path
) -> None:
    namespace: Any = k.CoreV1Api(real_node.cluster.api_client()).read_namespace(node_namespace)
    assert namespace.metadata.labels["pod-security.kubernetes.io/enforce"] == "restricted"

    report = ci_build(repo=str(calc_repo), branch="main", stage="B1")

    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and report.coverage.line_pct > 0
    assert len(pod_log.pods) == 1, pod_log.pods
    pod = next(iter(pod_log.pods.values()))
    assert pod.node_name == NODE_NAME  # a real container ran it, not kwok
    assert pod.phase == "Succeeded"
    assert pod.security_context.run_as_non_root and pod.security_context.run_as_user == JOB_UID
    assert pod.container_context.read_only_root_filesystem and pod.container_context.capabilities.drop == ["ALL"]
    assert wait_gone(real_node, node_namespace) == []
    if pod.finished is not None:
        sys.stderr.write(f"\nB1 pod: seen->finished {pod.finished - pod.created:.1f}s\n")
