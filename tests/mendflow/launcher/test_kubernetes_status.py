"""Pod and Job statuses become precise verdicts (the shapes a kubelet and the Job controller report)."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client as k

from mendflow.launcher.base import JobState
from mendflow.launcher.k8s_status import Stuck, Verdict, job_verdict, pod_verdict

IMAGE = "ghcr.io/mendflow/ci-runner-python:0.1.0"


def _pod(
    phase: str,
    *,
    state: Any = None,
    reason: str | None = None,
    message: str | None = None,
    conditions: list[Any] | None = None,
) -> k.V1Pod:
    statuses = (
        [k.V1ContainerStatus(name="job", image=IMAGE, image_id="", ready=False, restart_count=0, state=state)]
        if state
        else None
    )
    return k.V1Pod(
        metadata=k.V1ObjectMeta(name="p"),
        spec=k.V1PodSpec(containers=[k.V1Container(name="job", image=IMAGE)]),
        status=k.V1PodStatus(
            phase=phase, reason=reason, message=message, container_statuses=statuses, conditions=conditions
        ),
    )


def _terminated(code: int, reason: str, message: str | None = None) -> k.V1ContainerState:
    return k.V1ContainerState(terminated=k.V1ContainerStateTerminated(exit_code=code, reason=reason, message=message))


def _waiting(reason: str, message: str | None = None) -> k.V1ContainerState:
    return k.V1ContainerState(waiting=k.V1ContainerStateWaiting(reason=reason, message=message))


def _verdict(pod: k.V1Pod) -> Verdict:
    v = pod_verdict(pod, memory_mb=512)
    assert isinstance(v, Verdict), v
    return v


def test_succeeded_pod_is_success() -> None:
    v = _verdict(_pod("Succeeded", state=_terminated(0, "Completed")))
    assert (v.state, v.exit_code) == (JobState.SUCCEEDED, 0)


def test_non_zero_exit_is_failed_with_the_code() -> None:
    v = _verdict(_pod("Failed", state=_terminated(3, "Error")))
    assert (v.state, v.exit_code, v.reason) == (JobState.FAILED, 3, "the command exited with code 3")


def test_oom_killed_names_the_memory_limit() -> None:
    v = _verdict(_pod("Failed", state=_terminated(137, "OOMKilled")))
    assert (v.state, v.exit_code) == (JobState.OOM_KILLED, 137)
    assert "512 MiB" in v.reason and "MENDFLOW_SANDBOX__MEMORY_LIMIT_MB" in v.reason


def test_evicted_pod_is_an_error_with_the_kubelet_message() -> None:
    pod = _pod(
        "Failed",
        state=_terminated(137, "ContainerStatusUnknown"),
        reason="Evicted",
        message="The node was low on resource: memory.",
    )
    v = _verdict(pod)
    assert v.state is JobState.ERROR
    assert v.reason == "Evicted: The node was low on resource: memory."


def test_transfer_error_in_termination_message_is_an_error() -> None:
    message = json.dumps({"mendflow_transfer": 1, "exit_code": 125, "delivered": [], "error": "fetching x: HTTP 403"})
    v = _verdict(_pod("Failed", state=_terminated(125, "Error", message)))
    assert v.state is JobState.ERROR
    assert v.reason == "artefact transfer failed: fetching x: HTTP 403"


def test_image_pull_errors_are_stuck_and_name_the_image() -> None:
    for reason in ("ErrImagePull", "ImagePullBackOff"):
        v = pod_verdict(_pod("Pending", state=_waiting(reason, "not found")), memory_mb=512)
        assert isinstance(v, Stuck) and v.key == "image-pull"
        assert IMAGE in v.reason and reason in v.reason


def test_invalid_image_name_is_an_error_at_once() -> None:
    v = _verdict(_pod("Pending", state=_waiting("InvalidImageName", "bad ref")))
    assert v.state is JobState.ERROR and IMAGE in v.reason


def test_unschedulable_is_stuck_with_the_scheduler_message() -> None:
    cond = k.V1PodCondition(
        type="PodScheduled",
        status="False",
        reason="Unschedulable",
        message="0/2 nodes are available: 2 Insufficient cpu.",
    )
    v = pod_verdict(_pod("Pending", conditions=[cond]), memory_mb=512)
    assert v == Stuck("unschedulable", "Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.")


def test_running_pod_has_no_verdict() -> None:
    running = k.V1ContainerState(running=k.V1ContainerStateRunning())
    assert pod_verdict(_pod("Running", state=running), memory_mb=512) is None


def test_job_deadline_exceeded_is_timed_out() -> None:
    job = k.V1Job(
        status=k.V1JobStatus(
            conditions=[
                k.V1JobCondition(
                    type="FailureTarget",
                    status="True",
                    reason="DeadlineExceeded",
                    message="Job was active longer than specified deadline",
                ),
            ]
        )
    )
    v = job_verdict(job, timeout_sec=30)
    assert v is not None and v.state is JobState.TIMED_OUT
    assert "30s timeout" in v.reason and "DeadlineExceeded" in v.reason


def test_job_without_conditions_has_no_verdict() -> None:
    assert job_verdict(k.V1Job(status=k.V1JobStatus(active=1)), timeout_sec=30) is None
