"""Network by phase through the launcher: B1 split at its dependency phase, the install on the default network
through ``mendflow egress-proxy`` on the host, the rest on RuntimeClass ``mendflow-isolated`` (the store only)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.ci import ci_build
from mendflow.contracts import BuildStatus
from mendflow.launcher.k8s_manifest import DEPENDENCIES, OFFLINE
from mendflow.settings import Settings, get_settings
from tests.fixtures.kube_node import ISOLATED_CLASS, NODE_NAME, RealNode
from tests.real_node.conftest import PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]
PHASE_LABEL = "mendflow.dev/phase"


@pytest.fixture
def egress_proxy(real_node: RealNode, node_env: Settings) -> Iterator[str]:
    """The proxy on the default network's gateway, where dependency pods reach it (the index hosts only)."""
    argv = [sys.executable, "-m", "mendflow.cli", "egress-proxy", "--listen", f"{real_node.host_ip}:0"]
    proc = subprocess.Popen(argv, env=dict(os.environ), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        bound = re.search(rf"{re.escape(real_node.host_ip)}:(\d+)", proc.stdout.readline())
        assert bound, "no banner from mendflow egress-proxy"
        yield f"http://{real_node.host_ip}:{bound.group(1)}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_b1_installs_through_the_proxy_and_tests_offline_on_the_isolated_network(
    real_node: RealNode,
    egress_proxy: str,
    node_namespace: str,
    pod_log: PodLog,
    calc_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MENDFLOW_KUBERNETES__EGRESS_PROXY", egress_proxy)
    monkeypatch.setenv("MENDFLOW_KUBERNETES__OFFLINE_RUNTIME_CLASS", ISOLATED_CLASS)
    get_settings.cache_clear()

    report = ci_build(repo=str(calc_repo), branch="main", stage="B1")

    first = sorted(pod_log.pods.values(), key=lambda p: p.created)[:2]  # the first attempt's two pods
    phases = {p.labels.get(PHASE_LABEL): p for p in first}
    assert set(phases) == {DEPENDENCIES, OFFLINE}, pod_log.pods
    assert phases[DEPENDENCIES].runtime_class is None  # the default network: the proxy on the host
    assert phases[OFFLINE].runtime_class == ISOLATED_CLASS  # the store only, from the first packet
    assert {p.node_name for p in phases.values()} == {NODE_NAME}
    assert wait_gone(real_node, node_namespace) == []
    assert report.status is BuildStatus.PASSED, report.error_reason
