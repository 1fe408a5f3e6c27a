"""The real node itself: registered Ready, and kept for the namespaces placed on it."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k

from tests.fixtures.kube_node import NODE_LABEL, NODE_NAME, TAINT_KEY, RealNode

pytestmark = [pytest.mark.real_node, pytest.mark.slow]


def node(real_node: RealNode) -> Any:
    return k.CoreV1Api(real_node.cluster.api_client()).read_node(NODE_NAME)


def test_node_is_ready_with_its_internal_ip(real_node: RealNode) -> None:
    status = node(real_node).status
    assert {c.type: c.status for c in status.conditions}["Ready"] == "True"
    assert {"type": "InternalIP", "address": real_node.host_ip} in [a.to_dict() for a in status.addresses]


def test_node_is_tainted_so_only_placed_pods_land_there(real_node: RealNode) -> None:
    found = node(real_node)
    assert [(t.key, t.effect) for t in found.spec.taints] == [(TAINT_KEY, "NoSchedule")]
    assert found.metadata.labels[NODE_LABEL[0]] == NODE_LABEL[1]
