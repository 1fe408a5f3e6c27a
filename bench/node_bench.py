"""Benchmark: stage pods on the real kubelet node (issue 17) against a bare pod by `kubectl create` + `kubectl wait`.

    uv run --frozen python bench/node_bench.py [--samples 5] [--loop] [--repo PATH ...] [--json]

Must run as root (containerd, bridges, iptables). Starts, outside pytest, the test control plane
(``tests/fixtures/kube.py``) and the real node (``tests/fixtures/kube_node.py``: containerd, the CI images
imported, a kubelet), moto S3 on the isolated network's gateway and a Prefect server, then measures in one run:

* node start: containerd + image import + kubelet to Ready (``RealNode.start_seconds``), the import apart;
* a trivial pod (``true``), the launcher's own pod template: ``kubectl create`` + ``kubectl wait
  --for=jsonpath={.status.phase}=Succeeded`` against the same JobSpec through ``KubernetesLauncher.run``
  (create the Job -> watch -> logs -> delete), alternating, ``--samples`` each after one warm-up of each (shown apart);
  without kubectl the baseline is the Python client's create + watch (the output says so);
* B1 of examples/calc (``ci_build`` as tests/real_node/test_b1.py runs it): per pod, the launcher's JobResult
  duration against the runner's own total (the report's ``durations``) and ``ci_build``'s wall time;
* with ``--loop``, the whole offline loop (B1 -> test builder -> B2, tests/real_node/test_loop.py): each pod's
  JobResult duration;
* with ``--repo PATH`` (any number), B1 of each git repository's HEAD as a pod on the node, then the same commit
  through the local launcher: status, line coverage and ``ci_build``'s wall time side by side (what a pod changes
  on a real project).

The node is always torn down, and what teardown could not remove is printed (exit 1 if anything is left).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures import kube, kube_node  # noqa: E402

PYNGUIN_SEARCH_SEC = "20"  # as the test suite's: the loop's builder searches each module this long


class Skip(Exception):
    """A prerequisite is missing: one line, exit 2."""


# --------------------------------------------------------------------------- measuring helpers


def summary(samples: list[float]) -> dict[str, float]:
    return {"min": min(samples), "median": statistics.median(samples), "max": max(samples)}


class PodWatch:
    """Every pod of a namespace as a watch saw it (created -> Succeeded/Failed), from a helper thread."""

    def __init__(self, api_client: Any, namespace: str) -> None:
        from tests.real_node.conftest import PodLog

        self.log = PodLog()
        self._api_client, self._namespace = api_client, namespace
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        from kubernetes import client as k
        from kubernetes import watch

        api = k.CoreV1Api(self._api_client)
        while not self.log._stop.is_set():
            with contextlib.suppress(Exception):  # a watch that times out or drops: start another
                for event in watch.Watch().stream(api.list_namespaced_pod, self._namespace, timeout_seconds=2):
                    self.log.record(event["object"])

    def stop(self) -> None:
        self.log._stop.set()
        self._thread.join(10)


class PodRecorder:
    """Wraps ``KubernetesLauncher._run_pod`` in this process: each pod's stage, phase and JobResult."""

    def __init__(self) -> None:
        from mendflow.launcher.kubernetes import KubernetesLauncher

        self.pods: list[dict[str, Any]] = []
        original = KubernetesLauncher._run_pod
        recorder = self

        def run_pod(launcher: Any, spec: Any, on_output: Any) -> Any:
            result = original(launcher, spec, on_output)
            recorder.pods.append(
                {
                    "stage": spec.labels.get("stage", spec.name),
                    "phase": spec.labels.get("phase", ""),
                    "state": getattr(result.state, "value", str(result.state)),
                    "launcher_sec": result.duration_sec,
                }
            )
            return result

        KubernetesLauncher._run_pod = run_pod  # type: ignore[method-assign]


def timed_import() -> dict[str, float]:
    """Wrap ``kube_node._import_images`` (start_node looks it up at call time) to time the image import."""
    seen: dict[str, float] = {}
    original = kube_node._import_images

    def wrapped(index: dict[str, Any]) -> dict[str, str]:
        started = time.monotonic()
        try:
            return original(index)
        finally:
            seen["import_sec"] = time.monotonic() - started

    kube_node._import_images = wrapped  # type: ignore[assignment]
    return seen


def image_table() -> list[dict[str, Any]]:
    """Each image of the index: archive size, and the last build's root-filesystem time from its build log."""
    index_path = kube_node.image_index_path()
    index = json.loads(index_path.read_text())
    rows = []
    for name, image in index["images"].items():
        log = index_path.parent / "logs" / f"{name}.log"
        rootfs = None
        if log.is_file() and (m := re.search(r"I: success in ([0-9.]+) seconds", log.read_text(errors="replace"))):
            rootfs = float(m.group(1))
        size = image.get("size") or kube_node.image_archive(image).stat().st_size
        rows.append({"image": name, "archive_mb": size / 1e6, "rootfs_build_sec": rootfs})
    return rows


# --------------------------------------------------------------------------- the trivial pod


def trivial_spec() -> Any:
    from mendflow.launcher.base import JobSpec

    return JobSpec(name="overhead", command=["true"], cpu_limit=0.5, memory_limit_mb=128, timeout_sec=60)


def bare_pod_manifest(settings: Any, name: str) -> dict[str, Any]:
    """The launcher's own pod template for the trivial JobSpec, as a bare Pod."""
    from kubernetes import client as k

    from mendflow.launcher.kubernetes import KubernetesLauncher

    job: Any = KubernetesLauncher(settings).build_job(trivial_spec(), name)
    pod = k.V1Pod(api_version="v1", kind="Pod", metadata=k.V1ObjectMeta(name=name), spec=job.spec.template.spec)
    return dict(k.ApiClient().sanitize_for_serialization(pod))


def kubectl_pod(node: Any, settings: Any, namespace: str, name: str, kubectl: str) -> float:
    """Seconds from ``kubectl create`` of the bare pod to ``kubectl wait`` seeing Succeeded."""
    manifest = json.dumps(bare_pod_manifest(settings, name))  # built before the clock starts
    argv = [kubectl, f"--kubeconfig={node.cluster.kubeconfig}", "-n", namespace]
    env = {**os.environ, "HOME": str(node.cluster.workdir / "home")}  # no ~/.kube cache of a developer's
    started = time.monotonic()
    subprocess.run([*argv, "create", "-f", "-"], input=manifest, text=True, check=True, env=env, capture_output=True)
    wait = [*argv, "wait", f"pod/{name}", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s"]
    subprocess.run(wait, check=True, env=env, capture_output=True)
    return time.monotonic() - started


def client_pod(node: Any, settings: Any, namespace: str, name: str) -> float:
    """Without kubectl: the Python client's create of the bare pod + a watch until it is Succeeded."""
    from kubernetes import client as k
    from kubernetes import watch

    manifest = bare_pod_manifest(settings, name)
    api = k.CoreV1Api(node.cluster.api_client())
    started = time.monotonic()
    api.create_namespaced_pod(namespace, manifest)
    stream = watch.Watch().stream(
        api.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}", timeout_seconds=60
    )
    for event in stream:
        phase = event["object"].status.phase
        if phase in ("Succeeded", "Failed"):
            if phase == "Failed":
                raise RuntimeError(f"baseline pod {name} failed")
            return time.monotonic() - started
    raise RuntimeError(f"baseline pod {name}: not Succeeded in 60 s")


def delete_pod(node: Any, namespace: str, name: str) -> None:
    from kubernetes import client as k

    with contextlib.suppress(Exception):
        k.CoreV1Api(node.cluster.api_client()).delete_namespaced_pod(name, namespace, grace_period_seconds=0)


def trivial_pods(node: Any, settings: Any, namespace: str, samples: int) -> dict[str, Any]:
    from mendflow.launcher.base import JobState
    from mendflow.launcher.kubernetes import KubernetesLauncher

    kubectl = shutil.which("kubectl")

    def baseline(i: int) -> float:
        name = f"baseline-{i}"
        try:
            if kubectl:
                return kubectl_pod(node, settings, namespace, name, kubectl)
            return client_pod(node, settings, namespace, name)
        finally:
            delete_pod(node, namespace, name)  # untimed: the node keeps at most 30 pods

    def launched() -> tuple[float, float]:
        started = time.monotonic()
        result = KubernetesLauncher(settings).run(trivial_spec())
        wall = time.monotonic() - started
        if result.state is not JobState.SUCCEEDED:
            raise RuntimeError(f"trivial job did not succeed: {result}")
        return result.duration_sec, wall

    first = {"baseline": baseline(-1), "launcher": launched()[0]}  # warm-up: the first pod per method
    base, ours, walls = [], [], []
    for i in range(samples):  # alternating, so both sides see the same load
        base.append(baseline(i))
        duration, wall = launched()
        ours.append(duration)
        walls.append(wall)
    method = "kubectl create + kubectl wait" if kubectl else "Python client create + watch (no kubectl on PATH)"
    return {
        "baseline_method": method,
        "first": first,
        "baseline": summary(base),
        "launcher": summary(ours),
        "launcher_wall": summary(walls),
        "ratio_median": statistics.median(ours) / statistics.median(base),
        "ratio_min": min(ours) / min(base),
        "samples": {"baseline": base, "launcher": ours},
    }


# --------------------------------------------------------------------------- stages


def stage_rows(recorder: PodRecorder, watch: PodWatch, reports: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per pod, in order: the launcher's duration, the watch's created->finished, the runner's total."""
    seen = sorted(watch.log.pods.values(), key=lambda p: p.created)
    rows = []
    for i, pod in enumerate(recorder.pods):
        row = dict(pod)
        if i < len(seen) and seen[i].finished is not None:
            row["watch_sec"] = seen[i].finished - seen[i].created
        report = reports.get(pod["stage"])
        if report is not None and not pod["phase"]:
            steps = report.durations
            row["runner_sec"] = steps["total"] if "total" in steps else sum(steps.values())
            row["overhead_sec"] = row["launcher_sec"] - row["runner_sec"]
            row["status"] = report.status.value
        rows.append(row)
    return rows


def record_reports() -> dict[str, Any]:
    """Wrap ``tasks.ci.run_build_job`` (build_attempt looks it up at call time): each stage's last report."""
    import tasks.ci

    reports: dict[str, Any] = {}
    original = tasks.ci.run_build_job

    def wrapped(source: Any, stage: str, *args: Any, **kwargs: Any) -> Any:
        report = original(source, stage, *args, **kwargs)
        reports[stage] = report
        return report

    tasks.ci.run_build_job = wrapped  # type: ignore[assignment]
    return reports


def fresh_namespace(node: Any, what: str) -> str:
    """A namespace of its own for a stage run (no pod of an earlier measurement in its watch); the settings' too."""
    from mendflow.settings import get_settings

    namespace = f"bench-{what}-{uuid.uuid4().hex[:6]}"
    node.create_namespace(namespace)
    os.environ["MENDFLOW_KUBERNETES__NAMESPACE"] = namespace
    get_settings.cache_clear()
    return namespace


def timed_b1(repo: Path) -> dict[str, Any]:
    """``ci_build``'s B1 of ``repo`` with the process's settings: its verdict, coverage, steps and wall time."""
    from flows.ci import ci_build

    started = time.monotonic()
    report = ci_build(repo=str(repo), branch="main", stage="B1")
    return {
        "status": report.status.value,
        "line_pct": report.coverage.line_pct if report.coverage else None,
        "durations": report.durations,
        "flow_wall_sec": time.monotonic() - started,
    }


def run_b1(
    node: Any, work: Path, reports: dict[str, Any], recorder: PodRecorder, repo: Path | None = None
) -> dict[str, Any]:
    from tests.fixtures.repos import copy_calc

    repo = repo or copy_calc(work / "b1")
    namespace = fresh_namespace(node, "b1")
    watch = PodWatch(node.cluster.api_client(), namespace)
    recorder.pods.clear()
    reports.clear()
    try:
        b1 = timed_b1(repo)
    finally:
        time.sleep(1)  # the watch's last event
        watch.stop()
    return {**b1, "pods": stage_rows(recorder, watch, reports)}


def own_store(work: Path, name: str) -> None:
    """A store prefix and state of its own: a commit's B1 published by an earlier measurement would be reused."""
    from mendflow.settings import get_settings

    bucket = os.environ["MENDFLOW_STORE_URL"].removeprefix("s3://").split("/", 1)[0]
    os.environ["MENDFLOW_STORE_URL"] = f"s3://{bucket}/{name}"
    os.environ["MENDFLOW_STATE_DIR"] = str(work / f"{name}-state")
    get_settings.cache_clear()


def run_repo(node: Any, work: Path, reports: dict[str, Any], recorder: PodRecorder, repo: Path) -> dict[str, Any]:
    """B1 of ``repo`` as a pod, then through the local launcher (each with a store of its own)."""
    from mendflow.settings import get_settings

    tag = f"repo-{uuid.uuid4().hex[:6]}"
    own_store(work, f"{tag}-pod")
    pod = run_b1(node, work, reports, recorder, repo)
    own_store(work, f"{tag}-local")
    os.environ["MENDFLOW_LAUNCHER"] = "local"
    get_settings.cache_clear()
    try:
        local = timed_b1(repo)
    finally:
        os.environ["MENDFLOW_LAUNCHER"] = "kubernetes"
        get_settings.cache_clear()
    return {"repo": repo.name, "pod": pod, "local": local}


def run_loop(node: Any, work: Path, reports: dict[str, Any], recorder: PodRecorder) -> dict[str, Any]:
    from flows.pipeline import self_healing_pipeline
    from tests.fixtures.repos import copy_calc

    repo = copy_calc(work / "loop")
    namespace = fresh_namespace(node, "loop")
    own_store(work, "loop")
    watch = PodWatch(node.cluster.api_client(), namespace)
    recorder.pods.clear()
    reports.clear()
    try:
        started = time.monotonic()
        result: Any = self_healing_pipeline(repo=str(repo), branch="main")
        wall = time.monotonic() - started
    finally:
        time.sleep(1)
        watch.stop()
    return {"outcome": str(result.outcome), "flow_wall_sec": wall, "pods": stage_rows(recorder, watch, reports)}


# --------------------------------------------------------------------------- set-up


def configure(node: Any, namespace: str, server: Any, bucket: str, work: Path) -> Any:
    """The process's settings as the ``node_env`` and ``mendflow_env`` fixtures make them; returns Settings."""
    from kubernetes.config import kube_config

    from mendflow.settings import Settings, get_settings
    from tests.fixtures import s3 as s3fx
    from tests.real_node.conftest import kubernetes_settings

    kubeconfig = str(node.cluster.kubeconfig)
    kube_config.KUBE_CONFIG_DEFAULT_LOCATION = kubeconfig  # read once, at import
    values = {
        "KUBECONFIG": kubeconfig,
        "AWS_ACCESS_KEY_ID": s3fx.ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": s3fx.SECRET_KEY,
        "AWS_DEFAULT_REGION": s3fx.REGION,
        "MENDFLOW_STATE_DIR": str(work / "state"),
        "MENDFLOW_RETRY_DELAYS_SEC": "[0, 0, 0]",
        "BUILD_TIMEOUT_SEC": "300",
        "MENDFLOW_LAUNCHER": "kubernetes",
        "MENDFLOW_STORE_URL": f"s3://{bucket}/runs",
        "MENDFLOW_S3__ENDPOINT_URL": server.endpoint_url,
        "MENDFLOW_S3__REGION_NAME": s3fx.REGION,
        "MENDFLOW_S3__ACCESS_KEY_ID": s3fx.ACCESS_KEY,
        "MENDFLOW_S3__SECRET_ACCESS_KEY": s3fx.SECRET_KEY,
    }
    k8s = kubernetes_settings(node, namespace)
    for key, value in k8s.model_dump(exclude_none=True).items():
        values[f"MENDFLOW_KUBERNETES__{key.upper()}"] = str(value)
    os.environ.update(values)
    os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_MAX_SEC", PYNGUIN_SEARCH_SEC)
    get_settings.cache_clear()
    return Settings(launcher="kubernetes", kubernetes=k8s, s3=server.settings())


# --------------------------------------------------------------------------- output


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def print_tables(out: dict[str, Any]) -> None:
    node = out["node"]
    print(f"\nnode start (containerd + image import + kubelet Ready): {node['start_sec']:.1f} s,")
    print(
        f"  of which image import {fmt(node.get('import_sec'))} s; control plane before it {node['cluster_sec']:.1f} s"
    )
    print("\n| image | archive MB | last build: root filesystem s |\n|---|---|---|")
    for row in out["images"]:
        print(f"| {row['image']} | {row['archive_mb']:.1f} | {fmt(row['rootfs_build_sec'])} |")
    t = out["trivial"]
    n = len(t["samples"]["launcher"])
    print(f"\ntrivial pod (`true`), {n} samples each after one warm-up; baseline: {t['baseline_method']}")
    print("\n| method | first | min | median | max |\n|---|---|---|---|---|")
    for key, label in (("baseline", "bare pod create -> Succeeded"), ("launcher", "KubernetesLauncher.run")):
        s = t[key]
        print(f"| {label} | {t['first'][key]:.2f} | {s['min']:.2f} | {s['median']:.2f} | {s['max']:.2f} |")
    print(f"\nratio launcher / baseline: median {t['ratio_median']:.2f}, min {t['ratio_min']:.2f}")
    for name in ("b1", "loop"):
        if name not in out:
            continue
        stage = out[name]
        head = (
            f"B1: {stage['status']}, line {fmt(stage['line_pct'])} %" if name == "b1" else f"loop: {stage['outcome']}"
        )
        print(
            f"\n{head}; flow wall {stage['flow_wall_sec']:.1f} s;"
            f" trivial pod baseline median {t['baseline']['median']:.2f} s"
        )
        print(
            "\n| pod (stage/phase) | launcher s (create -> report -> delete) | watch created -> done s"
            " | runner's own total s | launcher - runner s |\n|---|---|---|---|---|"
        )
        for pod in stage["pods"]:
            label = pod["stage"] + (f"/{pod['phase']}" if pod["phase"] else "")
            print(
                f"| {label} ({pod['state']}) | {pod['launcher_sec']:.2f} | {fmt(pod.get('watch_sec'))} "
                f"| {fmt(pod.get('runner_sec'))} | {fmt(pod.get('overhead_sec'))} |"
            )
        if name == "b1":
            steps = ", ".join(f"{k} {v:.2f}" for k, v in stage["durations"].items())
            print(f"\nB1 runner steps (s): {steps}")
    if out.get("repos"):
        print("\n| repository | pod B1 | pod line % | pod s | local B1 | local line % | local s |")
        print("|---|---|---|---|---|---|---|")
        for row in out["repos"]:
            pod, local = row["pod"], row["local"]
            print(
                f"| {row['repo']} | {pod['status']} | {fmt(pod['line_pct'])} | {pod['flow_wall_sec']:.1f} "
                f"| {local['status']} | {fmt(local['line_pct'])} | {local['flow_wall_sec']:.1f} |"
            )
    print(f"\nteardown left: {out['left'] or 'nothing'}")


# --------------------------------------------------------------------------- main


def run(args: argparse.Namespace, out: dict[str, Any]) -> None:
    from tests.fixtures import prefect as prefectfx
    from tests.fixtures.kube_node_host import cni_netns

    if reason := kube_node.missing_prerequisite():
        raise Skip(reason)
    try:
        kube.ensure_binaries()
    except RuntimeError as exc:
        raise Skip(str(exc).splitlines()[0]) from None
    out["images"] = image_table()
    imported = timed_import()
    work = Path(tempfile.mkdtemp(prefix="mendflow-node-bench-"))
    (work / "prefect").mkdir()
    # First, before anything imports Prefect: its settings come from the environment.
    prefect_proc, env = prefectfx.start_server(work / "prefect")
    os.environ.update(env)
    from tests.fixtures import s3 as s3fx

    try:
        cluster = kube.start_cluster()
        try:
            with kube_node.machine_lock():
                netns_before = cni_netns()
                try:
                    node = kube_node.start_node(cluster, netns_before)
                    out["node"] = {"start_sec": node.start_seconds, "cluster_sec": cluster.start_seconds, **imported}
                    # moto on the isolated network's gateway, at the one port pods may reach (as the tests do)
                    with s3fx.moto_server(node.isolated_ip, node.s3_port) as server:
                        namespace = f"bench-{uuid.uuid4().hex[:8]}"
                        node.create_namespace(namespace)
                        settings = configure(node, namespace, server, server.create_bucket("node"), work)
                        out["trivial"] = trivial_pods(node, settings, namespace, args.samples)
                        recorder = PodRecorder()
                        reports = record_reports()
                        out["b1"] = run_b1(node, work, reports, recorder)
                        if args.loop:
                            out["loop"] = run_loop(node, work, reports, recorder)
                        out["repos"] = [run_repo(node, work, reports, recorder, r) for r in args.repo]
                finally:
                    out["left"] = kube_node.stop_node(cluster, netns_before)
        finally:
            cluster.stop()
    finally:
        prefectfx.stop(prefect_proc)
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5, help="trivial pods per method (default 5)")
    parser.add_argument("--loop", action="store_true", help="also the whole loop B1 -> test builder -> B2")
    parser.add_argument(
        "--repo",
        type=Path,
        action="append",
        default=[],
        help="a git repository: B1 of its HEAD as a pod and through the local launcher (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    args = parser.parse_args()
    if missing := [str(r) for r in args.repo if not (r / ".git").exists()]:
        parser.error(f"--repo: not a git repository: {', '.join(missing)}")
    args.repo = [r.resolve() for r in args.repo]
    out: dict[str, Any] = {"left": []}
    try:
        run(args, out)
    except Skip as exc:
        print(f"node_bench: cannot start the real node: {exc}", file=sys.stderr)
        return 2
    except TimeoutError as exc:  # the machine lock
        print(f"node_bench: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        print_tables(out)
    if out["left"]:
        print(f"node_bench: teardown left {out['left']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
