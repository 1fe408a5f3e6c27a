"""Network by phase on the real node: RuntimeClass ``mendflow-isolated`` reaches the store and nothing else, from
its first packet; the default network (the dependency phase's) reaches the host and the outside.

Each pod runs a probe that tries one TCP connection and prints ``connected`` or the error it got.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mendflow.launcher.base import JobSpec, JobState
from mendflow.launcher.kubernetes import KubernetesLauncher
from mendflow.settings import Settings
from mendflow.store.s3 import S3Store
from tests.fixtures.kube_node import HOST_IP, ISOLATED_CLASS, ISOLATED_IP, RealNode

pytestmark = [pytest.mark.real_node, pytest.mark.slow]

# Outside, by address: the isolated network has no DNS, and no route whatever the address (TEST-NET-3 here).
UNROUTED = ("203.0.113.80", 443)
INDEX = ("pypi.org", 443)  # what the dependency phase must reach, through the host's resolver
PROBE = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
    print("probe: connected")
except OSError as exc:
    print(f"probe: failed {type(exc).__name__} {exc}")
"""


@pytest.fixture(scope="module")
def host_port() -> Iterator[int]:
    """A host service on every address (the gateways included) that is not the store."""
    server = socket.create_server(("0.0.0.0", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


def isolated(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"kubernetes": settings.kubernetes.model_copy(update={"runtime_class": ISOLATED_CLASS})}
    )


def probe(settings: Settings, host: str, port: int) -> str:
    job = JobSpec(
        name="net-probe", command=["python", "-c", PROBE, host, str(port)], cpu_limit=0.5, memory_limit_mb=128
    )
    result = KubernetesLauncher(settings).run(job)
    assert result.state is JobState.SUCCEEDED, result
    return next(line for line in result.log_tail.splitlines() if line.startswith("probe: "))


def test_isolated_pod_delivers_its_output_to_the_store(
    real_node: RealNode, node_settings: Settings, node_store: S3Store
) -> None:
    job = JobSpec(
        name="net-store",
        command=["sh", "-c", "echo stored > /workspace/out/result.txt"],
        cpu_limit=0.5,
        memory_limit_mb=128,
        outputs={"result.txt": node_store.upload_url("net/result.txt")},
    )
    result = KubernetesLauncher(isolated(node_settings)).run(job)
    assert result.state is JobState.SUCCEEDED and "result.txt" in result.outputs, result
    assert node_store.get_bytes("net/result.txt") == b"stored\n"


def test_isolated_pod_cannot_reach_another_port_of_its_gateway(node_settings: Settings, host_port: int) -> None:
    # The host rules accept only the store's port on the gateway and drop the rest: a silent timeout.
    assert probe(isolated(node_settings), ISOLATED_IP, host_port) == "probe: failed TimeoutError timed out"


def test_isolated_pod_has_no_route_to_the_host_network(node_settings: Settings, host_port: int) -> None:
    assert "Network is unreachable" in probe(isolated(node_settings), HOST_IP, host_port)


def test_isolated_pod_has_no_route_outside(node_settings: Settings) -> None:
    assert "Network is unreachable" in probe(isolated(node_settings), *UNROUTED)


def test_default_network_pod_reaches_a_host_service(node_settings: Settings, host_port: int) -> None:
    assert probe(node_settings, HOST_IP, host_port) == "probe: connected"


def test_default_network_pod_reaches_the_package_index(node_settings: Settings) -> None:
    assert probe(node_settings, *INDEX) == "probe: connected"
