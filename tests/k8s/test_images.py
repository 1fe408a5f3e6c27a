"""The CI image Dockerfiles: parse them (stdlib, no engine here) and check what a restricted pod relies on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mendflow.jobcode import IMAGE_PACKAGES, RUNNER_IMAGES
from mendflow.launcher.k8s_manifest import CACHE_DIR, JOB_UID
from tests.k8s.dockerfile import build_args, env_of, parse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((ROOT / "images").glob("ci-runner-*/Dockerfile"))


@pytest.fixture(params=DOCKERFILES, ids=lambda p: p.parent.name)
def dockerfile_path(request: pytest.FixtureRequest) -> Path:
    return Path(request.param)


@pytest.fixture
def dockerfile(dockerfile_path: Path) -> str:
    return dockerfile_path.read_text()


def test_every_language_image_has_a_dockerfile() -> None:
    assert {ROOT / "images" / image / "Dockerfile" for image in RUNNER_IMAGES.values()} == set(DOCKERFILES)


def test_parser_rejects_what_it_cannot_read() -> None:
    with pytest.raises(AssertionError):
        parse("FROM x\nRUN a \\")
    assert parse("# c\nfrom x\nRUN a \\\n  # note\n  && b\n") == [("FROM", "x"), ("RUN", "a  && b")]


def test_base_images_are_pinned(dockerfile: str) -> None:
    args = build_args(dockerfile)
    for base in [rest.split(" AS ")[0] for kind, rest in parse(dockerfile) if kind == "FROM"]:
        ref = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m[1], ""), base)
        # a digest, or a full x.y.z version tag: never 'latest' or a floating '3.11'
        assert "@sha256:" in ref or re.search(r":\d+\.\d+\.\d+(-[a-z0-9-]+)?$", ref), ref


def test_runs_as_the_numeric_non_root_uid_the_pod_uses(dockerfile: str) -> None:
    users = [rest for kind, rest in parse(dockerfile) if kind == "USER"]
    assert users, "no USER: the image would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, "USER must be numeric for runAsNonRoot to be verifiable"
    assert int(uid) == JOB_UID and (not gid or int(gid) == JOB_UID)
    assert build_args(dockerfile).get("JOB_UID") == str(JOB_UID)


def test_the_user_is_named_as_in_the_local_sandbox(dockerfile: str) -> None:
    """git takes a commit's author from the passwd entry where a test configures none (``JOB_ENV``)."""
    (useradd,) = [rest for kind, rest in parse(dockerfile) if kind == "RUN" and "useradd" in rest]
    assert '--comment "mendflow job"' in useradd


def test_installs_the_repositorys_in_job_packages(dockerfile_path: Path) -> None:
    """Each package the image's jobs import (jobcode.IMAGE_PACKAGES), copied from this repository and let
    through the build context's ignore file."""
    dockerfile = dockerfile_path.read_text()
    copies = [shlex.split(rest) for kind, rest in parse(dockerfile) if kind == "COPY"]
    sources = [p for parts in copies for p in parts[:-1] if not p.startswith("--")]
    ignore = (dockerfile_path.parent / "Dockerfile.dockerignore").read_text().splitlines()
    for package in IMAGE_PACKAGES[dockerfile_path.parent.name]:
        (found,) = [p for p in sources if p.endswith(f"/{package}")]
        assert (ROOT / found / "__init__.py").is_file() and (ROOT / found / "__main__.py").is_file()
        assert f"!{found}/" in ignore


def test_caches_live_under_the_cache_mount(dockerfile: str) -> None:
    env = env_of(dockerfile)
    assert env["XDG_CACHE_HOME"].startswith(CACHE_DIR)
    assert env.get("MENDFLOW_JOB_CACHE", CACHE_DIR) == CACHE_DIR


def test_the_go_image_uses_its_own_toolchain_only() -> None:
    env = env_of((ROOT / "images" / "ci-runner-go" / "Dockerfile").read_text())
    assert env["GOTOOLCHAIN"] == "local" and env["PATH"].startswith("/usr/local/go/bin:")


def test_python_tools_are_pinned_and_their_caches_live_under_the_cache_mount() -> None:
    dockerfile = (ROOT / "images" / "ci-runner-python" / "Dockerfile").read_text()
    args = build_args(dockerfile)
    assert re.fullmatch(r"\d+\.\d+\.\d+", args["UV_VERSION"]) and re.fullmatch(r"\d+\.\d+\.\d+", args["RUFF_VERSION"])
    runs = " ".join(rest for kind, rest in parse(dockerfile) if kind == "RUN")
    assert '"uv==${UV_VERSION}"' in runs and '"ruff==${RUFF_VERSION}"' in runs
    assert "--no-cache-dir" in runs
    env = env_of(dockerfile)
    for var in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "XDG_CACHE_HOME"):
        assert env[var].startswith(CACHE_DIR), var


def test_the_go_image_and_the_local_jobs_build_the_same_golangci_lint() -> None:
    image = build_args((ROOT / "images" / "ci-runner-go" / "Dockerfile").read_text())["GOLANGCI_LINT_VERSION"]
    script = (ROOT / "scripts" / "build-go-tools.sh").read_text()
    assert re.fullmatch(r"v\d+\.\d+\.\d+", image)
    assert f'GOLANGCI_LINT_VERSION="${{GOLANGCI_LINT_VERSION:-{image}}}"' in script


def test_build_args_expand_the_earlier_args_they_name() -> None:
    text = "ARG V=1.2.3\nARG IMAGE=golang:${V}-bookworm\nARG OTHER=$V/${UNSET}\n"
    assert build_args(text) == {"V": "1.2.3", "IMAGE": "golang:1.2.3-bookworm", "OTHER": "1.2.3/${UNSET}"}
