"""k8s/webhook: strictly valid, restricted, wired to what `mendflow webhook` serves; admitted by a real API server."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k
from kubernetes import utils as kutils

from mendflow.webhook.config import WebhookSettings
from tests.fixtures.kube import KubeCluster

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "k8s" / "webhook"
FILES = sorted(p for p in DIR.glob("*.yaml") if p.name != "kustomization.yaml")
VALIDATE = Path(sys.executable).parent / "kubernetes-validate"
RESTRICTED = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
}


def docs() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for p in FILES for d in yaml.safe_load_all(p.read_text()) if d}


def container() -> dict[str, Any]:
    (only,) = docs()["Deployment"]["spec"]["template"]["spec"]["containers"]
    return dict(only)


def env() -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container()["env"]}


def test_manifests_pass_strict_validation() -> None:
    proc = subprocess.run(
        [str(VALIDATE), "--strict", "-k", "1.34.0", *map(str, FILES)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_kustomization_lists_every_file() -> None:
    assert sorted(yaml.safe_load((DIR / "kustomization.yaml").read_text())["resources"]) == [p.name for p in FILES]


def test_container_is_locked_down() -> None:
    pod = docs()["Deployment"]["spec"]["template"]["spec"]
    ctx = container()["securityContext"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0
    assert ctx["allowPrivilegeEscalation"] is False and ctx["readOnlyRootFilesystem"] is True
    assert ctx["capabilities"]["drop"] == ["ALL"] and ctx["seccompProfile"]["type"] == "RuntimeDefault"


def test_env_names_are_settings_the_webhook_reads() -> None:
    fields = {f"MENDFLOW_WEBHOOK_{name.upper()}" for name in WebhookSettings.model_fields}
    assert {n for n in env() if n.startswith("MENDFLOW_WEBHOOK_")} <= fields


def test_probes_and_service_reach_the_served_port() -> None:
    port = container()["ports"][0]
    assert int(env()["MENDFLOW_WEBHOOK_PORT"]) == port["containerPort"]
    assert container()["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    service = docs()["Service"]["spec"]
    assert service["ports"][0]["targetPort"] == port["name"]
    assert service["selector"].items() <= docs()["Deployment"]["spec"]["template"]["metadata"]["labels"].items()


def test_dedup_database_lives_on_the_persistent_volume() -> None:
    mounts = {m["name"]: m["mountPath"] for m in container()["volumeMounts"]}
    assert env()["MENDFLOW_WEBHOOK_DEDUP_DB"].startswith(mounts["state"] + "/")
    volumes = {v["name"]: v for v in docs()["Deployment"]["spec"]["template"]["spec"]["volumes"]}
    assert volumes["state"]["persistentVolumeClaim"]["claimName"] == docs()["PersistentVolumeClaim"]["metadata"]["name"]


@pytest.mark.slow
def test_restricted_namespace_admits_the_webhook_pod(kube_cluster: KubeCluster) -> None:
    """PodSecurity admission (restricted) runs on pod creation: a pod existing means it was admitted."""
    namespace = "webhook-restricted"
    kube_cluster.create_namespace(namespace, labels=RESTRICTED)
    api = kube_cluster.api_client()
    for doc in docs().values():
        kutils.create_from_dict(api, {**doc, "metadata": {**doc["metadata"], "namespace": namespace}})
    core = k.CoreV1Api(api)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pods = core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/name=mendflow-webhook").items
        if pods:
            return
        time.sleep(1)
    events = k.CoreV1Api(api).list_namespaced_event(namespace).items
    pytest.fail("no webhook pod was created: " + "; ".join(e.message or "" for e in events))
