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
    (proxy,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "mendflow-egress"]
    assert proxy["spec"]["template"]["spec"]["containers"][0]["command"][:2] == ["mendflow", "egress-proxy"]


JOB_POD = {"app.kubernetes.io/managed-by": "mendflow"}


def _reachable(docs: list[dict[str, Any]], pod: dict[str, str]) -> set[tuple[str, int]]:
    """(namespace, port) pairs the job namespace's egress policies open to a pod labelled ``pod``: policies are
    additive, a policy applies when its selector's labels are the pod's; ipBlock peers count as 'public'."""
    namespaces = {  # the API server adds each namespace's name label
        (name := d["metadata"]["name"]): {**d["metadata"].get("labels", {}), "kubernetes.io/metadata.name": name}
        for d in docs
        if d["kind"] == "Namespace"
    }
    opened: set[tuple[str, int]] = set()
    for policy in (d for d in docs if d["kind"] == "NetworkPolicy" and _in(d, "mendflow-jobs")):
        if not policy["spec"]["podSelector"].get("matchLabels", {}).items() <= pod.items():
            continue
        for rule in policy["spec"].get("egress", []):
            for peer in rule.get("to", []):
                wanted = peer.get("namespaceSelector", {}).get("matchLabels")
                names = (
                    ["public"]
                    if "ipBlock" in peer
                    else [n for n, lb in namespaces.items() if wanted.items() <= lb.items()]
                )
                opened |= {(name, port["port"]) for name in names for port in rule["ports"]}
    return opened


def test_only_a_dependency_pod_reaches_the_index_proxy() -> None:
    docs = _egress_overlay()
    dependencies = _reachable(docs, {**JOB_POD, "mendflow.dev/phase": "dependencies"})
    assert ("mendflow-egress", 3128) in dependencies and ("mendflow-egress", 3129) in dependencies
    for offline in ({**JOB_POD, "mendflow.dev/phase": "offline"}, JOB_POD):
        reached = _reachable(docs, offline)
        assert ("mendflow-egress", 3129) in reached and ("mendflow-egress", 3128) not in reached
        assert not any(name == "public" for name, _ in reached | dependencies)


def test_the_proxy_takes_its_index_port_from_dependency_pods_only() -> None:
    docs = _egress_overlay()
    (policy,) = [d for d in docs if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "allow-jobs-in"]
    by_port = {rule["ports"][0]["port"]: rule["from"][0] for rule in policy["spec"]["ingress"]}
    assert by_port[3128]["podSelector"]["matchLabels"] == {"mendflow.dev/phase": "dependencies"}
    assert "podSelector" not in by_port[3129]


def _in(doc: dict[str, Any], namespace: str) -> bool:
    return bool(doc["metadata"].get("namespace") == namespace)


def test_the_egress_overlay_passes_strict_validation(tmp_path: Path) -> None:
    built = tmp_path / "egress.yaml"
    built.write_text(yaml.safe_dump_all(_egress_overlay()))
    proc = _validate_cli(built)
    assert proc.returncode == 0, proc.stdout + proc.stderr
