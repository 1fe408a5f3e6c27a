"""k8s/base on a real control plane: admitted, restricted, and the worker can do exactly what it needs."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client as k
from kubernetes.client.rest import ApiException

from tests.k8s import fixtures as k8s_fixtures
from tests.k8s.fixtures import CONTROL_NS, JOBS_NS, WORKER_GROUPS, WORKER_USER, Deployed
from tests.k8s.test_manifests import TEMPLATE

pytestmark = pytest.mark.slow
_session_fixture = k8s_fixtures.k8s_deployed_fixture  # registers `k8s_deployed` + its leftover check

JOB_SA = f"system:serviceaccount:{JOBS_NS}:mendflow-job"


def _allowed(
    deployed: Deployed,
    user: str,
    groups: tuple[str, ...],
    verb: str,
    resource: str,
    namespace: str | None,
    *,
    group: str = "",
    subresource: str | None = None,
) -> bool:
    review = k.AuthorizationV1Api(deployed.admin()).create_subject_access_review(
        k.V1SubjectAccessReview(
            spec=k.V1SubjectAccessReviewSpec(
                user=user,
                groups=list(groups),
                resource_attributes=k.V1ResourceAttributes(
                    verb=verb, resource=resource, group=group, namespace=namespace, subresource=subresource
                ),
            )
        )
    )
    return bool(review.status.allowed)


NEEDED = [  # (verb, group, resource, subresource), in both namespaces unless noted
    ("create", "batch", "jobs", None),
    ("get", "batch", "jobs", None),
    ("list", "batch", "jobs", None),
    ("watch", "batch", "jobs", None),
    ("delete", "batch", "jobs", None),
    ("get", "", "pods", None),
    ("list", "", "pods", None),
    ("watch", "", "pods", None),
    ("get", "", "pods", "log"),
]
FORBIDDEN = [
    ("create", "", "pods", None),
    ("delete", "", "pods", None),
    ("create", "", "pods", "exec"),
    ("update", "batch", "jobs", None),
    ("patch", "batch", "jobs", None),
    ("get", "", "secrets", None),
    ("list", "", "secrets", None),
    ("create", "", "secrets", None),
    ("get", "", "configmaps", None),
    ("create", "", "serviceaccounts", "token"),
    ("create", "rbac.authorization.k8s.io", "rolebindings", None),
    ("patch", "", "namespaces", None),
]


@pytest.mark.parametrize("namespace", [CONTROL_NS, JOBS_NS])
@pytest.mark.parametrize(("verb", "group", "resource", "sub"), NEEDED)
def test_worker_can_do_what_it_needs(
    k8s_deployed: Deployed, namespace: str, verb: str, group: str, resource: str, sub: str | None
) -> None:
    assert _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, verb, resource, namespace, group=group, subresource=sub)


@pytest.mark.parametrize("namespace", [CONTROL_NS, JOBS_NS])
@pytest.mark.parametrize(("verb", "group", "resource", "sub"), FORBIDDEN)
def test_worker_can_do_nothing_more(
    k8s_deployed: Deployed, namespace: str, verb: str, group: str, resource: str, sub: str | None
) -> None:
    assert not _allowed(
        k8s_deployed, WORKER_USER, WORKER_GROUPS, verb, resource, namespace, group=group, subresource=sub
    )


def test_worker_events_access_is_list_in_the_jobs_namespace_only(k8s_deployed: Deployed) -> None:
    assert _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, "list", "events", JOBS_NS)
    assert not _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, "list", "events", CONTROL_NS)
    assert not _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, "watch", "events", JOBS_NS)


@pytest.mark.parametrize("namespace", ["default", "kube-system", None])
def test_worker_has_no_rights_elsewhere(k8s_deployed: Deployed, namespace: str | None) -> None:
    assert not _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, "create", "jobs", namespace, group="batch")
    assert not _allowed(k8s_deployed, WORKER_USER, WORKER_GROUPS, "list", "pods", namespace)


@pytest.mark.parametrize(
    ("verb", "group", "resource"),
    [
        ("create", "", "pods"),
        ("get", "", "secrets"),
        ("list", "", "pods"),
        ("create", "batch", "jobs"),
    ],
)
def test_job_service_account_has_no_rights(k8s_deployed: Deployed, verb: str, group: str, resource: str) -> None:
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{JOBS_NS}", "system:authenticated")
    assert not _allowed(k8s_deployed, JOB_SA, groups, verb, resource, JOBS_NS, group=group)


def test_the_api_server_enforces_the_workers_limits(k8s_deployed: Deployed) -> None:
    core = k.CoreV1Api(k8s_deployed.cluster._client_from(k8s_deployed.worker_kubeconfig))
    core.list_namespaced_pod(JOBS_NS)  # allowed
    with pytest.raises(ApiException) as err:
        core.list_namespaced_secret(JOBS_NS)
    assert err.value.status == 403


def test_worker_deployment_is_admitted_and_runs_restricted(k8s_deployed: Deployed) -> None:
    core = k.CoreV1Api(k8s_deployed.admin())
    deadline = time.monotonic() + 60
    pods: list[Any] = []
    while time.monotonic() < deadline:
        pods = core.list_namespaced_pod(CONTROL_NS, label_selector="app.kubernetes.io/name=prefect-worker").items
        if pods and pods[0].status.phase == "Running":
            break
        time.sleep(0.5)
    assert pods and pods[0].status.phase == "Running", "the worker pod was not admitted under restricted PSA"
    assert pods[0].spec.service_account_name == "mendflow-worker"


def test_prefect_flow_run_pod_template_is_admitted_under_restricted(k8s_deployed: Deployed) -> None:
    from tests.k8s.test_manifests import _render_template

    assert TEMPLATE.is_file()
    template = _render_template()["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "flow-run-dry-run"},
        "spec": template["spec"],
    }
    core = k.CoreV1Api(k8s_deployed.admin())
    created = core.create_namespaced_pod(CONTROL_NS, pod, dry_run="All")  # admission runs, nothing is stored
    assert created.metadata.name == "flow-run-dry-run"
    bad = json.loads(json.dumps(pod))
    bad["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(CONTROL_NS, bad, dry_run="All")
    assert err.value.status == 403 and "allowPrivilegeEscalation" in err.value.body
