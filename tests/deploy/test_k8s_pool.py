"""The Kubernetes work pool: k8s/base/worker.yaml, k8s/prefect/base-job-template.json and prefect.yaml agree, and a
real `prefect worker start --type kubernetes` (configured as worker.yaml configures it, authenticated as the
mendflow-worker ServiceAccount) turns a run of `ci-build/kubernetes` into the Job and pod the template describes.

The control plane is real (tests/fixtures/kube.py); kwok schedules the pod but runs no container, so the flow
itself never starts: the assertions are about what the worker created.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import prefect
import pytest
import yaml
from kubernetes import client as k

from tests.deploy.conftest import PREFECT_YAML, ROOT, _start, create_pools, poll, prefect_cli
from tests.fixtures.prefect import PrefectServer, free_port, stop
from tests.k8s import fixtures as k8s_fixtures
from tests.k8s.fixtures import CONTROL_NS, Deployed

_session_fixture = k8s_fixtures.k8s_deployed_fixture  # registers `k8s_deployed` + its leftover check

TEMPLATE = json.loads((ROOT / "k8s" / "prefect" / "base-job-template.json").read_text())
DEFAULTS = {name: spec.get("default") for name, spec in TEMPLATE["variables"]["properties"].items()}
POD_TEMPLATE = TEMPLATE["job_configuration"]["job_manifest"]["spec"]["template"]["spec"]
(CONTAINER_TEMPLATE,) = POD_TEMPLATE["containers"]
WORKER = yaml.safe_load((ROOT / "k8s" / "base" / "worker.yaml").read_text())
WORKER_POD = WORKER["spec"]["template"]["spec"]
(WORKER_CONTAINER,) = WORKER_POD["containers"]
POOL = yaml.safe_load(PREFECT_YAML.read_text())["definitions"]["work_pools"]["kubernetes"]["name"]
DEPLOYMENT = "ci-build/kubernetes"


def worker_option(flag: str) -> str:
    command = WORKER_CONTAINER["command"]
    return str(command[command.index(flag) + 1])


def test_worker_polls_the_pool_the_kubernetes_deployments_use() -> None:
    assert (worker_option("--pool"), worker_option("--type")) == (POOL, "kubernetes")


def test_flow_run_jobs_go_to_the_workers_namespace_under_its_service_account() -> None:
    """k8s/base binds the job-runner Role to this account in this namespace; flow pods launch stage Jobs with it."""
    assert DEFAULTS["namespace"] == WORKER["metadata"]["namespace"] == CONTROL_NS
    assert DEFAULTS["service_account_name"] == WORKER_POD["serviceAccountName"]


def test_worker_image_runs_the_prefect_version_of_the_lock() -> None:
    """The worker renders the template and the flow image runs the engine: one Prefect version for both."""
    assert WORKER_CONTAINER["image"].split(":")[1].split("-")[0] == prefect.__version__


# --------------------------------------------------------------------------- a real worker on the cluster


@dataclass
class Created:
    flow_run_id: str
    job: dict[str, Any]
    pod: dict[str, Any]


def worker_env(server: PrefectServer, kubeconfig: Path, home: Path) -> dict[str, str]:
    """worker.yaml's environment, pointed at the test server and control plane."""
    env = {e["name"]: e["value"] for e in WORKER_CONTAINER["env"] if "value" in e}  # Secret refs: none in tests
    env |= {"HOME": str(home), "PREFECT_HOME": str(home / "prefect")}
    env["PREFECT_WORKER_WEBSERVER_PORT"] = str(free_port())
    env["PREFECT_WORKER_QUERY_SECONDS"] = "2"
    return {**os.environ, **env, **server.env, "KUBECONFIG": str(kubeconfig)}


@pytest.fixture(scope="module")
def created(
    prefect_server: PrefectServer, k8s_deployed: Deployed, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Created]:
    create_pools(prefect_server)
    prefect_cli(prefect_server, "deploy", "--name", DEPLOYMENT)
    home = tmp_path_factory.mktemp("k8s-worker")
    log = home / "worker.log"
    command = [sys.executable, "-m", "prefect", *WORKER_CONTAINER["command"][1:]]
    api = k8s_deployed.admin()
    batch, core = k.BatchV1Api(api), k.CoreV1Api(api)
    with prefect.get_client(sync_client=True) as client:
        deployment_id = client.read_deployment_by_name(DEPLOYMENT).id
        run = client.create_flow_run_from_deployment(deployment_id, parameters={"repo": "https://git.example/a/b.git"})
    selector = f"prefect.io/flow-run-id={run.id}"
    proc = _start(command, worker_env(prefect_server, k8s_deployed.worker_kubeconfig, home), log, cwd=home)
    try:

        def job() -> Any:
            jobs = batch.list_namespaced_job(CONTROL_NS, label_selector=selector).items
            return jobs[0] if jobs else None

        def scheduled_pod() -> Any:
            pods = core.list_namespaced_pod(CONTROL_NS, label_selector=f"job-name={found.metadata.name}").items
            return pods[0] if pods and pods[0].spec.node_name else None

        try:
            found = poll("the worker's Job", job, timeout=120)
            pod = poll("the Job's pod to be scheduled", scheduled_pod, timeout=60)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nworker log:\n{log.read_text()[-4000:]}") from None
        yield Created(str(run.id), api.sanitize_for_serialization(found), api.sanitize_for_serialization(pod))
    finally:
        stop(proc)
        batch.delete_collection_namespaced_job(CONTROL_NS, label_selector=selector, propagation_policy="Background")


def test_job_is_created_in_the_templates_namespace(created: Created) -> None:
    assert created.job["metadata"]["namespace"] == DEFAULTS["namespace"]


def test_job_runs_the_templates_image(created: Created) -> None:
    (container,) = created.job["spec"]["template"]["spec"]["containers"]
    assert container["image"] == DEFAULTS["image"]


def test_job_carries_the_templates_security_contexts(created: Created) -> None:
    spec = created.job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["securityContext"] == CONTAINER_TEMPLATE["securityContext"]
    assert spec["securityContext"] == POD_TEMPLATE["securityContext"]


def test_pod_is_scheduled_under_the_templates_service_account(created: Created) -> None:
    assert created.pod["metadata"]["namespace"] == DEFAULTS["namespace"]
    assert created.pod["spec"]["serviceAccountName"] == DEFAULTS["service_account_name"]
    assert created.pod["spec"]["automountServiceAccountToken"] is True  # it launches the stage Jobs


def test_pod_env_keeps_the_templates_entries_beside_the_workers(created: Created) -> None:
    (container,) = created.pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["HOME"] == "/tmp" and env["PREFECT__FLOW_RUN_ID"] == created.flow_run_id
