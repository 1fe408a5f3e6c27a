"""Shared pieces of the real-node tests: moto where pods reach it, a placed namespace, the settings, a pod log.

The S3 server listens on the isolated network's gateway (``real_node.isolated_ip``) at the one port that
network's host rules let through, so presigned URLs work from pods on either network and from this process.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from mendflow.settings import KubernetesSettings, Settings, get_settings
from mendflow.store.s3 import S3Store
from tests.fixtures import s3 as s3fx
from tests.fixtures.kube_node import CA_CONFIGMAP, JAVA_TRUSTSTORE_KEY, NODE_NAME, RealNode

IMAGE_PULL_GRACE_SEC = 8


@pytest.fixture(scope="session")
def node_s3(real_node: RealNode) -> Iterator[s3fx.S3Server]:
    with s3fx.moto_server(real_node.isolated_ip, real_node.s3_port) as server:
        yield server


@pytest.fixture
def node_bucket(node_s3: s3fx.S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    for name, value in (
        ("AWS_ACCESS_KEY_ID", s3fx.ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", s3fx.SECRET_KEY),
        ("AWS_DEFAULT_REGION", s3fx.REGION),
    ):
        monkeypatch.setenv(name, value)
    return node_s3.create_bucket("node")


@pytest.fixture
def node_store(node_s3: s3fx.S3Server, node_bucket: str) -> S3Store:
    return S3Store(node_bucket, "t", node_s3.settings())


@pytest.fixture
def node_namespace(real_node: RealNode) -> str:
    """A fresh restricted namespace placed on the real node (a test's leftovers are its own to check)."""
    name = f"rn-{uuid.uuid4().hex[:8]}"
    real_node.create_namespace(name)
    return name


def use_kubeconfig(monkeypatch: pytest.MonkeyPatch, real_node: RealNode) -> None:
    """As if KUBECONFIG had been set when the process started (the client reads it once, at import)."""
    path = str(real_node.cluster.kubeconfig)
    monkeypatch.setenv("KUBECONFIG", path)
    monkeypatch.setattr("kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION", path)


def kubernetes_settings(real_node: RealNode, namespace: str, **changes: Any) -> KubernetesSettings:
    base: dict[str, Any] = {
        "namespace": namespace,
        "context": "mendflow-test",
        "image_registry": real_node.image_registry,
        "image_tag": real_node.image_tag,
        "image_pull_grace_sec": IMAGE_PULL_GRACE_SEC,
        "ttl_seconds_after_finished": 60,
        "ca_bundle_configmap": CA_CONFIGMAP,
        "ca_java_truststore_key": JAVA_TRUSTSTORE_KEY,
    }
    return KubernetesSettings(**{**base, **changes})


@pytest.fixture
def node_settings(
    real_node: RealNode, node_namespace: str, node_s3: s3fx.S3Server, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    use_kubeconfig(monkeypatch, real_node)
    return Settings(
        launcher="kubernetes", kubernetes=kubernetes_settings(real_node, node_namespace), s3=node_s3.settings()
    )


@pytest.fixture
def node_env(
    mendflow_env: pytest.MonkeyPatch,
    real_node: RealNode,
    node_namespace: str,
    node_s3: s3fx.S3Server,
    node_bucket: str,
) -> Iterator[Settings]:
    """The whole process's settings (flows read get_settings()): Kubernetes launcher, the node's S3 store."""
    env = mendflow_env
    use_kubeconfig(env, real_node)
    values = {
        "MENDFLOW_LAUNCHER": "kubernetes",
        "MENDFLOW_STORE_URL": f"s3://{node_bucket}/runs",
        "MENDFLOW_S3__ENDPOINT_URL": node_s3.endpoint_url,
        "MENDFLOW_S3__REGION_NAME": s3fx.REGION,
        "MENDFLOW_S3__ACCESS_KEY_ID": s3fx.ACCESS_KEY,
        "MENDFLOW_S3__SECRET_ACCESS_KEY": s3fx.SECRET_KEY,
    }
    for key, value in kubernetes_settings(real_node, node_namespace).model_dump(exclude_none=True).items():
        values[f"MENDFLOW_KUBERNETES__{key.upper()}"] = str(value)
    for key, value in values.items():
        env.setenv(key, value)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@dataclass
class PodSeen:
    name: str
    node_name: str | None = None
    runtime_class: str | None = None
    security_context: Any = None
    container_context: Any = None
    created: float = 0.0  # monotonic, when the watch first saw it
    finished: float | None = None  # when it reached Succeeded/Failed
    phase: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    image: str = ""  # the container's, as the Job asked for it


@dataclass
class PodLog:
    """Every pod of a namespace as a watch saw it (the launcher deletes its Jobs: this keeps what they were)."""

    pods: dict[str, PodSeen] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def record(self, pod: Any) -> None:
        seen = self.pods.setdefault(pod.metadata.name, PodSeen(pod.metadata.name, created=time.monotonic()))
        seen.node_name = pod.spec.node_name or seen.node_name
        seen.runtime_class = pod.spec.runtime_class_name
        seen.security_context = pod.spec.security_context
        seen.container_context = pod.spec.containers[0].security_context
        seen.phase = pod.status.phase or seen.phase
        seen.labels = dict(pod.metadata.labels or {})
        seen.image = pod.spec.containers[0].image
        if seen.phase in ("Succeeded", "Failed") and seen.finished is None:
            seen.finished = time.monotonic()

    def running_pod(self, timeout: float = 60.0) -> str:
        """The name of the namespace's pod once the real node runs it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pod in list(self.pods.values()):
                if pod.phase == "Running" and pod.node_name == NODE_NAME:
                    return pod.name
            time.sleep(0.1)
        raise TimeoutError(f"no pod Running within {timeout}s: {self.pods}")


@pytest.fixture
def pod_log(real_node: RealNode, node_namespace: str) -> Iterator[PodLog]:
    from kubernetes import client as k
    from kubernetes import watch

    log = PodLog()
    api = k.CoreV1Api(real_node.cluster.api_client())

    def follow() -> None:
        while not log._stop.is_set():
            with contextlib.suppress(Exception):  # a watch that times out or drops: start another
                for event in watch.Watch().stream(api.list_namespaced_pod, node_namespace, timeout_seconds=2):
                    log.record(event["object"])

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    yield log
    log._stop.set()
    thread.join(10)


def jobs_and_pods(real_node: RealNode, namespace: str) -> list[str]:
    """The Jobs and not-yet-deleting Pods left in ``namespace``."""
    from kubernetes import client as k

    api = real_node.cluster.api_client()
    jobs: list[Any] = k.BatchV1Api(api).list_namespaced_job(namespace).items
    pods: list[Any] = k.CoreV1Api(api).list_namespaced_pod(namespace).items
    left = [f"job/{j.metadata.name}" for j in jobs]
    return left + [f"pod/{p.metadata.name}" for p in pods if p.metadata.deletion_timestamp is None]


def wait_gone(real_node: RealNode, namespace: str, timeout: float = 30.0) -> list[str]:
    """What is left after up to ``timeout`` s (Background propagation deletes the pods a moment after the Job)."""
    deadline = time.monotonic() + timeout
    while (left := jobs_and_pods(real_node, namespace)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left
