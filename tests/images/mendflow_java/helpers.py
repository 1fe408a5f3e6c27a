"""Shared by the Java runner's tests: Maven projects as real git repos, run through ``python -m mendflow_java``
with the host's JDK and Maven (as the local launcher hands them to jobs), their dependencies from Maven Central."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.images.mendflow_runner.helpers import RUNNER_DIR, run_language_runner, runner_env, tree_files

JAVA_RUNNER_DIR = RUNNER_DIR.parent / "ci-runner-java"
EXAMPLE = RUNNER_DIR.parents[1] / "examples" / "java-isbn"
TEST_FILE = "src/test/java/org/example/isbn/IsbnTest.java"
SOURCE_FILE = "src/main/java/org/example/isbn/Isbn.java"
WRAPPER_PLUGIN = "org.apache.maven.plugins:maven-wrapper-plugin:3.3.2"

needs_maven = pytest.mark.skipif(shutil.which("mvn") is None, reason="needs a JDK and Maven")


def example_files(**overrides: str | None) -> dict[str, str | bytes | None]:
    return tree_files(EXAMPLE, **overrides)


def java_env(cache: Path, **extra: str) -> dict[str, str]:
    """The Java image's environment: the host's java and mvn (both in /usr/bin here)."""
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    env["PYTHONPATH"] = f"{RUNNER_DIR}:{JAVA_RUNNER_DIR}"
    env["HOME"] = str(cache / "home")
    return env


def run_java_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> dict[str, Any]:
    return run_language_runner("mendflow_java", source, out, java_env(cache, **env), *args)


def wrapper_files(work: Path, maven_version: str) -> dict[str, str]:
    """``mvnw`` and its properties as Maven's own wrapper plugin writes them (``only-script``: the script
    downloads the distribution the properties name from Maven Central)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(str(example_files()["pom.xml"]))
    subprocess.run(
        ["mvn", "-B", "-q", f"-Dmaven.repo.local={work / 'm2'}", f"{WRAPPER_PLUGIN}:wrapper", "-Dtype=only-script",
         f"-Dmaven={maven_version}"],
        cwd=work, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return {name: (work / name).read_text() for name in ("mvnw", ".mvn/wrapper/maven-wrapper.properties")}
