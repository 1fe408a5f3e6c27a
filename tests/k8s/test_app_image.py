"""The flow image (images/app) the */kubernetes deployments run in.

No container engine here, so the image's own steps are replayed: its COPY lines into an empty directory,
its `uv sync`, its import check. A file the flows need but the image forgets fails the import, as it would
in the pod.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.k8s.dockerfile import build_args, env_of, parse

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "images" / "app"
INSTRUCTIONS = parse((APP / "Dockerfile").read_text())
TEMPLATE = json.loads((ROOT / "k8s" / "prefect" / "base-job-template.json").read_text())


def _of(kind: str) -> list[str]:
    return [rest for k, rest in INSTRUCTIONS if k == kind]


def _copies() -> list[tuple[list[str], str]]:
    pairs = []
    for rest in _of("COPY"):
        parts = [p for p in shlex.split(rest) if not p.startswith("--")]
        pairs.append((parts[:-1], parts[-1]))
    return pairs


def _included(path: str, ignore_lines: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes."""
    included = True
    for line in ignore_lines:
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
            included = negate
    return included


def test_runs_as_the_uid_the_flow_pod_runs_as() -> None:
    pod = TEMPLATE["job_configuration"]["job_manifest"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    uid = container["securityContext"]["runAsUser"]
    assert _of("USER")[-1] == f"{uid}:{uid}" and build_args((APP / "Dockerfile").read_text())["APP_UID"] == str(uid)


def test_code_sits_where_the_kubernetes_deployments_pull_step_looks() -> None:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    (step,) = config["definitions"]["kubernetes_code"]["pull"]
    assert _of("WORKDIR") == [step["prefect.deployments.steps.set_working_directory"]["directory"]]


def test_the_work_pool_defaults_to_the_image_build_and_push_makes() -> None:
    default = TEMPLATE["variables"]["properties"]["image"]["default"]
    assert default == "ghcr.io/mendflow/app:0.1.0"  # build-and-push.sh: $registry/app:$tag, same defaults
    script = (ROOT / "images" / "build-and-push.sh").read_text()
    assert (
        "registry=${MENDFLOW_IMAGE_REGISTRY:-ghcr.io/mendflow}" in script
        and "tag=${MENDFLOW_IMAGE_TAG:-0.1.0}" in script
    )


def test_flows_launch_their_stages_as_kubernetes_jobs() -> None:
    env = env_of((APP / "Dockerfile").read_text())
    assert env["MENDFLOW_LAUNCHER"] == "kubernetes"
    assert env["MENDFLOW_STATE_DIR"].startswith("/tmp/")  # the only writable path under a read-only root


def test_every_copied_path_passes_the_dockerignore() -> None:
    ignore = (APP / "Dockerfile.dockerignore").read_text().splitlines()
    for sources, _ in _copies():
        for source in sources:
            assert _included(source.rstrip("/"), ignore), source
    assert not _included("tests/conftest.py", ignore) and not _included(".venv/bin/python", ignore)


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy2(source, target)


@pytest.mark.slow
def test_the_copied_files_install_and_import_the_flows(tmp_path: Path) -> None:
    workdir = tmp_path / "opt-mendflow"
    workdir.mkdir()
    for sources, dest in _copies():
        for source in sources:
            _copy(ROOT / source, workdir / dest / (source if dest.endswith("/") else ""))
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tmp_path / "venv"), "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    # The suite's own `uv sync` filled the cache: offline, the image's lock must resolve from it.
    sync = subprocess.run(
        ["uv", "sync", "--frozen", "--no-dev", "--offline"], cwd=workdir, env=env, capture_output=True, text=True
    )
    assert sync.returncode == 0, sync.stderr[-2000:]
    (check,) = [r for r in _of("RUN") if "import flows" in r]
    imports = shlex.split(check.split("&&")[-1])[-1]
    result = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "python"), "-c", imports], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_base_image_and_uv_are_pinned_like_the_ci_images() -> None:
    args = build_args((APP / "Dockerfile").read_text())
    ci = build_args((ROOT / "images" / "ci-runner-python" / "Dockerfile").read_text())
    assert (args["PYTHON_IMAGE"], args["UV_VERSION"]) == (ci["PYTHON_IMAGE"], ci["UV_VERSION"])
