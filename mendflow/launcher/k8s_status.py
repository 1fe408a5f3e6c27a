"""Reading a stage pod's and Job's status: terminal verdicts, and 'stuck' states that end after a grace.

Pure functions over ``kubernetes.client`` models (typed ``Any``: every field of those models is optional),
so every reason is testable without a cluster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mendflow.launcher.base import MEMORY_ADVICE, JobState
from mendflow.launcher.k8s_manifest import CONTAINER

PULL_ERRORS = frozenset({"ErrImagePull", "ImagePullBackOff"})
FATAL_WAITING = frozenset({"InvalidImageName", "ErrImageNeverPull"})
STUCK_WAITING = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
TRANSFER_MARKER = "mendflow_transfer"  # mendflow_runner.transfer.MARKER (the runner is not importable here)


@dataclass(frozen=True)
class Verdict:
    """How the job ended."""

    state: JobState
    reason: str
    exit_code: int | None = None
    termination_message: str = ""


@dataclass(frozen=True)
class Stuck:
    """A state that is not terminal yet but becomes an error when it lasts longer than the grace period."""

    key: str
    reason: str


def transfer_summary(message: str) -> dict[str, Any] | None:
    """The wrapper's JSON termination message, or None when the message is something else (a log tail)."""
    try:
        doc = json.loads(message)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and doc.get(TRANSFER_MARKER) == 1 else None


def _container(pod: Any) -> Any:
    statuses = (pod.status and pod.status.container_statuses) or []
    return next((s for s in statuses if s.name == CONTAINER), statuses[0] if statuses else None)


def _terminated(pod: Any) -> Any:
    status = _container(pod)
    return status.state.terminated if status and status.state else None


def _failed(pod: Any, memory_mb: int) -> Verdict:
    status = pod.status
    if status.reason == "Evicted":
        return Verdict(JobState.ERROR, f"Evicted: {status.message or 'the node ran short of a resource'}")
    if status.reason == "DeadlineExceeded":
        return Verdict(JobState.TIMED_OUT, f"DeadlineExceeded: {status.message or 'the pod ran past its deadline'}")
    term = _terminated(pod)
    if term is None:
        why = ": ".join(x for x in (status.reason, status.message) if x) or "no container status"
        return Verdict(JobState.ERROR, f"the pod failed before its container ran ({why})")
    message = term.message or ""
    if term.reason == "OOMKilled":
        return Verdict(
            JobState.OOM_KILLED,
            f"OOMKilled: the job used more than its {memory_mb} MiB memory limit; {MEMORY_ADVICE}",
            term.exit_code,
            message,
        )
    summary = transfer_summary(message)
    if summary and summary.get("error"):
        return Verdict(JobState.ERROR, f"artefact transfer failed: {summary['error']}", term.exit_code, message)
    if term.exit_code == 0:
        why = ": ".join(x for x in (status.reason, status.message) if x) or "unknown reason"
        return Verdict(JobState.ERROR, f"the pod failed although its command exited 0 ({why})", 0, message)
    detail = f" ({term.reason})" if term.reason and term.reason != "Error" else ""
    if term.exit_code in (137, 143) and not detail:
        detail = " (killed by a signal)"
    return Verdict(JobState.FAILED, f"the command exited with code {term.exit_code}{detail}", term.exit_code, message)


def _pending(pod: Any) -> Verdict | Stuck | None:
    for cond in (pod.status and pod.status.conditions) or []:
        if cond.type == "PodScheduled" and cond.status == "False" and cond.reason == "Unschedulable":
            return Stuck("unschedulable", f"Unschedulable: {cond.message or 'no node fits the pod'}")
    status = _container(pod)
    waiting = status.state.waiting if status and status.state else None
    if waiting is None or not waiting.reason:
        return None
    image = status.image or (pod.spec.containers[0].image if pod.spec else "?")
    if waiting.reason in FATAL_WAITING:
        return Verdict(JobState.ERROR, f"{waiting.reason}: image {image}: {waiting.message or ''}".rstrip(": "))
    if waiting.reason in PULL_ERRORS:
        why = f"{waiting.reason}: {waiting.message}" if waiting.message else waiting.reason
        return Stuck("image-pull", f"image {image} could not be pulled ({why})")
    if waiting.reason in STUCK_WAITING:
        return Stuck(waiting.reason, f"{waiting.reason}: {waiting.message or 'the container could not start'}")
    return None


def pod_verdict(pod: Any, memory_mb: int) -> Verdict | Stuck | None:
    """A terminal verdict, a stuck state, or None while the pod is progressing normally."""
    phase = pod.status.phase if pod.status else None
    if phase == "Succeeded":
        term = _terminated(pod)
        return Verdict(JobState.SUCCEEDED, "the command exited with code 0", 0, (term.message or "") if term else "")
    if phase == "Failed":
        return _failed(pod, memory_mb)
    return _pending(pod)


def job_verdict(job: Any, timeout_sec: int) -> Verdict | None:
    """The Job controller's verdict from its conditions, or None while it has none."""
    for cond in (job.status and job.status.conditions) or []:
        if cond.status != "True":
            continue
        if cond.type in ("Complete", "SuccessCriteriaMet"):
            return Verdict(JobState.SUCCEEDED, "the job completed", 0)
        if cond.type in ("Failed", "FailureTarget"):
            if cond.reason == "DeadlineExceeded":
                return Verdict(
                    JobState.TIMED_OUT,
                    f"DeadlineExceeded: the job was still running after its "
                    f"{timeout_sec}s timeout (activeDeadlineSeconds)",
                )
            return Verdict(JobState.ERROR, f"the job failed: {cond.reason}: {cond.message or ''}".rstrip(": "))
    return None
