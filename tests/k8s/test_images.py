"""The CI image Dockerfiles: parse them (stdlib, no engine here) and check what a restricted pod relies on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mendflow.launcher.k8s_manifest import CACHE_DIR, JOB_UID
from tests.k8s.dockerfile import build_args, env_of, parse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((ROOT / "images").glob("ci-runner-*/Dockerfile"))


@pytest.fixture(params=DOCKERFILES, ids=lambda p: p.parent.name)
def dockerfile(request: pytest.FixtureRequest) -> str:
    return str(request.param.read_text())


def test_there_is_a_python_ci_image() -> None:
    assert ROOT / "images" / "ci-runner-python" / "Dockerfile" in DOCKERFILES


def test_parser_rejects_what_it_cannot_read() -> None:
    with pytest.raises(AssertionError):
        parse("FROM x\nRUN a \\")
    assert parse("# c\nfrom x\nRUN a \\\n  # note\n  && b\n") == [("FROM", "x"), ("RUN", "a  && b")]


def test_base_image_is_pinned(dockerfile: str) -> None:
    (base,) = [rest for kind, rest in parse(dockerfile) if kind == "FROM"]
    ref = base.replace("${PYTHON_IMAGE}", build_args(dockerfile).get("PYTHON_IMAGE", ""))
    # a digest, or a full x.y.z version tag: never 'latest' or a floating '3.11'
    assert "@sha256:" in ref or re.search(r":\d+\.\d+\.\d+(-[a-z0-9-]+)?$", ref), ref


def test_runs_as_the_numeric_non_root_uid_the_pod_uses(dockerfile: str) -> None:
    users = [rest for kind, rest in parse(dockerfile) if kind == "USER"]
    assert users, "no USER: the image would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, "USER must be numeric for runAsNonRoot to be verifiable"
    assert int(uid) == JOB_UID and (not gid or int(gid) == JOB_UID)
    assert build_args(dockerfile).get("JOB_UID") == str(JOB_UID)


def test_installs_the_repositorys_runner(dockerfile: str) -> None:
    copies = [shlex.split(rest) for kind, rest in parse(dockerfile) if kind == "COPY"]
    sources = [p for parts in copies for p in parts[:-1] if not p.startswith("--")]
    assert "images/ci-runner-python/mendflow_runner" in sources
    runner = ROOT / "images" / "ci-runner-python" / "mendflow_runner"
    assert (runner / "__init__.py").is_file() and (runner / "transfer.py").is_file()
    ignore = (ROOT / "images" / Path(DOCKERFILES[0]).parent.name / "Dockerfile.dockerignore").read_text()
    assert "!images/ci-runner-python/mendflow_runner/" in ignore.splitlines()


def test_tools_are_pinned_and_caches_live_under_the_cache_mount(dockerfile: str) -> None:
    args = build_args(dockerfile)
    assert re.fullmatch(r"\d+\.\d+\.\d+", args["UV_VERSION"]) and re.fullmatch(r"\d+\.\d+\.\d+", args["RUFF_VERSION"])
    runs = " ".join(rest for kind, rest in parse(dockerfile) if kind == "RUN")
    assert '"uv==${UV_VERSION}"' in runs and '"ruff==${RUFF_VERSION}"' in runs
    assert "--no-cache-dir" in runs
    env = env_of(dockerfile)
    for var in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "XDG_CACHE_HOME"):
        assert env[var].startswith(CACHE_DIR), var
