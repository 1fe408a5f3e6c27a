"""Follow one stage Job to a verdict with the watch API: no poll loop, bounded waits, never a hang.

One pod watch (label ``job-name``) drives everything. Timers that no event announces (a pull error or an
unschedulable pod lasting past the grace period, no pod at all, a controller that never acts) are
checked whenever the watch returns, and the watch's server-side timeout is set to the next timer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client as k
from kubernetes import watch
from kubernetes.client.rest import ApiException

from mendflow.launcher.base import JobState
from mendflow.launcher.k8s_status import Stuck, Verdict, job_verdict, pod_verdict

JOB_VERDICT_WAIT_SEC = 30  # after the pod vanished, how long the Job controller gets to say why
BACKSTOP_SLACK_SEC = 60  # beyond activeDeadlineSeconds + grace, in case the controller never acts


class JobWatcher:
    def __init__(
        self,
        api: k.ApiClient,
        namespace: str,
        name: str,
        *,
        timeout_sec: int,
        grace_sec: float,
        memory_mb: int,
        on_pod_started: Callable[[str], None] = lambda _name: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.core, self.batch = k.CoreV1Api(api), k.BatchV1Api(api)
        self.namespace, self.name = namespace, name
        self.timeout_sec, self.grace_sec, self.memory_mb = timeout_sec, grace_sec, memory_mb
        self.on_pod_started = on_pod_started
        self.clock = clock
        self.started = clock()
        self.pod_seen = False
        self.pod_started = False
        self.stuck: dict[str, tuple[float, str]] = {}  # key -> (first seen, reason)
        self.last_pod: Any = None

    # -- public -------------------------------------------------------------------------------------

    def wait(self) -> Verdict:
        resource_version: str | None = None
        while True:
            verdict = self._expired()
            if verdict:
                return verdict
            wait_for = max(1, math.ceil(self._next_timer() - self.clock()))
            stream = watch.Watch()
            try:
                for event in stream.stream(
                    self.core.list_namespaced_pod,
                    self.namespace,
                    label_selector=f"job-name={self.name}",
                    resource_version=resource_version,
                    timeout_seconds=wait_for,
                    _request_timeout=wait_for + 15,
                ):
                    resource_version = stream.resource_version
                    verdict = self._on_event(event["type"], event["object"]) or self._expired()
                    if verdict:
                        stream.stop()
                        return verdict
            except ApiException as exc:
                if exc.status != 410:  # 410 Gone: our resourceVersion is too old; re-list from now
                    raise
                resource_version = None

    # -- events -------------------------------------------------------------------------------------

    def _on_event(self, kind: str, obj: object) -> Verdict | None:
        if kind == "ERROR" or not isinstance(obj, k.V1Pod):
            return None
        pod: Any = obj
        self.pod_seen = True
        self.last_pod = pod
        if kind == "DELETED" or pod.metadata.deletion_timestamp:
            return self._after_pod_deleted(pod)
        phase = pod.status.phase if pod.status else None
        if phase in ("Running", "Succeeded", "Failed") and not self.pod_started:
            self.pod_started = True
            self.on_pod_started(pod.metadata.name)
        verdict = pod_verdict(pod, self.memory_mb)
        if isinstance(verdict, Verdict):
            return verdict
        current = {verdict.key} if isinstance(verdict, Stuck) else set()
        self.stuck = {key: v for key, v in self.stuck.items() if key in current}  # resolved ones reset
        if isinstance(verdict, Stuck) and verdict.key not in self.stuck:
            self.stuck[verdict.key] = (self.clock(), verdict.reason)
        elif isinstance(verdict, Stuck):
            self.stuck[verdict.key] = (self.stuck[verdict.key][0], verdict.reason)  # latest message wins
        return None

    def _after_pod_deleted(self, pod: Any) -> Verdict:
        """The pod is going away before we saw it finish: the Job controller's deadline, or someone else (a drain,
        an eviction through the API, a person). Then its exit code is only the signal that stopped it, and the Job's
        failure only follows from it: the deletion is the reason."""
        final = pod_verdict(pod, self.memory_mb)
        if isinstance(final, Verdict) and final.state in (JobState.SUCCEEDED, JobState.OOM_KILLED):
            return final
        job = self._job_verdict()
        if job and job.state in (JobState.TIMED_OUT, JobState.SUCCEEDED):
            return job
        gone = f"pod {pod.metadata.name} was deleted before it finished (drained, evicted or deleted by someone)"
        why = final.reason if isinstance(final, Verdict) else job.reason if job else ""
        return Verdict(JobState.ERROR, f"{gone}: {why}" if why else gone)

    def _job_verdict(self) -> Verdict | None:
        stream = watch.Watch()
        try:
            for event in stream.stream(
                self.batch.list_namespaced_job,
                self.namespace,
                field_selector=f"metadata.name={self.name}",
                timeout_seconds=JOB_VERDICT_WAIT_SEC,
                _request_timeout=JOB_VERDICT_WAIT_SEC + 15,
            ):
                if event["type"] == "DELETED":
                    stream.stop()
                    return Verdict(JobState.ERROR, f"job {self.name} was deleted by someone else")
                if isinstance(event["object"], k.V1Job) and (verdict := job_verdict(event["object"], self.timeout_sec)):
                    stream.stop()
                    return verdict
        except ApiException as exc:
            if exc.status not in (404, 410):
                raise
        return None

    # -- timers -------------------------------------------------------------------------------------

    def _next_timer(self) -> float:
        timers = [self.started + self.timeout_sec + self.grace_sec + BACKSTOP_SLACK_SEC]
        timers += [since + self.grace_sec for since, _ in self.stuck.values()]
        if not self.pod_seen:
            timers.append(self.started + self.grace_sec)
        return min(timers)

    def _expired(self) -> Verdict | None:
        now = self.clock()
        for since, reason in self.stuck.values():
            if now - since >= self.grace_sec:
                return Verdict(JobState.ERROR, f"{reason}; gave up after {self.grace_sec:g}s")
        if not self.pod_seen and now - self.started >= self.grace_sec:
            return Verdict(JobState.ERROR, self._no_pod_reason())
        if now - self.started >= self.timeout_sec + self.grace_sec + BACKSTOP_SLACK_SEC:
            return Verdict(
                JobState.TIMED_OUT,
                f"no terminal state {self.timeout_sec}s after the stage timeout "
                "(the Job controller did not end the job)",
            )
        return None

    def _no_pod_reason(self) -> str:
        """Why the Job controller made no pod (quota, admission, missing ServiceAccount): its events say."""
        base = f"no pod was created for job {self.name} within {self.grace_sec:g}s"
        try:
            events = self.core.list_namespaced_event(
                self.namespace, field_selector=f"involvedObject.kind=Job,involvedObject.name={self.name}"
            ).items
        except ApiException:
            return base
        messages = [f"{e.reason}: {e.message}" for e in events if e.type == "Warning"]
        return f"{base}: {messages[-1]}" if messages else base
