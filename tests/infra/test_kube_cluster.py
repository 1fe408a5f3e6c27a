"""The kube_cluster fixture runs a real control plane: API, RBAC, PodSecurity, Jobs via kwok."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.fixtures.kube import (
    EXIT_CODE_ANNOTATION,
    OUTCOME_ANNOTATION,
    PULL_ERROR_IMAGE_MARKER,
    RUN_DURATION_ANNOTATION,
    KubeCluster,
)

pytestmark = pytest.mark.slow

RESTRICTED = {"pod-security.kubernetes.io/enforce": "restricted"}


def _k() -> Any:
    from kubernetes import client

    return client


def _restricted_container(name: str = "main", image: str = "busybox:stable") -> Any:
    k = _k()
    return k.V1Container(
        name=name,
        image=image,
        command=["sh", "-c", "echo hello"],
        security_context=k.V1SecurityContext(
            allow_privilege_escalation=False,
            run_as_non_root=True,
            run_as_user=1000,
            capabilities=k.V1Capabilities(drop=["ALL"]),
            seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
        ),
    )


def _namespace(cluster: KubeCluster, labels: dict[str, str] | None = None) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    cluster.create_namespace(name, labels)
    return name


def test_api_reachable(kube_cluster: KubeCluster) -> None:
    k = _k()
    info = k.VersionApi(kube_cluster.api_client()).get_code()
    assert info.major == "1"
    assert info.git_version.startswith("v1.")
    assert kube_cluster.server.startswith("https://127.0.0.1:")
    assert kube_cluster.kubeconfig.is_file()
    nodes = {n.metadata.name for n in k.CoreV1Api(kube_cluster.api_client()).list_node().items}
    assert set(kube_cluster.node_names) <= nodes


def test_pod_security_rejects_privileged_pod(kube_cluster: KubeCluster) -> None:
    k = _k()
    from kubernetes.client.rest import ApiException

    ns = _namespace(kube_cluster, RESTRICTED)
    api = k.CoreV1Api(kube_cluster.api_client())
    pod = k.V1Pod(
        metadata=k.V1ObjectMeta(name="privileged"),
        spec=k.V1PodSpec(
            containers=[
                k.V1Container(
                    name="main",
                    image="busybox:stable",
                    security_context=k.V1SecurityContext(privileged=True),
                )
            ]
        ),
    )
    with pytest.raises(ApiException) as err:
        api.create_namespaced_pod(ns, pod)
    assert err.value.status == 403
    assert "violates PodSecurity" in err.value.body
    assert "privileged" in err.value.body


def test_restricted_job_succeeds(kube_cluster: KubeCluster) -> None:
    k = _k()
    ns = _namespace(kube_cluster, RESTRICTED)
    client = kube_cluster.api_client()
    batch, core = k.BatchV1Api(client), k.CoreV1Api(client)
    job = k.V1Job(
        metadata=k.V1ObjectMeta(name="ok"),
        spec=k.V1JobSpec(
            backoff_limit=0,
            ttl_seconds_after_finished=300,
            template=k.V1PodTemplateSpec(
                spec=k.V1PodSpec(
                    restart_policy="Never",
                    security_context=k.V1PodSecurityContext(
                        run_as_non_root=True,
                        seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
                    ),
                    containers=[_restricted_container()],
                )
            ),
        ),
    )
    batch.create_namespaced_job(ns, job)

    def done() -> bool:
        status = batch.read_namespaced_job_status("ok", ns).status
        conds = {c.type: c.status for c in (status.conditions or [])}
        assert conds.get("Failed") != "True", status
        return conds.get("Complete") == "True" and status.succeeded == 1

    _poll(kube_cluster, "job ok Complete", done)
    pods = core.list_namespaced_pod(ns, label_selector="job-name=ok").items
    assert [p.status.phase for p in pods] == ["Succeeded"]
    assert pods[0].spec.node_name in kube_cluster.node_names
    term = pods[0].status.container_statuses[0].state.terminated
    assert term.exit_code == 0 and term.reason == "Completed"


def test_failure_annotation_fails_pod(kube_cluster: KubeCluster) -> None:
    k = _k()
    ns = _namespace(kube_cluster)
    core = k.CoreV1Api(kube_cluster.api_client())
    core.create_namespaced_pod(
        ns,
        k.V1Pod(
            metadata=k.V1ObjectMeta(name="boom", annotations={OUTCOME_ANNOTATION: "fail", EXIT_CODE_ANNOTATION: "3"}),
            spec=k.V1PodSpec(restart_policy="Never", containers=[_restricted_container()]),
        ),
    )
    pod = kube_cluster.wait_for_pod(ns, "boom", lambda p: p.status.phase == "Failed", what="Failed")
    term = pod.status.container_statuses[0].state.terminated
    assert term.exit_code == 3
    assert term.reason == "Error"


def test_failure_annotation_fails_job(kube_cluster: KubeCluster) -> None:
    k = _k()
    ns = _namespace(kube_cluster)
    batch = k.BatchV1Api(kube_cluster.api_client())
    batch.create_namespaced_job(
        ns,
        k.V1Job(
            metadata=k.V1ObjectMeta(name="bad"),
            spec=k.V1JobSpec(
                backoff_limit=0,
                template=k.V1PodTemplateSpec(
                    metadata=k.V1ObjectMeta(annotations={OUTCOME_ANNOTATION: "fail"}),
                    spec=k.V1PodSpec(restart_policy="Never", containers=[_restricted_container()]),
                ),
            ),
        ),
    )

    def failed() -> bool:
        status = batch.read_namespaced_job_status("bad", ns).status
        conds = {c.type: c.status for c in (status.conditions or [])}
        return conds.get("Failed") == "True" and status.failed == 1

    _poll(kube_cluster, "job bad Failed", failed)
    pods = k.CoreV1Api(kube_cluster.api_client()).list_namespaced_pod(ns, label_selector="job-name=bad").items
    assert pods[0].status.container_statuses[0].state.terminated.exit_code == 1


def test_pods_run_before_finishing(kube_cluster: KubeCluster) -> None:
    """A run-once pod is Running for its run duration; outcome "hang" keeps it Running."""
    import time

    k = _k()
    ns = _namespace(kube_cluster)
    core = k.CoreV1Api(kube_cluster.api_client())
    for name, notes in [
        ("slow", {RUN_DURATION_ANNOTATION: "3s"}),
        ("hang", {OUTCOME_ANNOTATION: "hang"}),
    ]:
        core.create_namespaced_pod(
            ns,
            k.V1Pod(
                metadata=k.V1ObjectMeta(name=name, annotations=notes),
                spec=k.V1PodSpec(restart_policy="Never", containers=[_restricted_container()]),
            ),
        )
    for name in ("slow", "hang"):
        pod = kube_cluster.wait_for_pod(ns, name, lambda p: p.status.phase == "Running", what="Running")
        assert pod.status.container_statuses[0].state.running is not None
        assert pod.status.pod_ip
    started = time.monotonic()
    kube_cluster.wait_for_pod(ns, "slow", lambda p: p.status.phase == "Succeeded", what="Succeeded")
    assert time.monotonic() - started > 1.0
    assert core.read_namespaced_pod("hang", ns).status.phase == "Running"


def test_missing_image_gets_pull_error(kube_cluster: KubeCluster) -> None:
    k = _k()
    ns = _namespace(kube_cluster)
    core = k.CoreV1Api(kube_cluster.api_client())
    image = f"registry.invalid/{PULL_ERROR_IMAGE_MARKER}:1"
    core.create_namespaced_pod(
        ns,
        k.V1Pod(
            metadata=k.V1ObjectMeta(name="nopull"),
            spec=k.V1PodSpec(restart_policy="Never", containers=[_restricted_container(image=image)]),
        ),
    )

    def waiting_reason(p: Any) -> str | None:
        statuses = p.status.container_statuses or []
        waiting = statuses[0].state.waiting if statuses else None
        return waiting.reason if waiting else None

    pod = kube_cluster.wait_for_pod(
        ns,
        "nopull",
        lambda p: waiting_reason(p) in {"ErrImagePull", "ImagePullBackOff"},
        what="image pull error",
    )
    assert pod.status.phase == "Pending"
    pod = kube_cluster.wait_for_pod(
        ns, "nopull", lambda p: waiting_reason(p) == "ImagePullBackOff", what="ImagePullBackOff"
    )
    assert pod.status.phase == "Pending"


def test_rbac_denies_unprivileged_users(kube_cluster: KubeCluster) -> None:
    k = _k()
    from kubernetes.client.rest import ApiException

    authz = k.AuthorizationV1Api(kube_cluster.api_client())
    for user, groups in [
        ("system:anonymous", ["system:unauthenticated"]),
        ("nobody", ["system:authenticated"]),
    ]:
        review = authz.create_subject_access_review(
            k.V1SubjectAccessReview(
                spec=k.V1SubjectAccessReviewSpec(
                    user=user,
                    groups=groups,
                    resource_attributes=k.V1ResourceAttributes(verb="create", resource="pods", namespace="default"),
                )
            )
        )
        assert review.status.allowed is False, (user, review.status)

    # ...and the apiserver enforces it: a real request as a user without grants is a 403.
    with pytest.raises(ApiException) as err:
        k.CoreV1Api(kube_cluster.client_for("nobody")).list_namespaced_pod("default")
    assert err.value.status == 403

    # The admin (system:masters) is allowed.
    review = authz.create_subject_access_review(
        k.V1SubjectAccessReview(
            spec=k.V1SubjectAccessReviewSpec(
                user="mendflow-admin",
                groups=["system:masters"],
                resource_attributes=k.V1ResourceAttributes(verb="create", resource="pods", namespace="default"),
            )
        )
    )
    assert review.status.allowed is True


def test_ttl_after_finished_deletes_job(kube_cluster: KubeCluster) -> None:
    """ttl-after-finished + garbage collector run: a finished Job and its pod go away."""
    k = _k()
    ns = _namespace(kube_cluster)
    client = kube_cluster.api_client()
    batch, core = k.BatchV1Api(client), k.CoreV1Api(client)
    batch.create_namespaced_job(
        ns,
        k.V1Job(
            metadata=k.V1ObjectMeta(name="short"),
            spec=k.V1JobSpec(
                ttl_seconds_after_finished=0,
                template=k.V1PodTemplateSpec(
                    spec=k.V1PodSpec(restart_policy="Never", containers=[_restricted_container()]),
                ),
            ),
        ),
    )

    def gone() -> bool:
        jobs = batch.list_namespaced_job(ns).items
        pods = core.list_namespaced_pod(ns).items
        return not jobs and not pods

    _poll(kube_cluster, "job and pod deleted after TTL", gone)


def _poll(cluster: KubeCluster, what: str, check: Any, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while True:
        cluster.check_alive()
        if check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)
