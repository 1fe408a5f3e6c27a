"""The CI image Dockerfiles: parse them (stdlib, no engine here) and check what a restricted pod relies on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mendflow.launcher.k8s_manifest import CACHE_DIR, JOB_UID

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((ROOT / "images").glob("ci-runner-*/Dockerfile"))


def parse(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: comments dropped, backslash continuations joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        instructions.append((word.upper(), rest.strip()))
    assert not pending, "dangling line continuation"
    return instructions


def _args(text: str) -> dict[str, str]:
    return dict(arg.split("=", 1) for kind, arg in parse(text) if kind == "ARG" and "=" in arg)


def _env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for kind, rest in parse(text):
        if kind == "ENV":
            env.update(dict(part.split("=", 1) for part in shlex.split(rest)))
    return env


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
    ref = base.replace("${PYTHON_IMAGE}", _args(dockerfile).get("PYTHON_IMAGE", ""))
    # a digest, or a full x.y.z version tag: never 'latest' or a floating '3.11'
    assert "@sha256:" in ref or re.search(r":\d+\.\d+\.\d+(-[a-z0-9-]+)?$", ref), ref


def test_runs_as_the_numeric_non_root_uid_the_pod_uses(dockerfile: str) -> None:
    users = [rest for kind, rest in parse(dockerfile) if kind == "USER"]
    assert users, "no USER: the image would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, "USER must be numeric for runAsNonRoot to be verifiable"
    assert int(uid) == JOB_UID and (not gid or int(gid) == JOB_UID)
    assert _args(dockerfile).get("JOB_UID") == str(JOB_UID)


def test_installs_the_repositorys_runner(dockerfile: str) -> None:
    copies = [shlex.split(rest) for kind, rest in parse(dockerfile) if kind == "COPY"]
    sources = [p for parts in copies for p in parts[:-1] if not p.startswith("--")]
    assert "images/runner/mendflow_runner" in sources
    runner = ROOT / "images" / "runner" / "mendflow_runner"
    assert (runner / "__init__.py").is_file() and (runner / "transfer.py").is_file()
    ignore = (ROOT / "images" / Path(DOCKERFILES[0]).parent.name / "Dockerfile.dockerignore").read_text()
    assert "!images/runner/mendflow_runner/" in ignore.splitlines()


def test_tools_are_pinned_and_caches_live_under_the_cache_mount(dockerfile: str) -> None:
    args = _args(dockerfile)
    assert re.fullmatch(r"\d+\.\d+\.\d+", args["UV_VERSION"]) and re.fullmatch(r"\d+\.\d+\.\d+", args["RUFF_VERSION"])
    runs = " ".join(rest for kind, rest in parse(dockerfile) if kind == "RUN")
    assert '"uv==${UV_VERSION}"' in runs and '"ruff==${RUFF_VERSION}"' in runs
    assert "--no-cache-dir" in runs
    env = _env(dockerfile)
    for var in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "XDG_CACHE_HOME"):
        assert env[var].startswith(CACHE_DIR), var
