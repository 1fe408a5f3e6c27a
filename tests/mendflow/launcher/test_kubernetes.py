"""KubernetesLauncher against a real control plane (kwok fakes the kubelet: no container runs).

Runs as the mendflow-worker ServiceAccount from k8s/base in the restricted mendflow-jobs namespace, so
every test also proves the least-privilege Role is enough.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k
from kubernetes.client.rest import ApiException

from mendflow.errors import ConfigError, LaunchError
from mendflow.launcher import k8s_watch
from mendflow.launcher.base import Handoff, JobResult, JobSpec, JobState
from mendflow.launcher.k8s_manifest import DEPENDENCIES, HANDOFF_NAME
from mendflow.launcher.k8s_status import TRANSFER_MARKER
from mendflow.launcher.kubernetes import KubernetesLauncher, reap
from mendflow.settings import KubernetesSettings, Settings
from tests.fixtures.kube import (
    MESSAGE_ANNOTATION,
    OUTCOME_ANNOTATION,
    PULL_ERROR_IMAGE_MARKER,
    RUN_DURATION_ANNOTATION,
)
from tests.k8s import fixtures as k8s_fixtures
from tests.k8s.fixtures import JOBS_NS, Deployed

pytestmark = pytest.mark.slow
_session_fixture = k8s_fixtures.k8s_deployed_fixture  # registers `k8s_deployed` + its leftover check

GRACE_SEC = 3
TERMINATE_ANNOTATION = "mendflow.test/terminate"  # tests/fixtures/kwok-stages/pod-oom-evict.yaml
URL = "https://store.example/bucket/key?X-Amz-Signature=0"


def use_kubeconfig(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """As if KUBECONFIG had been set when the process started (the client reads it once, at import)."""
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.setattr("kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION", str(path))


class KwokLauncher(KubernetesLauncher):
    """The real launcher; only the pod's annotations (kwok's script) or a deliberate spec change added."""

    def __init__(
        self,
        settings: Settings,
        annotations: dict[str, str] | None = None,
        patch: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(settings)
        self.annotations, self.patch = annotations or {}, patch
        self.job_names: list[str] = []

    def build_job(self, spec: JobSpec, name: str) -> Any:
        job = super().build_job(spec, name)
        job.spec.template.metadata.annotations = {RUN_DURATION_ANNOTATION: "200ms", **self.annotations}
        if self.patch:
            self.patch(job)
        self.job_names.append(name)
        return job


@pytest.fixture
def settings(k8s_deployed: Deployed, monkeypatch: pytest.MonkeyPatch) -> Settings:
    use_kubeconfig(monkeypatch, k8s_deployed.worker_kubeconfig)
    return Settings(
        kubernetes=KubernetesSettings(
            namespace=JOBS_NS,
            context="mendflow-test",
            image_pull_grace_sec=GRACE_SEC,
            ttl_seconds_after_finished=60,
        )
    )


@pytest.fixture
def admin(k8s_deployed: Deployed) -> Iterator[tuple[k.BatchV1Api, k.CoreV1Api]]:
    api = k8s_deployed.admin()
    yield k.BatchV1Api(api), k.CoreV1Api(api)


def _spec(**changes: Any) -> JobSpec:
    base: dict[str, Any] = {
        "name": "build-b1-3f2a1c9d-1",
        "image": "ci-runner-python",
        "command": ["python", "-m", "mendflow_runner"],
        "cpu_limit": 0.5,
        "memory_limit_mb": 512,
        "timeout_sec": 120,
        "inputs": {"source.tar.gz": URL},
        "outputs": {"report.json": URL},
        "labels": {"repo": "acme/widgets", "commit": "3f2a1c9d" * 5, "stage": "B1", "attempt": "1"},
    }
    return JobSpec(**{**base, **changes})


def _run(launcher: KubernetesLauncher, spec: JobSpec | None = None) -> tuple[JobResult, float]:
    started = time.monotonic()
    result = launcher.run(spec or _spec())
    return result, time.monotonic() - started


def _assert_deleted(batch: k.BatchV1Api, name: str, namespace: str = JOBS_NS) -> None:
    """The launcher deleted the Job before returning (not the TTL, which is 60 s here)."""
    try:
        job = batch.read_namespaced_job(name, namespace)
    except ApiException as exc:
        assert exc.status == 404
        return
    assert job.metadata.deletion_timestamp is not None, f"job {name} still exists"


def test_successful_job_succeeds_and_is_deleted(settings: Settings, admin: Any) -> None:
    launcher = KwokLauncher(settings)
    result, took = _run(launcher)
    assert (result.state, result.exit_code) == (JobState.SUCCEEDED, 0), result.reason
    assert took < 20
    _assert_deleted(admin[0], launcher.job_names[0])
    # create + pod watch + delete (+ a log stream once the pod ran): counted, and few
    assert 3 <= launcher.last_api_calls <= 6, launcher.last_api_calls


def test_stage_pod_is_admitted_under_restricted_pod_security(settings: Settings, admin: Any) -> None:
    seen: list[Any] = []

    def keep(job: Any) -> None:
        seen.append(job)

    launcher = KwokLauncher(settings, {OUTCOME_ANNOTATION: "hang"}, patch=keep)
    core = admin[1]
    labels = core.read_namespace(JOBS_NS).metadata.labels
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    thread = threading.Thread(target=launcher.run, args=(_spec(timeout_sec=3),))
    thread.start()
    try:
        deadline = time.monotonic() + 20
        pods: list[Any] = []
        while not pods and time.monotonic() < deadline:
            pods = [
                p
                for p in core.list_namespaced_pod(JOBS_NS).items
                if p.metadata.labels.get("job-name") == launcher.job_names[0]
            ]
            time.sleep(0.2)
        assert pods, "the restricted namespace did not admit the stage pod"
        sc = pods[0].spec.containers[0].security_context
        assert sc.read_only_root_filesystem and sc.capabilities.drop == ["ALL"]
        assert pods[0].spec.automount_service_account_token is False
    finally:
        thread.join(60)


def test_privileged_spec_is_rejected_by_admission(settings: Settings, admin: Any) -> None:
    def make_root(job: Any) -> None:
        pod = job.spec.template.spec
        pod.security_context.run_as_user = 0
        pod.security_context.run_as_non_root = False
        pod.containers[0].security_context = k.V1SecurityContext(privileged=True, run_as_user=0)

    launcher = KwokLauncher(settings, patch=make_root)
    result, took = _run(launcher)
    assert result.state is JobState.ERROR
    assert "violate PodSecurity" in str(result.reason) and "privileged" in str(result.reason)
    assert took < 10
    _assert_deleted(admin[0], launcher.job_names[0])
    # ...and the API server itself refuses such a pod in this namespace, whoever creates it.
    bad = KwokLauncher(settings, patch=make_root).build_job(_spec(), "x").spec.template
    with pytest.raises(ApiException) as err:
        admin[1].create_namespaced_pod(JOBS_NS, k.V1Pod(metadata=k.V1ObjectMeta(name="root"), spec=bad.spec))
    assert err.value.status == 403 and "violates PodSecurity" in err.value.body


def test_deadline_exceeded_is_timed_out_with_reason(settings: Settings, admin: Any) -> None:
    launcher = KwokLauncher(settings, {OUTCOME_ANNOTATION: "hang"})
    result, took = _run(launcher, _spec(timeout_sec=2))
    assert result.state is JobState.TIMED_OUT
    assert "DeadlineExceeded" in str(result.reason) and "2s timeout" in str(result.reason)
    assert took < 20
    _assert_deleted(admin[0], launcher.job_names[0])


def test_image_pull_failure_is_an_error_naming_the_image_within_the_grace(settings: Settings) -> None:
    image = f"registry.invalid/{PULL_ERROR_IMAGE_MARKER}:1"
    result, took = _run(KwokLauncher(settings), _spec(image=image))
    assert result.state is JobState.ERROR
    assert image in str(result.reason) and "could not be pulled" in str(result.reason)
    assert GRACE_SEC <= took < GRACE_SEC + 10


def test_oom_killed_is_reported(settings: Settings) -> None:
    result, _ = _run(KwokLauncher(settings, {OUTCOME_ANNOTATION: "hang", TERMINATE_ANNOTATION: "oom"}))
    assert (result.state, result.exit_code) == (JobState.OOM_KILLED, 137)
    assert "512 MiB" in str(result.reason)


def test_evicted_pod_is_an_error(settings: Settings) -> None:
    result, _ = _run(KwokLauncher(settings, {OUTCOME_ANNOTATION: "hang", TERMINATE_ANNOTATION: "evict"}))
    assert result.state is JobState.ERROR
    assert str(result.reason).startswith("Evicted: The node was low on resource: memory.")


def test_unschedulable_pod_is_an_error_after_the_grace(settings: Settings) -> None:
    def pin_to_no_node(job: Any) -> None:
        job.spec.template.spec.node_selector = {"mendflow.test/no-such-node": "true"}

    result, took = _run(KwokLauncher(settings, patch=pin_to_no_node))
    assert result.state is JobState.ERROR
    assert "Unschedulable" in str(result.reason) and "node" in str(result.reason)
    assert GRACE_SEC <= took < GRACE_SEC + 10


def test_job_that_makes_no_pod_is_an_error_saying_why(settings: Settings) -> None:
    def wrong_account(job: Any) -> None:
        job.spec.template.spec.service_account_name = "no-such-account"

    result, took = _run(KwokLauncher(settings, patch=wrong_account))
    assert result.state is JobState.ERROR
    assert "no pod was created" in str(result.reason) and "no-such-account" in str(result.reason)
    assert took < GRACE_SEC + 10


def test_crash_while_watching_deletes_the_job(settings: Settings, admin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_args: Any) -> None:
        raise RuntimeError("simulated crash in the watch")

    monkeypatch.setattr(k8s_watch.JobWatcher, "_on_event", crash)
    launcher = KwokLauncher(settings, {OUTCOME_ANNOTATION: "hang"})
    with pytest.raises(RuntimeError, match="simulated crash"):
        launcher.run(_spec())
    _assert_deleted(admin[0], launcher.job_names[0])


def test_file_urls_are_refused_before_anything_is_created(settings: Settings, admin: Any) -> None:
    launcher = KwokLauncher(settings)
    before = len(admin[0].list_namespaced_job(JOBS_NS).items)
    with pytest.raises(ConfigError, match="needs an s3:// artefact store"):
        launcher.run(_spec(outputs={"report.json": "file:///tmp/report.json"}))
    assert launcher.job_names == [] and len(admin[0].list_namespaced_job(JOBS_NS).items) == before


def test_missing_namespace_is_a_launch_error(settings: Settings) -> None:
    other = settings.model_copy(update={"kubernetes": settings.kubernetes.model_copy(update={"namespace": "nope"})})
    with pytest.raises(LaunchError, match=r"not allowed|does not exist"):
        KwokLauncher(other).run(_spec())


def test_unknown_context_is_a_config_error(settings: Settings) -> None:
    bad = settings.model_copy(update={"kubernetes": settings.kubernetes.model_copy(update={"context": "nope"})})
    with pytest.raises(ConfigError, match="kubeconfig context 'nope'"):
        KubernetesLauncher(bad)


def test_reap_deletes_only_old_mendflow_jobs(
    settings: Settings, admin: Any, k8s_deployed: Deployed, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its own namespace, so reaping cannot hide what other tests leave behind from the leftover check.
    namespace = "mendflow-reap-test"
    k8s_deployed.cluster.create_namespace(namespace, {"pod-security.kubernetes.io/enforce": "restricted"})
    use_kubeconfig(monkeypatch, k8s_deployed.cluster.kubeconfig)  # `mendflow reap` runs as an admin
    kube = settings.kubernetes.model_copy(update={"namespace": namespace, "service_account": "default"})
    reaper_settings = settings.model_copy(update={"build_timeout_sec": 900, "kubernetes": kube})
    batch = admin[0]
    orphan = KwokLauncher(reaper_settings).build_job(_spec(), "orphan-abc123")  # as a killed worker leaves it
    orphan.spec.template.metadata.annotations = {OUTCOME_ANNOTATION: "hang"}
    long_job = KwokLauncher(reaper_settings).build_job(_spec(timeout_sec=5000), "long-abc123")  # e.g. Pynguin
    long_job.spec.template.metadata.annotations = {OUTCOME_ANNOTATION: "hang"}
    unmanaged = KwokLauncher(reaper_settings).build_job(_spec(), "not-ours-abc123")
    unmanaged.metadata.labels = unmanaged.spec.template.metadata.labels = {"app": "someone-else"}
    for job in (orphan, long_job, unmanaged):
        batch.create_namespaced_job(namespace, job)
    try:
        assert reap(reaper_settings) == []  # young: each might belong to a live run
        created = batch.read_namespaced_job("orphan-abc123", namespace).metadata.creation_timestamp
        # Past twice the build timeout: the 120 s job is over for sure, the 5000 s one may still run.
        deleted = reap(reaper_settings, now=created + timedelta(seconds=2000))
        assert "job/orphan-abc123" in deleted and "job/long-abc123" not in deleted
        _assert_deleted(batch, "orphan-abc123", namespace)
        deleted += reap(reaper_settings, older_than_sec=0)
        assert "job/long-abc123" in deleted and not [d for d in deleted if "not-ours" in d]
        assert batch.read_namespaced_job("not-ours-abc123", namespace).metadata.deletion_timestamp is None
    finally:
        k.CoreV1Api(k8s_deployed.admin()).delete_namespace(namespace)


def _summary(*delivered: str) -> str:
    """The in-pod transfer wrapper's termination message (mendflow_runner.transfer.summary)."""
    return json.dumps({TRANSFER_MARKER: 1, "exit_code": 0, "delivered": list(delivered), "error": None, "tail": ""})


def _split_launcher(settings: Settings, first_delivers: tuple[str, ...]) -> KwokLauncher:
    """Each pod says it delivered what its phase would: the dependency pod ``first_delivers``, the next its report."""
    proxied = settings.model_copy(
        update={"kubernetes": settings.kubernetes.model_copy(update={"egress_proxy": "http://proxy.example:3128"})}
    )

    def deliver(job: Any) -> None:
        phase = job.spec.template.metadata.labels.get("mendflow.dev/phase")
        said = _summary(*first_delivers) if phase == DEPENDENCIES else _summary("report.json")
        job.spec.template.metadata.annotations[MESSAGE_ANNOTATION] = said

    return KwokLauncher(proxied, patch=deliver)


SPLITTABLE = {"handoff": Handoff(upload=URL + "&put", download=URL + "&get")}


def test_a_job_that_installs_runs_as_a_dependency_pod_then_an_offline_pod(settings: Settings, admin: Any) -> None:
    launcher = _split_launcher(settings, (HANDOFF_NAME,))
    result, _ = _run(launcher, _spec(**SPLITTABLE))
    assert result.state is JobState.SUCCEEDED, result.reason
    assert [name.rsplit("-", 2)[-2] for name in launcher.job_names] == ["deps", "run"]
    assert result.outputs == {"report.json": URL}  # the archive is the pods' business, not the caller's
    for name in launcher.job_names:
        _assert_deleted(admin[0], name)


def test_no_offline_pod_starts_when_the_dependency_pod_left_no_archive(settings: Settings) -> None:
    launcher = _split_launcher(settings, ("report.json",))  # installing failed: the runner reported it
    result, _ = _run(launcher, _spec(**SPLITTABLE))
    assert len(launcher.job_names) == 1 and result.outputs == {"report.json": URL}


def test_without_an_egress_proxy_the_job_stays_one_pod(settings: Settings) -> None:
    launcher = KwokLauncher(settings)
    result, _ = _run(launcher, _spec(**SPLITTABLE))
    assert result.state is JobState.SUCCEEDED and len(launcher.job_names) == 1


def test_get_launcher_picks_kubernetes_from_settings(settings: Settings) -> None:
    from mendflow.launcher import get_launcher

    launcher = get_launcher(settings.model_copy(update={"launcher": "kubernetes"}))
    assert isinstance(launcher, KubernetesLauncher) and launcher.name == "kubernetes"
    assert launcher.namespace == JOBS_NS
