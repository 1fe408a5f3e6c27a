"""Run stage jobs as Kubernetes Jobs: one Job per run, watched to a precise verdict, always deleted.

* Network by phase: with ``kubernetes.egress_proxy`` set, a job that installs dependencies (``JobSpec.handoff``)
  runs as two Jobs, the dependency pod (labelled to reach the index proxy) and the offline pod; its installed
  environments pass between them through the store (``mendflow_runner.handoff``).
* The Job (``k8s_manifest``): restricted Pod Security, read-only root, emptyDir workspace, no
  ServiceAccount token, no Secret: inputs and outputs travel by presigned URL, handled in the pod by
  ``mendflow_runner.transfer``.
* The watch (``k8s_watch``/``k8s_status``): one pod watch; pull errors and unschedulable pods end after
  ``settings.kubernetes.image_pull_grace_sec``; DeadlineExceeded, OOMKilled, Evicted and exit codes end it
  at once.
* Cleanup: the Job is deleted (propagation Background) in ``finally``, whatever ended the run; ``reap``
  removes what a killed worker left behind.

API calls are counted per run (``last_api_calls``) and in total (``api_calls``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import urllib3
from kubernetes import client as k
from kubernetes import config as kconfig
from kubernetes.client.rest import ApiException

from mendflow import blocks
from mendflow.errors import ConfigError, LaunchError
from mendflow.launcher.base import JobResult, JobSpec, JobState, Launcher, OnOutput, output_sink
from mendflow.launcher.k8s_logs import LogFollower, run_logger
from mendflow.launcher.k8s_manifest import (
    DEPENDENCIES,
    HANDOFF_NAME,
    OFFLINE,
    SELECTOR,
    build_job,
    check_urls,
    job_name,
    phase_spec,
)
from mendflow.launcher.k8s_status import Verdict, transfer_summary
from mendflow.launcher.k8s_watch import BACKSTOP_SLACK_SEC, JobWatcher
from mendflow.settings import Settings, get_settings

LOG_TAIL_CHARS = 20_000
_APPLY_HINT = "apply the manifests first: kubectl apply -k k8s/base"


class _Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.value += n


def load_configuration(settings: Settings) -> k.Configuration:
    """The API client configuration: the named kubeconfig context, else the current one, else in-cluster."""
    cfg = k.Configuration()
    from_block = blocks.kubeconfig(settings.kubernetes)
    if from_block is not None:
        config_dict, block_context = from_block
        kconfig.load_kube_config_from_dict(config_dict, context=block_context, client_configuration=cfg)
        return cfg
    context = settings.kubernetes.context
    try:
        kconfig.load_kube_config(context=context, client_configuration=cfg)
        return cfg
    except (kconfig.ConfigException, OSError) as exc:
        if context:
            raise ConfigError(
                f"kubeconfig context {context!r} is unusable: {exc}",
                hint="check MENDFLOW_KUBERNETES__CONTEXT and KUBECONFIG",
            ) from exc
    try:
        kconfig.load_incluster_config(client_configuration=cfg)
    except kconfig.ConfigException as exc:
        raise ConfigError(
            "no kubeconfig found and not running in a cluster",
            hint="set KUBECONFIG or MENDFLOW_KUBERNETES__CONTEXT",
        ) from exc
    return cfg


def counting_client(cfg: k.Configuration, counter: _Counter) -> k.ApiClient:
    """An ApiClient that counts every request it sends (watches and log streams are one each)."""
    api = k.ApiClient(configuration=cfg)
    call_api: Callable[..., Any] = api.call_api

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter.add()
        return call_api(*args, **kwargs)

    api.call_api = counted  # type: ignore[method-assign]
    return api


def _flow_run_id() -> str | None:
    try:
        from prefect.runtime import flow_run

        value = flow_run.id
        return str(value) if value else None
    except Exception:  # outside Prefect, or an older runtime API: the label is optional
        return None


class KubernetesLauncher(Launcher):
    name = "kubernetes"

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.namespace = self.settings.kubernetes.namespace
        self._config = load_configuration(self.settings)
        self._total = _Counter()
        self.last_api_calls = 0

    @property
    def api_calls(self) -> int:
        return self._total.value

    def build_job(self, spec: JobSpec, name: str) -> k.V1Job:
        """The Job manifest (tests override this to add the kwok outcome annotations)."""
        return build_job(spec, self.settings, name, _flow_run_id())

    def run(self, spec: JobSpec, on_output: OnOutput | None = None) -> JobResult:
        check_urls(spec)  # a file:// store is a configuration error, before anything is created
        if spec.handoff is None or not self.settings.kubernetes.egress_proxy:
            return self._run_pod(spec, on_output)
        return self._run_split(spec, on_output)

    def _run_split(self, spec: JobSpec, on_output: OnOutput | None) -> JobResult:
        """The dependency phase in a pod that may reach the index proxy, then the rest in one that may not.

        The network is the pod's, so this is how the tests and the generators run offline on a cluster. The
        second pod starts only when the first delivered its archive; its deadline is what the first left.
        """
        first = self._run_pod(phase_spec(spec, DEPENDENCIES, spec.timeout_sec), on_output)
        if first.state is not JobState.SUCCEEDED or HANDOFF_NAME not in first.outputs:
            # Its report says why (the runner writes one when installing failed), or the launcher's verdict does.
            outputs = {n: url for n, url in first.outputs.items() if n != HANDOFF_NAME}
            return first.model_copy(update={"outputs": outputs})
        left = max(1, int(spec.timeout_sec - first.duration_sec))
        second = self._run_pod(phase_spec(spec, OFFLINE, left), on_output)
        return second.model_copy(update={"duration_sec": round(first.duration_sec + second.duration_sec, 3)})

    def _run_pod(self, spec: JobSpec, on_output: OnOutput | None) -> JobResult:
        name = job_name(spec.name)
        job = self.build_job(spec, name)
        counter = _Counter()
        api = counting_client(self._config, counter)
        logger = run_logger()
        follower = LogFollower(api, self.namespace, logger, name, output_sink(spec, on_output))
        started = time.monotonic()
        try:
            verdict = self._run(api, job, name, spec, follower, logger)
            result = self._result(spec, verdict, follower.finish(), time.monotonic() - started)
        finally:
            self.last_api_calls = counter.value
            self._total.add(counter.value)
            api.close()
        logger.info(
            "job %s: %s (%s) in %.1fs, %d API calls",
            name,
            result.state,
            result.reason,
            result.duration_sec,
            self.last_api_calls,
        )
        return result

    def _run(self, api: k.ApiClient, job: Any, name: str, spec: JobSpec, follower: LogFollower, logger: Any) -> Verdict:
        """Create, watch, and delete the Job in ``finally`` (success, failure, interruption, crash alike)."""
        created = True  # until proven otherwise: an interrupted create may still have happened
        try:
            try:
                warning = self._create(api, job)
            except LaunchError:
                created = False  # the API server refused it: nothing to delete
                raise
            if warning:
                return Verdict(JobState.ERROR, f"the pod would be rejected: {warning}")
            logger.info(
                "job %s/%s created (image %s)",
                self.namespace,
                name,
                job.spec.template.spec.containers[0].image,
            )
            return JobWatcher(
                api,
                self.namespace,
                name,
                timeout_sec=spec.timeout_sec,
                grace_sec=self.settings.kubernetes.image_pull_grace_sec,
                memory_mb=spec.memory_limit_mb,
                on_pod_started=follower.start,
            ).wait()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            return Verdict(JobState.ERROR, f"lost the Kubernetes API while running job {name}: {_short(exc)}")
        finally:
            if created:
                self._delete(api, name, logger)

    # -- steps --------------------------------------------------------------------------------------

    def _create(self, api: k.ApiClient, job: k.V1Job) -> str | None:
        """Create the Job; returns the Pod Security warning when the pod it templates would be rejected."""
        try:
            _, _, headers = k.BatchV1Api(api).create_namespaced_job_with_http_info(self.namespace, job)
        except ApiException as exc:
            if _is_config_error(exc):
                raise self._create_error(exc) from exc
            raise
        warnings = (headers or {}).get("Warning") or ""
        return warnings if "PodSecurity" in warnings else None

    def _create_error(self, exc: ApiException) -> LaunchError:
        body = _short(exc)
        if exc.status == 404:
            return LaunchError(f"namespace {self.namespace!r} does not exist ({body})", hint=_APPLY_HINT)
        if exc.status == 403:
            return LaunchError(
                f"not allowed to create Jobs in namespace {self.namespace!r} ({body})",
                hint="run as the mendflow-worker ServiceAccount from k8s/base, or grant it",
            )
        return LaunchError(
            f"the API server rejected the Job ({exc.status}: {body})",
            hint="check MENDFLOW_KUBERNETES__* and MENDFLOW_SANDBOX__* settings",
        )

    def _delete(self, api: k.ApiClient, name: str, logger: Any) -> None:
        try:
            k.BatchV1Api(api).delete_namespaced_job(
                name, self.namespace, propagation_policy="Background", _request_timeout=30
            )
        except ApiException as exc:
            if exc.status != 404:
                logger.warning("could not delete job %s (%s); `mendflow reap` removes it", name, _short(exc))
        except Exception as exc:  # never mask the run's own outcome or interruption
            logger.warning("could not delete job %s (%s); `mendflow reap` removes it", name, _short(exc))

    def _result(self, spec: JobSpec, verdict: Verdict, streamed: str, duration: float) -> JobResult:
        summary = transfer_summary(verdict.termination_message) or {}
        delivered = [n for n in summary.get("delivered") or [] if isinstance(n, str) and n in spec.outputs]
        tail = streamed or str(summary.get("tail") or "") or ("" if summary else verdict.termination_message)
        return JobResult(
            state=verdict.state,
            exit_code=verdict.exit_code,
            reason=verdict.reason,
            duration_sec=round(duration, 3),
            log_tail=tail[-LOG_TAIL_CHARS:],
            outputs={n: spec.outputs[n] for n in delivered},
        )


def _is_config_error(exc: ApiException) -> bool:
    """Errors retrying will not fix: missing namespace, RBAC, an invalid spec (not quota: that clears)."""
    body = str(exc.body or "")
    return exc.status in (400, 404, 422) or (exc.status == 403 and "exceeded quota" not in body)


def _short(exc: BaseException) -> str:
    if isinstance(exc, ApiException):
        import json

        try:
            return str(json.loads(exc.body or "").get("message"))[:500]
        except (TypeError, ValueError, AttributeError):
            return f"{exc.status} {exc.reason}"
    return f"{type(exc).__name__}: {exc}"[:500]


def reap(
    settings: Settings | None = None, *, older_than_sec: float | None = None, now: datetime | None = None
) -> list[str]:
    """Delete mendflow Jobs (and stray pods) older than ``older_than_sec``; returns what was deleted.

    The launcher deletes its Job in ``finally``; this is for what a killed worker (SIGKILL, lost node)
    left behind. Without an age, each Job gets its own: its ``activeDeadlineSeconds`` plus the image pull
    grace and the watch's backstop slack, past which Kubernetes has ended it, so a live job is never touched
    however long it may run (a Pynguin builder job outlives twice the build timeout). A pod goes with its Job's.
    """
    settings = settings or get_settings()
    now = now or datetime.now(UTC)
    ns = settings.kubernetes.namespace
    api = k.ApiClient(configuration=load_configuration(settings))
    batch, core = k.BatchV1Api(api), k.CoreV1Api(api)
    deleted: list[str] = []
    try:
        jobs = _list_all(batch.list_namespaced_job, ns)
        deadlines = {job.metadata.name: job.spec.active_deadline_seconds for job in jobs}
        pods = _list_all(core.list_namespaced_pod, ns)
        for kind, items, deleter in (
            ("job", jobs, batch.delete_namespaced_job),
            ("pod", pods, core.delete_namespaced_pod),
        ):
            for item in items:
                name = item.metadata.name if kind == "job" else (item.metadata.labels or {}).get("job-name", "")
                limit = older_than_sec if older_than_sec is not None else _lifetime(settings, deadlines.get(name))
                created = item.metadata.creation_timestamp
                if created and (now - created).total_seconds() >= limit:
                    try:
                        deleter(item.metadata.name, ns, propagation_policy="Background")
                        deleted.append(f"{kind}/{item.metadata.name}")
                    except ApiException as exc:
                        if exc.status != 404:
                            raise
    finally:
        api.close()
    return deleted


def _lifetime(settings: Settings, deadline_sec: int | None) -> float:
    """The longest a Job can live: its deadline (a foreign or stray object: twice the build timeout) plus slack."""
    deadline = deadline_sec if deadline_sec is not None else 2 * settings.build_timeout_sec
    return deadline + settings.kubernetes.image_pull_grace_sec + BACKSTOP_SLACK_SEC


def _list_all(lister: Callable[..., Any], namespace: str) -> list[Any]:
    items: list[Any] = []
    token: str | None = None
    while True:
        page = lister(namespace, label_selector=SELECTOR, limit=200, _continue=token)
        items += page.items
        token = page.metadata._continue
        if not token:
            return items
