"""Benchmark: KubernetesLauncher vs `kubectl create` + `kubectl wait` on the kwok test control plane.

    uv run python bench/k8s_bench.py [--jobs N]

Starts the control plane of tests/fixtures/kube.py (etcd, kube-apiserver, controller-manager, scheduler,
kwok), applies k8s/base, then for the same Job manifest measures per job:

* launcher: ``KubernetesLauncher.run`` = create -> watch to a terminal state -> JobResult -> delete,
* kubectl:  ``kubectl create -f`` + ``kubectl wait --for=condition=complete`` + ``kubectl delete
  --wait=false`` (three processes, the usual shell way),

and the API requests each makes (the launcher counts its own; kubectl's are counted from ``-v=6``).
Also the launcher's time and API calls for the failure paths (non-zero exit, deadline, image pull).
No container runs: kwok moves pods Pending -> Running -> Succeeded after a 200 ms "run".
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from kubernetes import client as k  # noqa: E402
from kubernetes.config import kube_config  # noqa: E402

from mendflow.launcher.base import JobSpec  # noqa: E402
from mendflow.launcher.kubernetes import KubernetesLauncher  # noqa: E402
from mendflow.settings import KubernetesSettings, Settings  # noqa: E402
from tests.fixtures.kube import (  # noqa: E402
    OUTCOME_ANNOTATION,
    PULL_ERROR_IMAGE_MARKER,
    RUN_DURATION_ANNOTATION,
    KubeCluster,
    start_cluster,
)
from tests.k8s.fixtures import give_nodes_ephemeral_storage  # noqa: E402

NS = "mendflow-jobs"
URL = "https://store.example/bucket/key?X-Amz-Signature=0"
_REQUEST = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE) https://\S+ \d{3}")


class BenchLauncher(KubernetesLauncher):
    def __init__(self, settings: Settings, annotations: dict[str, str] | None = None) -> None:
        super().__init__(settings)
        self.annotations = annotations or {}

    def build_job(self, spec: JobSpec, name: str) -> Any:
        job = super().build_job(spec, name)
        job.spec.template.metadata.annotations = {RUN_DURATION_ANNOTATION: "200ms", **self.annotations}
        return job


def spec(**changes: Any) -> JobSpec:
    base: dict[str, Any] = {
        "name": "bench",
        "command": ["true"],
        "cpu_limit": 0.5,
        "memory_limit_mb": 256,
        "timeout_sec": 60,
        "inputs": {"source.tar.gz": URL},
        "outputs": {"report.json": URL},
        "labels": {"repo": "bench", "stage": "B1", "attempt": "1"},
    }
    return JobSpec(**{**base, **changes})


def kubectl(cluster: KubeCluster, *args: str) -> tuple[float, int]:
    started = time.monotonic()
    proc = subprocess.run(
        ["/usr/bin/kubectl", f"--kubeconfig={cluster.kubeconfig}", "-v=6", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl {args}: {proc.stderr[-2000:]}")
    return time.monotonic() - started, len(_REQUEST.findall(proc.stderr))


def kubectl_job(cluster: KubeCluster, launcher: BenchLauncher, i: int, workdir: Path) -> tuple[float, int]:
    name = f"kubectl-{i}"
    manifest = k.ApiClient().sanitize_for_serialization(launcher.build_job(spec(), name))
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest))  # written before the clock starts, like the launcher's build
    started = time.monotonic()
    calls = kubectl(cluster, "create", "-f", str(path))[1]
    calls += kubectl(cluster, "wait", "-n", NS, "--for=condition=complete", f"job/{name}", "--timeout=60s")[1]
    calls += kubectl(cluster, "delete", "-n", NS, f"job/{name}", "--wait=false", "--cascade=background")[1]
    return time.monotonic() - started, calls


def summarize(label: str, samples: list[float]) -> str:
    return (
        f"{label:<34} median {statistics.median(samples):6.3f}s  mean {statistics.mean(samples):6.3f}s"
        f"  min {min(samples):6.3f}s  max {max(samples):6.3f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10, help="jobs per method (default 10)")
    args = parser.parse_args()
    cluster = start_cluster()
    try:
        print(f"control plane up in {cluster.start_seconds:.1f}s at {cluster.server}")
        give_nodes_ephemeral_storage(cluster)
        kubectl(cluster, "apply", "-k", str(ROOT / "k8s" / "base"))
        cluster.wait_for_service_account(NS, "mendflow-job")
        os.environ["KUBECONFIG"] = str(cluster.kubeconfig)
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(cluster.kubeconfig)  # read once, at import
        settings = Settings(
            kubernetes=KubernetesSettings(
                namespace=NS, context="mendflow-test", image_pull_grace_sec=3, ttl_seconds_after_finished=60
            )
        )
        launcher = BenchLauncher(settings)
        launcher.run(spec())  # warm-up: connection pool, scheduler caches
        ours, calls = [], []
        for _ in range(args.jobs):
            started = time.monotonic()
            result = launcher.run(spec())
            ours.append(time.monotonic() - started)
            calls.append(launcher.last_api_calls)
            assert result.state == "succeeded", result
        with tempfile.TemporaryDirectory() as tmp:
            kubectl_job(cluster, launcher, -1, Path(tmp))  # warm-up
            theirs = [kubectl_job(cluster, launcher, i, Path(tmp)) for i in range(args.jobs)]
        print(f"\n{args.jobs} jobs each, sequential, kwok 'run' of 200 ms:")
        print(summarize("launcher (create->result->delete)", ours))
        print(summarize("kubectl create+wait+delete", [t for t, _ in theirs]))
        ratio = statistics.median(ours) / statistics.median([t for t, _ in theirs])
        print(f"ratio launcher/kubectl (median): {ratio:.2f}")
        print(
            f"API requests per job: launcher {statistics.median(calls):g} ({min(calls)}-{max(calls)});"
            f" kubectl {statistics.median([c for _, c in theirs]):g} (3 processes, discovery included)"
        )
        print("\nfailure paths (launcher, one run each):")
        for label, case_launcher, case_spec in [
            ("non-zero exit", BenchLauncher(settings, {OUTCOME_ANNOTATION: "fail"}), spec()),
            (
                "DeadlineExceeded (timeout 2s)",
                BenchLauncher(settings, {OUTCOME_ANNOTATION: "hang"}),
                spec(timeout_sec=2),
            ),
            (
                "image pull (grace 3s)",
                BenchLauncher(settings),
                spec(image=f"r.invalid/{PULL_ERROR_IMAGE_MARKER}:1"),
            ),
        ]:
            started = time.monotonic()
            result = case_launcher.run(case_spec)
            print(
                f"  {label:<31} {time.monotonic() - started:6.2f}s  {case_launcher.last_api_calls} API calls"
                f"  -> {result.state}: {result.reason}"
            )
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
