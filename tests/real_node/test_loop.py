"""The whole self-healing loop with the Kubernetes launcher: every stage a Job on the real node, ending merged."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import PipelineOutcome
from mendflow.settings import Settings
from tests.fixtures.kube_node import NODE_NAME, RealNode
from tests.real_node.conftest import PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]
STAGE_LABEL = "mendflow.dev/stage"


def test_offline_loop_merges_with_every_stage_a_pod_on_the_real_node(
    real_node: RealNode, node_env: Settings, node_namespace: str, pod_log: PodLog, calc_repo: Path
) -> None:
    result: Any = self_healing_pipeline(repo=str(calc_repo), branch="main")

    assert result.outcome is PipelineOutcome.MERGED, result
    assert str(pygit2.Repository(str(calc_repo)).branches.local["main"].target) == result.merged_sha
    pods = list(pod_log.pods.values())
    assert {p.node_name for p in pods} == {NODE_NAME}
    stages = [p.labels.get(STAGE_LABEL) for p in sorted(pods, key=lambda p: p.created)]
    assert stages[0] == "B1" and stages[-1] == "B2" and len(stages) >= 3, stages  # the test builder between
    assert all(p.phase == "Succeeded" for p in pods), [(p.name, p.phase) for p in pods]
    assert wait_gone(real_node, node_namespace) == []
    for p in pods:
        took = f"{p.finished - p.created:.1f}s" if p.finished else "?"
        sys.stderr.write(f"\nloop pod {p.name} ({p.labels.get(STAGE_LABEL)}): seen->finished {took}")
