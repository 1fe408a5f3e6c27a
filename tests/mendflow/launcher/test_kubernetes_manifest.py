"""The stage Job manifest: restricted, credential-free, labelled, presigned URLs only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k

from mendflow.errors import ConfigError
from mendflow.launcher.base import JOB_ENV, Handoff, JobSpec
from mendflow.launcher.k8s_manifest import (
    DEPENDENCIES,
    HANDOFF_NAME,
    JOB_UID,
    OFFLINE,
    build_job,
    image_ref,
    job_name,
    label_value,
    phase_spec,
)
from mendflow.settings import Settings

GET = "https://store.example/b/src.tar.gz?X-Amz-Signature=abc"
PUT = "https://store.example/b/report.json?X-Amz-Signature=def"


def _spec(**changes: Any) -> JobSpec:
    base: dict[str, Any] = {
        "name": "build-b1-3f2a1c9d-1",
        "command": ["python", "-m", "mendflow_runner", "--source", "{workspace}/in/source.tar.gz"],
        "env": {"MENDFLOW_JOB_STAGE": "B1"},
        "timeout_sec": 600,
        "memory_limit_mb": 2048,
        "cpu_limit": 1.5,
        "inputs": {"source.tar.gz": GET},
        "outputs": {"report.json": PUT},
        "labels": {"repo": "acme/widgets", "commit": "3f2a1c9d" * 5, "stage": "B1", "attempt": "2"},
    }
    return JobSpec(**{**base, **changes})


def _job(spec: JobSpec | None = None, flow_run: str | None = None) -> Any:
    return build_job(spec or _spec(), Settings(), "build-b1-abc123", flow_run)


def _dict(job: Any) -> dict[str, Any]:
    return k.ApiClient().sanitize_for_serialization(job)  # type: ignore[no-any-return]


def test_job_is_never_retried_and_is_bounded_in_time() -> None:
    spec = _dict(_job())["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["activeDeadlineSeconds"] == 600
    assert spec["ttlSecondsAfterFinished"] == Settings().kubernetes.ttl_seconds_after_finished
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def test_pod_meets_the_restricted_pod_security_standard() -> None:
    pod = _dict(_job())["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == JOB_UID != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (ctr,) = pod["containers"]
    sc = ctr["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == JOB_UID
    assert "privileged" not in sc and "hostNetwork" not in pod and "hostPID" not in pod


def test_pod_gets_no_credentials() -> None:
    pod = _dict(_job())["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    assert all("secret" not in v and "projected" not in v for v in pod["volumes"])
    (ctr,) = pod["containers"]
    assert "envFrom" not in ctr
    assert all("valueFrom" not in e for e in ctr["env"])
    names = {e["name"] for e in ctr["env"]}
    assert not names & {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "MENDFLOW_S3__SECRET_ACCESS_KEY"}


def test_writable_paths_are_size_limited_empty_dirs() -> None:
    pod = _dict(_job())["spec"]["template"]["spec"]
    mounts = {m["mountPath"]: m["name"] for m in pod["containers"][0]["volumeMounts"]}
    assert set(mounts) == {"/workspace", "/tmp", "/var/tmp", "/cache"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["workspace"]["emptyDir"]["sizeLimit"] == f"{Settings().sandbox.workspace_size_mb}Mi"
    assert all(v["emptyDir"]["sizeLimit"].endswith("Mi") for v in volumes.values())


def test_requests_and_limits_come_from_the_spec() -> None:
    res = _dict(_job())["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert res["limits"]["cpu"] == "1500m" and res["limits"]["memory"] == "2048Mi"
    assert res["requests"]["memory"] == "2048Mi" and res["requests"]["cpu"] == "750m"
    assert "ephemeral-storage" in res["limits"] and "ephemeral-storage" in res["requests"]


def test_presigned_urls_reach_the_pod_through_the_transfer_wrapper() -> None:
    (ctr,) = _dict(_job())["spec"]["template"]["spec"]["containers"]
    assert ctr["command"][:4] == ["python", "-m", "mendflow_runner.transfer", "--"]
    assert ctr["command"][4:] == [
        "python",
        "-m",
        "mendflow_runner",
        "--source",
        "/workspace/in/source.tar.gz",
    ]
    env = {e["name"]: e["value"] for e in ctr["env"]}
    assert json.loads(env["MENDFLOW_TRANSFER"]) == {
        "inputs": {"source.tar.gz": GET},
        "outputs": {"report.json": PUT},
    }
    assert env["MENDFLOW_JOB_STAGE"] == "B1"
    assert env["HOME"] == "/tmp"


def test_a_pods_git_has_an_address_below_what_a_test_configures() -> None:
    (ctr,) = _dict(_job())["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in ctr["env"]}
    assert env["EMAIL"] == JOB_ENV["EMAIL"] and not any(name.startswith("GIT_") for name in env)


def test_a_pods_shell_is_bash() -> None:
    (ctr,) = _dict(_job())["spec"]["template"]["spec"]["containers"]
    assert {e["name"]: e["value"] for e in ctr["env"]}["SHELL"] == "/bin/bash"


def test_file_urls_are_refused_with_a_config_error() -> None:
    spec = _spec(inputs={"source.tar.gz": "file:///var/lib/mendflow/src.tar.gz"})
    with pytest.raises(ConfigError, match="the kubernetes launcher needs an s3:// artefact store"):
        _job(spec)


def test_artefact_names_must_be_plain_file_names() -> None:
    with pytest.raises(ConfigError, match="plain file name"):
        _job(_spec(outputs={"../escape": PUT}))


def test_labels_are_sanitized_and_annotations_keep_exact_values() -> None:
    spec = _spec(labels={"repo": "git@github.com:acme/Widgets.git", "stage": "B1", "attempt": "1"})
    job = _dict(_job(spec, flow_run="5f0c1e9a-0000-4000-8000-000000000001"))
    labels = job["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "mendflow"
    assert labels["mendflow.dev/repo"] == "git-github.com-acme-Widgets.git"
    assert labels["mendflow.dev/flow-run"] == "5f0c1e9a-0000-4000-8000-000000000001"
    assert job["spec"]["template"]["metadata"]["labels"] == labels
    assert job["metadata"]["annotations"]["mendflow.dev/repo-full"] == "git@github.com:acme/Widgets.git"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("a" * 80, "a" * 63), ("-x y/z_", "x-y-z"), ("feature/ß", "feature"), ("///", "")],
)
def test_label_value_is_valid(raw: str, expected: str) -> None:
    assert label_value(raw) == expected


def test_job_names_are_unique_dns_labels() -> None:
    names = {job_name("Build B1 / 3f2a1c9d, attempt #1" * 3) for _ in range(20)}
    assert len(names) == 20
    assert all(len(n) <= 52 and n.replace("-", "").isalnum() and n == n.lower() for n in names)


def test_bare_image_names_resolve_to_the_configured_registry() -> None:
    settings = Settings()
    reg, tag = settings.kubernetes.image_registry, settings.kubernetes.image_tag
    assert image_ref("ci-runner-python", settings) == f"{reg}/ci-runner-python:{tag}"
    assert image_ref("ci-runner-python:dev", settings) == f"{reg}/ci-runner-python:dev"
    assert image_ref("registry.example/x/y@sha256:abc", settings) == "registry.example/x/y@sha256:abc"


def _pod_env(settings: Settings, spec: JobSpec | None = None) -> dict[str, str]:
    job = _dict(build_job(spec or _spec(), settings, "b1-x"))
    return {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}


INDEX_PROXY = "http://mendflow-egress.mendflow-egress.svc.cluster.local:3128"
STORE_PROXY = "http://mendflow-egress.mendflow-egress.svc.cluster.local:3129"
PROXIES = Settings(kubernetes={"egress_proxy": INDEX_PROXY, "store_proxy": STORE_PROXY})
SPLITTABLE = _spec(handoff=Handoff(upload=PUT + "&env", download=GET + "&env"))


def test_the_dependency_pod_goes_through_the_index_proxy_and_in_cluster_names_go_direct() -> None:
    env = _pod_env(PROXIES, phase_spec(SPLITTABLE, DEPENDENCIES, 600))
    assert (env["HTTPS_PROXY"], env["https_proxy"]) == (INDEX_PROXY, INDEX_PROXY)
    assert ".svc" in env["NO_PROXY"].split(",") and "HTTP_PROXY" not in env  # a plain-HTTP in-cluster store


@pytest.mark.parametrize("spec", [phase_spec(SPLITTABLE, OFFLINE, 600), _spec()], ids=["offline pod", "unsplit"])
def test_every_other_pod_gets_the_store_proxy_only(spec: JobSpec) -> None:
    assert _pod_env(PROXIES, spec)["HTTPS_PROXY"] == STORE_PROXY


def test_the_dependency_pod_is_labelled_and_uploads_the_archive() -> None:
    job = _dict(build_job(phase_spec(SPLITTABLE, DEPENDENCIES, 500), PROXIES, "b1-x"))
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert job["spec"]["template"]["metadata"]["labels"]["mendflow.dev/phase"] == "dependencies"
    transfer = json.loads(env["MENDFLOW_TRANSFER"])
    assert transfer["outputs"][HANDOFF_NAME] == PUT + "&env" and HANDOFF_NAME not in transfer["inputs"]
    assert (env["MENDFLOW_PHASE"], env["MENDFLOW_HANDOFF"]) == ("dependencies", f"/workspace/out/{HANDOFF_NAME}")


def test_the_offline_pod_downloads_the_archive_within_what_time_is_left() -> None:
    job = _dict(build_job(phase_spec(SPLITTABLE, OFFLINE, 420), PROXIES, "b1-x"))
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    transfer = json.loads(env["MENDFLOW_TRANSFER"])
    assert transfer["inputs"][HANDOFF_NAME] == GET + "&env" and HANDOFF_NAME not in transfer["outputs"]
    assert (env["MENDFLOW_PHASE"], env["MENDFLOW_HANDOFF"]) == ("offline", f"/workspace/in/{HANDOFF_NAME}")
    assert job["spec"]["activeDeadlineSeconds"] == 420


def test_without_an_egress_proxy_the_pod_gets_no_proxy_variables() -> None:
    assert not {"HTTPS_PROXY", "https_proxy", "NO_PROXY"} & set(_pod_env(Settings()))


def _pod(settings: Settings, spec: JobSpec | None = None) -> dict[str, Any]:
    return _dict(build_job(spec or _spec(), settings, "b1-x"))["spec"]["template"]["spec"]


def test_a_ca_bundle_configmap_is_mounted_read_only_and_named_by_each_toolchains_variable() -> None:
    pod = _pod(Settings(kubernetes={"ca_bundle_configmap": "egress-ca"}))
    mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "ca")
    volume = next(v for v in pod["volumes"] if v["name"] == "ca")
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert (mount["mountPath"], mount["readOnly"]) == ("/etc/mendflow-ca", True)
    assert volume["configMap"] == {"name": "egress-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}
    assert env["SSL_CERT_FILE"] == env["REQUESTS_CA_BUNDLE"] == env["NODE_EXTRA_CA_CERTS"] == "/etc/mendflow-ca/ca.crt"


def test_without_a_ca_bundle_the_pod_keeps_the_images_own() -> None:
    pod = _pod(Settings())
    assert "ca" not in {v["name"] for v in pod["volumes"]}
    assert "SSL_CERT_FILE" not in {e["name"] for e in pod["containers"][0]["env"]}


CLASSES = Settings(kubernetes={"runtime_class": "gvisor", "offline_runtime_class": "isolated"})


@pytest.mark.parametrize(
    ("settings", "spec", "expected"),
    [
        (Settings(), _spec(), None),
        (CLASSES, _spec(), "gvisor"),
        (CLASSES, phase_spec(SPLITTABLE, DEPENDENCIES, 600), "gvisor"),
        (CLASSES, phase_spec(SPLITTABLE, OFFLINE, 600), "isolated"),
        (Settings(kubernetes={"runtime_class": "gvisor"}), phase_spec(SPLITTABLE, OFFLINE, 600), "gvisor"),
    ],
    ids=["unset", "unsplit", "dependency pod", "offline pod", "offline without its own class"],
)
def test_the_runtime_class_follows_the_phase(settings: Settings, spec: JobSpec, expected: str | None) -> None:
    assert _pod(settings, spec).get("runtimeClassName") == expected


def test_a_java_truststore_key_is_mounted_beside_the_bundle_and_named_to_the_jvm() -> None:
    pod = _pod(Settings(kubernetes={"ca_bundle_configmap": "egress-ca", "ca_java_truststore_key": "cacerts.jks"}))
    volume = next(v for v in pod["volumes"] if v["name"] == "ca")
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert [item["key"] for item in volume["configMap"]["items"]] == ["ca.crt", "cacerts.jks"]
    assert "-Djavax.net.ssl.trustStore=/etc/mendflow-ca/cacerts.jks" in env["JAVA_TOOL_OPTIONS"].split()


def test_without_a_java_truststore_key_the_jvm_keeps_its_own() -> None:
    assert "JAVA_TOOL_OPTIONS" not in _pod_env(Settings(kubernetes={"ca_bundle_configmap": "egress-ca"}))
