"""The Kubernetes Job for one stage run: restricted Pod Security, no credentials, presigned URLs only.

Pure functions (no API calls), so the spec can be tested without a cluster.
"""

from __future__ import annotations

import json
import re
import secrets
from urllib.parse import urlsplit

from kubernetes import client as k

from mendflow.errors import ConfigError
from mendflow.launcher.base import JOB_ENV, JobSpec, is_credential
from mendflow.settings import Settings

JOB_UID = 10001  # the CI images' USER (images/*/Dockerfile); non-zero, as restricted PSA requires
CONTAINER = "job"
WORKSPACE = "/workspace"
CACHE_DIR = "/cache"
TMP_SIZE_MB = 1024
CACHE_SIZE_MB = 4096  # dependency caches (uv, pip); per job, so one job cannot poison another's
LOG_ALLOWANCE_MB = 512  # container log + writable layer, on top of the emptyDirs, in ephemeral-storage

MANAGED_BY = {"app.kubernetes.io/managed-by": "mendflow"}
LABEL_PREFIX = "mendflow.dev/"
SELECTOR = "app.kubernetes.io/managed-by=mendflow"  # what the reaper lists
_LABEL_KEYS = ("repo", "commit", "stage", "attempt", "flow-run", "phase")
# A job split at its dependency phase (mendflow_runner.handoff): the first pod installs and may reach the index
# proxy (k8s/egress lets pods labelled mendflow.dev/phase=dependencies through); the second runs offline.
DEPENDENCIES, OFFLINE = "dependencies", "offline"
HANDOFF_NAME = "env.tar.gz"
CA_DIR = "/etc/mendflow-ca"
CA_FILE = f"{CA_DIR}/ca.crt"
# Each toolchain's own name for "trust this bundle" (Go and Python's ssl read SSL_CERT_FILE; uv, pip, requests,
# npm, Node, cargo, git and curl each have theirs). The JVM reads no PEM bundle: it gets a keystore of its own
# (settings.kubernetes.ca_java_truststore_key) through JAVA_TOOL_OPTIONS.
_CA_VARIABLES = (
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "NODE_EXTRA_CA_CERTS",
    "NPM_CONFIG_CAFILE",
    "CARGO_HTTP_CAINFO",
    "GIT_SSL_CAINFO",
    "CURL_CA_BUNDLE",
)
_STORE_HINT = "set MENDFLOW_STORE_URL=s3://bucket/prefix (and MENDFLOW_S3__*) for MENDFLOW_LAUNCHER=kubernetes"


def label_value(value: str) -> str:
    """A valid label value: <= 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", value)[:63]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)


def job_name(spec_name: str) -> str:
    """A unique DNS-1123 label (<= 63, and short enough for the pod name's 5-character suffix)."""
    base = re.sub(r"[^a-z0-9-]+", "-", spec_name.lower()).strip("-")[:45].strip("-") or "job"
    return f"{base}-{secrets.token_hex(3)}"


def image_ref(image: str, settings: Settings) -> str:
    """A bare image name ('ci-runner-python') lives in the configured registry at the configured tag."""
    if "/" in image:
        return image
    tag = "" if ":" in image or "@" in image else f":{settings.kubernetes.image_tag}"
    return f"{settings.kubernetes.image_registry}/{image}{tag}"


def check_urls(spec: JobSpec) -> None:
    """Only presigned http(s) URLs can reach a pod: a file:// path means a store the pod cannot see."""
    for kind, urls in (("input", spec.inputs), ("output", spec.outputs)):
        for name, url in urls.items():
            scheme = urlsplit(url).scheme
            if scheme == "file":
                raise ConfigError(
                    f"{kind} {name!r} is a file:// URL: the kubernetes launcher needs an s3:// artefact store",
                    hint=_STORE_HINT,
                )
            if scheme not in ("http", "https"):
                raise ConfigError(f"{kind} {name!r} has unsupported URL scheme {scheme!r}", hint=_STORE_HINT)
            if not name or "/" in name or name in (".", ".."):
                raise ConfigError(f"{kind} name {name!r} is not a plain file name", hint="use e.g. 'report.json'")


def phase_spec(spec: JobSpec, phase: str, timeout_sec: int) -> JobSpec:
    """One pod's part of ``spec`` split at its dependency phase: the archive goes out of the first, into the second."""
    if spec.handoff is None:
        raise ValueError(f"job {spec.name!r} has no handoff: it cannot be split")
    first = phase == DEPENDENCIES
    archive = f"{WORKSPACE}/{'out' if first else 'in'}/{HANDOFF_NAME}"
    env = {**spec.env, "MENDFLOW_PHASE": phase, "MENDFLOW_HANDOFF": archive}
    moved = (
        {"outputs": {**spec.outputs, HANDOFF_NAME: spec.handoff.upload}}
        if first
        else {"inputs": {**spec.inputs, HANDOFF_NAME: spec.handoff.download}}
    )
    update = {"name": f"{spec.name}-{'deps' if first else 'run'}", "env": env, "timeout_sec": timeout_sec}
    return spec.model_copy(update={**update, "labels": {**spec.labels, "phase": phase}, **moved})


def labels(spec: JobSpec, flow_run_id: str | None) -> dict[str, str]:
    raw = {key.replace("_", "-"): value for key, value in spec.labels.items()}
    if flow_run_id:
        raw.setdefault("flow-run", flow_run_id)
    out = dict(MANAGED_BY)
    for key in _LABEL_KEYS:
        if raw.get(key) and (value := label_value(str(raw[key]))):
            out[LABEL_PREFIX + key] = value
    return out


def _annotations(spec: JobSpec, flow_run_id: str | None) -> dict[str, str]:
    # Labels are truncated and sanitized; the exact values stay readable here.
    extra = {"flow-run": flow_run_id} if flow_run_id else {}
    values = {**spec.labels, **extra}
    full = {f"{LABEL_PREFIX}{label_value(key)}-full": value for key, value in values.items()}
    return {LABEL_PREFIX + "job": spec.name, **full}


def _resources(spec: JobSpec, settings: Settings) -> k.V1ResourceRequirements:
    storage = settings.sandbox.workspace_size_mb + TMP_SIZE_MB + CACHE_SIZE_MB + LOG_ALLOWANCE_MB
    limits = {
        "cpu": f"{int(spec.cpu_limit * 1000)}m",
        "memory": f"{spec.memory_limit_mb}Mi",
        "ephemeral-storage": f"{storage}Mi",
    }
    # Memory request = limit (no overcommit: no eviction under node pressure); CPU may burst to the limit.
    requests = {**limits, "cpu": f"{max(100, int(spec.cpu_limit * 500))}m"}
    return k.V1ResourceRequirements(limits=limits, requests=requests)


def _restricted_container_context() -> k.V1SecurityContext:
    return k.V1SecurityContext(
        allow_privilege_escalation=False,
        read_only_root_filesystem=True,
        run_as_non_root=True,
        run_as_user=JOB_UID,
        run_as_group=JOB_UID,
        capabilities=k.V1Capabilities(drop=["ALL"]),
        seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
    )


def _proxy_env(spec: JobSpec, settings: Settings) -> dict[str, str]:
    """HTTPS through an egress proxy: the index proxy for a dependency pod, else the store's (presigned transfers
    to a store outside the cluster); in-cluster names go direct, as the jobs' NetworkPolicy allows for an
    in-cluster store."""
    phase = spec.labels.get("phase")
    proxy = settings.kubernetes.egress_proxy if phase == DEPENDENCIES else settings.kubernetes.store_proxy
    if not proxy:
        return {}
    direct = ".svc,.cluster.local,localhost,127.0.0.1"
    return {"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": direct, "no_proxy": direct}


def _ca_keys(settings: Settings) -> list[str]:
    """The CA ConfigMap's keys mounted in the pod: the PEM bundle, and the JVM's keystore of the same CAs."""
    if not settings.kubernetes.ca_bundle_configmap:
        return []
    java = settings.kubernetes.ca_java_truststore_key
    return ["ca.crt", *([java] if java else [])]


def _ca_env(settings: Settings) -> dict[str, str]:
    if not settings.kubernetes.ca_bundle_configmap:
        return {}
    env = dict.fromkeys(_CA_VARIABLES, CA_FILE)
    if java := settings.kubernetes.ca_java_truststore_key:  # relay.py adds the egress proxy's options to these
        env["JAVA_TOOL_OPTIONS"] = (
            f"-Djavax.net.ssl.trustStore={CA_DIR}/{java} -Djavax.net.ssl.trustStorePassword=changeit"
        )
    return env


def _env(spec: JobSpec, settings: Settings) -> list[k.V1EnvVar]:
    transfer = json.dumps({"inputs": spec.inputs, "outputs": spec.outputs})
    env = {
        **_proxy_env(spec, settings),
        **_ca_env(settings),
        **JOB_ENV,
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "XDG_CACHE_HOME": CACHE_DIR,
        "UV_CACHE_DIR": f"{CACHE_DIR}/uv",
        "MENDFLOW_JOB_CACHE": CACHE_DIR,
        "PIP_CACHE_DIR": f"{CACHE_DIR}/pip",
        **{name: value for name, value in spec.env.items() if not is_credential(name)},
        "MENDFLOW_WORKSPACE": WORKSPACE,
        "MENDFLOW_TRANSFER": transfer,  # presigned URLs: capabilities for these objects only, no credential
    }
    return [k.V1EnvVar(name=name, value=value) for name, value in env.items()]


def _volumes(settings: Settings) -> tuple[list[k.V1Volume], list[k.V1VolumeMount]]:
    sizes = {
        "workspace": (WORKSPACE, settings.sandbox.workspace_size_mb),
        "tmp": ("/tmp", TMP_SIZE_MB),
        "var-tmp": ("/var/tmp", TMP_SIZE_MB),  # writable, as a CI runner's is (dvc's site cache, /var/tmp/dvc)
        "cache": (CACHE_DIR, CACHE_SIZE_MB),
    }
    volumes = [
        k.V1Volume(name=n, empty_dir=k.V1EmptyDirVolumeSource(size_limit=f"{mb}Mi")) for n, (_, mb) in sizes.items()
    ]
    mounts = [k.V1VolumeMount(name=n, mount_path=path) for n, (path, _) in sizes.items()]
    if keys := _ca_keys(settings):
        items = [k.V1KeyToPath(key=key, path=key) for key in keys]
        source = k.V1ConfigMapVolumeSource(name=settings.kubernetes.ca_bundle_configmap, items=items)
        volumes.append(k.V1Volume(name="ca", config_map=source))
        mounts.append(k.V1VolumeMount(name="ca", mount_path=CA_DIR, read_only=True))
    return volumes, mounts


def _runtime_class(spec: JobSpec, settings: Settings) -> str | None:
    if spec.labels.get("phase") == OFFLINE and settings.kubernetes.offline_runtime_class:
        return settings.kubernetes.offline_runtime_class
    return settings.kubernetes.runtime_class


def build_job(spec: JobSpec, settings: Settings, name: str, flow_run_id: str | None = None) -> k.V1Job:
    """The Job: one pod, never retried or restarted, killed at the stage timeout, removed after a TTL."""
    check_urls(spec)
    job_labels = labels(spec, flow_run_id)
    volumes, mounts = _volumes(settings)
    command = [part.replace("{workspace}", WORKSPACE) for part in spec.command]
    container = k.V1Container(
        name=CONTAINER,
        image=image_ref(spec.image, settings),
        image_pull_policy="IfNotPresent",
        command=["python", "-m", "mendflow_runner.transfer", "--", *command],
        working_dir=WORKSPACE,
        env=_env(spec, settings),
        resources=_resources(spec, settings),
        security_context=_restricted_container_context(),
        volume_mounts=mounts,
        # Our JSON summary when the wrapper ran; the log's tail when it crashed before writing it.
        termination_message_policy="FallbackToLogsOnError",
    )
    pod = k.V1PodSpec(
        restart_policy="Never",
        service_account_name=settings.kubernetes.service_account,
        automount_service_account_token=False,
        enable_service_links=False,
        termination_grace_period_seconds=10,
        runtime_class_name=_runtime_class(spec, settings),
        security_context=k.V1PodSecurityContext(
            run_as_non_root=True,
            run_as_user=JOB_UID,
            run_as_group=JOB_UID,
            fs_group=JOB_UID,
            seccomp_profile=k.V1SeccompProfile(type="RuntimeDefault"),
        ),
        containers=[container],
        volumes=volumes,
    )
    metadata = k.V1ObjectMeta(
        name=name,
        namespace=settings.kubernetes.namespace,
        labels=job_labels,
        annotations=_annotations(spec, flow_run_id),
    )
    return k.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=metadata,
        spec=k.V1JobSpec(
            backoff_limit=0,
            active_deadline_seconds=spec.timeout_sec,
            ttl_seconds_after_finished=settings.kubernetes.ttl_seconds_after_finished,
            template=k.V1PodTemplateSpec(metadata=k.V1ObjectMeta(labels=job_labels), spec=pod),
        ),
    )
