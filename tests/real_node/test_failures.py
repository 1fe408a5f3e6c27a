"""How a stage pod ends on a real kubelet when it cannot finish: each a clear verdict, in bounded time, no leftovers.

The launcher is driven directly with small JobSpecs (a whole flow adds nothing to what the pod does); the
namespace is the placed, restricted one, so every pod runs on the real node.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k

from mendflow.launcher.base import JobResult, JobSpec, JobState
from mendflow.launcher.kubernetes import KubernetesLauncher
from mendflow.settings import Settings
from tests.fixtures.kube_node import RealNode
from tests.real_node.conftest import IMAGE_PULL_GRACE_SEC, PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow]


def spec(*command: str, **changes: Any) -> JobSpec:
    base: dict[str, Any] = {
        "name": "failure-mode",
        "command": list(command),
        "cpu_limit": 0.5,
        "memory_limit_mb": 256,
        "timeout_sec": 120,
        "labels": {"repo": "acme/widgets", "stage": "B1", "attempt": "1"},
    }
    return JobSpec(**{**base, **changes})


def timed(run: Callable[[], JobResult]) -> tuple[JobResult, float]:
    started = time.monotonic()
    result = run()
    return result, time.monotonic() - started


def in_background(launcher: KubernetesLauncher, job: JobSpec) -> tuple[threading.Thread, list[JobResult]]:
    results: list[JobResult] = []
    thread = threading.Thread(target=lambda: results.append(launcher.run(job)), daemon=True)
    thread.start()
    return thread, results


def test_missing_image_is_an_error_naming_it_within_the_pull_grace(
    real_node: RealNode, node_settings: Settings, node_namespace: str
) -> None:
    image = "mendflow.local/does-not-exist:1"  # no such registry: ErrImagePull <-> ImagePullBackOff forever
    result, took = timed(lambda: KubernetesLauncher(node_settings).run(spec("true", image=image)))
    assert result.state is JobState.ERROR, result
    assert image in str(result.reason) and "could not be pulled" in str(result.reason)
    assert IMAGE_PULL_GRACE_SEC <= took < IMAGE_PULL_GRACE_SEC + 30
    assert wait_gone(real_node, node_namespace) == []


def test_a_job_over_its_memory_limit_is_oom_killed(
    real_node: RealNode, node_settings: Settings, node_namespace: str
) -> None:
    # 1 GiB in a 128 MiB cgroup: the kernel's OOM killer, reported by the kubelet as OOMKilled.
    hog = spec("python", "-c", "b = bytearray(1 << 30); print(len(b))", memory_limit_mb=128)
    result, took = timed(lambda: KubernetesLauncher(node_settings).run(hog))
    assert result.state is JobState.OOM_KILLED, result
    assert took < 60
    assert wait_gone(real_node, node_namespace) == []


def test_a_job_past_its_deadline_is_timed_out(
    real_node: RealNode, node_settings: Settings, node_namespace: str
) -> None:
    result, took = timed(lambda: KubernetesLauncher(node_settings).run(spec("sleep", "600", timeout_sec=5)))
    assert result.state is JobState.TIMED_OUT, result
    assert "DeadlineExceeded" in str(result.reason), result.reason
    # The deadline, the kubelet's sync, the 10 s termination grace and the watch's slack: never the 600 s.
    assert took < 60
    assert wait_gone(real_node, node_namespace) == []


def test_a_pod_deleted_mid_run_is_an_error(
    real_node: RealNode, node_settings: Settings, node_namespace: str, pod_log: PodLog
) -> None:
    thread, results = in_background(KubernetesLauncher(node_settings), spec("sleep", "600"))
    name = pod_log.running_pod()
    k.CoreV1Api(real_node.cluster.api_client()).delete_namespaced_pod(name, node_namespace)
    thread.join(60)
    assert results and results[0].state is JobState.ERROR, results
    # A real kubelet stops the container at once (SIGTERM, exit -15) and the Job controller then fails the Job
    # (backoffLimit 0): both follow from the deletion, which is what the launcher reports.
    assert "was deleted before it finished" in str(results[0].reason), results[0].reason
    assert "exit code -15" in results[0].log_tail, results[0].log_tail
    assert wait_gone(real_node, node_namespace) == []


def test_a_kubelet_restart_mid_run_does_not_stop_the_pod(
    real_node: RealNode, node_settings: Settings, node_namespace: str, pod_log: PodLog
) -> None:
    job = spec("sh", "-c", "sleep 8; echo survived")
    thread, results = in_background(KubernetesLauncher(node_settings), job)
    pod_log.running_pod()
    real_node.restart_kubelet(down_sec=2)  # the container lives in containerd, not in the kubelet
    thread.join(90)
    assert results and results[0].state is JobState.SUCCEEDED, results
    assert "survived" in results[0].log_tail
    assert wait_gone(real_node, node_namespace) == []


def test_a_run_interrupted_mid_stage_deletes_its_job(
    real_node: RealNode, node_settings: Settings, node_namespace: str, pod_log: PodLog
) -> None:
    # What a cancelled flow run does to its worker: an exception (here KeyboardInterrupt) in the launcher's thread.
    main = threading.get_ident()

    def interrupt_once_running() -> None:
        pod_log.running_pod()
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt_once_running, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        KubernetesLauncher(node_settings).run(spec("sleep", "600"))
    assert wait_gone(real_node, node_namespace) == []
