"""Run the test suite under coverage.py; read what happened (exit code, JUnit XML, the plugin's journal)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from . import progress, repo_config
from .proc import Log, StepResult, offline, run

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"
# Without a coverage config of its own, a repo's tests are not counted as code under test.
TEST_OMIT = "tests/*,test/*,*/tests/*,*/test/*,test_*.py,*/test_*.py,*_test.py,conftest.py,*/conftest.py"

# pytest-cov's options that take a value as the next word when written without "=".
COV_OPTIONS_WITH_VALUE = {
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--cov-context",
    "--cov-precision",
}


@dataclass
class TestRun:
    __test__ = False
    step: StepResult
    command: list[str]
    marker_used: str | None
    failed: list[str] = field(default_factory=list)
    memory_errors: list[str] = field(default_factory=list)
    running: str | None = None  # the test that started but never reported its teardown
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Paths:
    root: Path
    venv_python: str
    junit: Path
    coverage_file: Path
    events: Path


def pytest_argv(paths: Paths, marker: str | None) -> list[str]:
    argv = [
        "-m",
        "pytest",
        "-p",
        "mendflow_job_plugin",
        "-p",
        "no:cacheprovider",
        f"--junitxml={paths.junit}",
    ]
    argv += ["-o", "junit_family=xunit2", *addopts_without_cov(paths.root)]
    return argv + (["-m", marker] if marker else [])


def addopts_without_cov(root: Path) -> list[str]:
    """pytest arguments that drop pytest-cov's options from the repo's addopts ([] when it has none).

    mendflow measures with coverage.py itself: pytest-cov would start a second tracer over ours, and where
    the plugin is not installed its options end the run as a usage error.
    """
    addopts = repo_config.pytest_addopts(root)
    kept = without_cov(addopts)
    return [] if kept == addopts else ["-p", "no:cov", "-o", f"addopts={shlex.join(kept)}"]


def without_cov(args: list[str]) -> list[str]:
    """``args`` without pytest-cov's options (``--cov=src``, ``--cov src``, ``--cov-report term``, ``--no-cov``)."""
    kept: list[str] = []
    skip_value = False
    for arg in args:
        if skip_value and not arg.startswith("-"):
            skip_value = False
            continue
        skip_value = arg in COV_OPTIONS_WITH_VALUE
        if not arg.startswith(("--cov", "--no-cov")):
            kept.append(arg)
    return kept


def coverage_argv(paths: Paths) -> list[str]:
    argv = [paths.venv_python, "-m", "coverage", "run", "--branch"]
    if not repo_config.has_coverage_config(paths.root):
        argv += ["--source=.", f"--omit={TEST_OMIT}"]
    return argv


def run_tests(paths: Paths, marker: str, env: dict[str, str], timeout: float, log: Log) -> TestRun:
    use = marker if marker and marker in repo_config.declared_markers(paths.root) else None
    paths.coverage_file.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **env,
        "COVERAGE_FILE": str(paths.coverage_file),
        "PYTHONPATH": os.pathsep.join(p for p in (str(PLUGIN_DIR), env.get("PYTHONPATH", "")) if p),
        "MENDFLOW_PYTEST_EVENTS": str(paths.events),
    }
    py_args = pytest_argv(paths, use)
    workspace = Path(os.path.commonpath([paths.root, paths.junit, paths.coverage_file, paths.events]))
    interpreter = Path(paths.venv_python).resolve().parent.parent  # the base install the venv links to
    argv = offline(coverage_argv(paths) + py_args, writable=workspace, readable=(PLUGIN_DIR, interpreter))
    paths.events.unlink(missing_ok=True)  # a journal left by an earlier run in this workspace would count twice
    with progress.TestCounter(paths.events):
        step = run(argv, cwd=paths.root, env=env, timeout=timeout, log=log)
    result = TestRun(step=step, command=["pytest", *py_args[2:]], marker_used=use)
    _read_journal(paths.events, result)
    result.counts = junit_counts(paths.junit)
    return result


def _read_journal(path: Path, result: TestRun) -> None:
    if not path.is_file():
        return
    open_tests: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        node = ev.get("nodeid", "")
        if ev.get("event") == "start":
            open_tests[node] = None
        elif ev.get("outcome") == "failed":
            if node not in result.failed:
                result.failed.append(node)
            if ev.get("memory_error") and node not in result.memory_errors:
                result.memory_errors.append(node)
        if ev.get("when") == "teardown":
            open_tests.pop(node, None)
    result.running = next(reversed(open_tests), None) if open_tests else None


def junit_counts(path: Path) -> dict[str, int]:
    if not path.is_file():
        return {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return {}
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {"total": 0, "failed": 0, "errors": 0, "skipped": 0}
    for s in suites:
        counts["total"] += int(s.get("tests", 0))
        counts["failed"] += int(s.get("failures", 0))
        counts["errors"] += int(s.get("errors", 0))
        counts["skipped"] += int(s.get("skipped", 0))
    counts["passed"] = max(0, counts["total"] - counts["failed"] - counts["errors"] - counts["skipped"])
    return counts


def killed_by(step: StepResult) -> int | None:
    """The signal that ended the suite, also when a shell-like parent reported it as 128+N."""
    rc = step.returncode
    if rc is None:
        return None
    if rc < 0:
        return -rc
    if rc > 128 and rc - 128 in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM):
        return rc - 128
    return None
