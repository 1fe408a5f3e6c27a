"""k8s/: every manifest is valid (strict) for the targeted Kubernetes, restricted and least-privilege."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes import client as k

from mendflow.launcher.base import JobSpec
from mendflow.launcher.k8s_manifest import build_job
from mendflow.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "k8s" / "base"
TEMPLATE = ROOT / "k8s" / "prefect" / "base-job-template.json"
K8S_VERSION = "1.34.0"  # the test control plane's minor (scripts/build-k8s.sh pins v1.34.x)
VALIDATE = Path(sys.executable).parent / "kubernetes-validate"
RESOURCE_FILES = sorted(p for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml")


def _docs() -> list[dict[str, Any]]:
    return [d for p in RESOURCE_FILES for d in yaml.safe_load_all(p.read_text()) if d]


def _find(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    (doc,) = [
        d
        for d in _docs()
        if d["kind"] == kind and d["metadata"]["name"] == name and d["metadata"].get("namespace") == namespace
    ]
    return doc


def _validate_cli(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VALIDATE), "--strict", "-k", K8S_VERSION, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_every_manifest_passes_strict_validation() -> None:
    proc = _validate_cli(*RESOURCE_FILES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("passed") == len(_docs())


def test_strict_validation_would_catch_a_typo(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    doc = _find("ServiceAccount", "mendflow-job", "mendflow-jobs")
    bad.write_text(yaml.safe_dump({**doc, "automountServiceAccountTokn": False}))
    assert _validate_cli(bad).returncode != 0


def test_kustomization_builds_every_resource() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(p.name for p in RESOURCE_FILES)
    built = subprocess.run(["kubectl", "kustomize", str(BASE)], capture_output=True, text=True, check=True, timeout=60)
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(built.stdout) if d)
    assert kinds == sorted(d["kind"] for d in _docs())


def test_namespaces_enforce_restricted_pod_security() -> None:
    for name in ("mendflow", "mendflow-jobs"):
        labels = _find("Namespace", name)["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_worker_role_grants_exactly_the_launchers_needs() -> None:
    rules = {
        (group, resource): sorted(rule["verbs"])
        for rule in _find("Role", "mendflow-job-runner", "mendflow-jobs")["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert rules == {
        ("batch", "jobs"): sorted(["create", "get", "list", "watch", "delete"]),
        ("", "pods"): ["get", "list", "watch"],
        ("", "pods/log"): ["get"],
        ("", "events"): ["list"],
    }
    assert not [d for d in _docs() if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]


def test_jobs_namespace_denies_all_traffic_by_default() -> None:
    policy = _find("NetworkPolicy", "default-deny", "mendflow-jobs")["spec"]
    assert policy == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    https = _find("NetworkPolicy", "allow-public-https", "mendflow-jobs")["spec"]["egress"][0]
    assert "169.254.0.0/16" in https["to"][0]["ipBlock"]["except"]  # cloud metadata stays unreachable
    assert https["ports"] == [{"protocol": "TCP", "port": 443}]


def test_stage_job_manifest_is_valid_for_the_target_version() -> None:
    spec = JobSpec(name="b1", command=["true"], inputs={"s": "https://s3.example/s?sig=1"})
    job = k.ApiClient().sanitize_for_serialization(build_job(spec, Settings(), "b1-abc123"))
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)


def _render_template() -> dict[str, Any]:
    from prefect.utilities.templating import apply_values

    template = json.loads(TEMPLATE.read_text())
    defaults = {name: p.get("default") for name, p in template["variables"]["properties"].items()}
    values = {
        **defaults,
        "name": "flow-run",
        "command": ["prefect", "flow-run", "execute"],
        "env": {"A": "1"},
        "labels": {"prefect.io/flow-run-id": "x"},
        "annotations": {},
    }
    return dict(apply_values(template["job_configuration"]["job_manifest"], values))


@pytest.mark.slow  # importing prefect_kubernetes.worker takes seconds
def test_prefect_base_job_template_keeps_prefects_variables() -> None:
    from prefect_kubernetes.worker import KubernetesWorker

    ours = json.loads(TEMPLATE.read_text())
    default = KubernetesWorker.get_default_base_job_template()
    assert set(default["variables"]["properties"]) <= set(ours["variables"]["properties"])
    assert set(default["job_configuration"]) == set(ours["job_configuration"])


def test_prefect_base_job_template_renders_a_valid_restricted_job() -> None:
    job = _render_template()
    job["metadata"]["name"] = "flow-run-abc"  # the worker turns generateName into a name
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    sc = pod["containers"][0]["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["readOnlyRootFilesystem"] is True
    assert pod["serviceAccountName"] == "mendflow-worker"
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["HOME"].startswith("/tmp") and env["PREFECT_HOME"].startswith("/tmp")  # the writable mount
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["ttlSecondsAfterFinished"] == 300


def _egress_overlay() -> list[dict[str, Any]]:
    built = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "k8s" / "egress")], capture_output=True, text=True, check=True, timeout=60
    )
    return [d for d in yaml.safe_load_all(built.stdout) if d]


def test_the_egress_overlay_leaves_jobs_no_public_network_but_the_proxy() -> None:
    docs = _egress_overlay()
    policies = {d["metadata"]["name"] for d in docs if d["kind"] == "NetworkPolicy" and _in(d, "mendflow-jobs")}
    assert "default-deny" in policies and "allow-public-https" not in policies
    (namespace,) = [d for d in docs if d["kind"] == "Namespace" and d["metadata"]["name"] == "mendflow-egress"]
    assert namespace["metadata"]["labels"]["mendflow.dev/egress-for-jobs"] == "true"  # the jobs' port-3128 rule
    (proxy,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "mendflow-egress"]
    assert proxy["spec"]["template"]["spec"]["containers"][0]["command"][:2] == ["mendflow", "egress-proxy"]


def _in(doc: dict[str, Any], namespace: str) -> bool:
    return bool(doc["metadata"].get("namespace") == namespace)


def test_the_egress_overlay_passes_strict_validation(tmp_path: Path) -> None:
    built = tmp_path / "egress.yaml"
    built.write_text(yaml.safe_dump_all(_egress_overlay()))
    proc = _validate_cli(built)
    assert proc.returncode == 0, proc.stdout + proc.stderr
