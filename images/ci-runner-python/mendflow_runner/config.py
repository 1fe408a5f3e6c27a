"""The job's parameters, from argv with ``MENDFLOW_JOB_*`` environment variables as defaults."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# The runner keeps this much of its budget back so it can still write and upload a report.
REPORT_RESERVE_SEC = 15.0
# A gate's flake check runs a selection a few times; more than this is a mistake, not a check.
MAX_RUNS = 20


@dataclass
class JobConfig:
    source: str
    out: Path
    uploads: list[tuple[str, str]]
    repo: str
    commit: str
    branch: str
    stage: str
    attempt: int
    marker: str
    timeout_sec: float
    python: str
    workspace: Path
    select: list[str] = field(default_factory=list)  # node ids to run instead of the suite ([]: the suite)
    lint_only: bool = False  # install and lint, run no test: a parent commit's lint baseline
    fix: list[str] | None = None  # fix mode: the files to run the repo's fixers on (None: a build)
    runs: int = 1  # how many times the tests run, stopping at the first that does not pass (a gate's flake check)
    started: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        reserve = min(REPORT_RESERVE_SEC, self.timeout_sec * 0.1)
        return self.started + self.timeout_sec - reserve

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


def _env(name: str, default: str) -> str:
    return os.environ.get(f"MENDFLOW_JOB_{name}", default)


def _upload(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep or not name or not url:
        raise argparse.ArgumentTypeError(f"--upload wants NAME=URL, got {text!r}")
    return name, url


def _select(text: str) -> list[str]:
    """A JSON list of pytest node ids ('' or '[]': none). Where they may point is checked after unpacking."""
    if not text.strip():
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--select wants a JSON list of node ids: {exc}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise argparse.ArgumentTypeError("--select wants a JSON list of node ids (strings)")
    return value


def _runs(text: str) -> int:
    """How many test runs: 1 to ``MAX_RUNS``."""
    try:
        runs = int(text)
    except ValueError:
        runs = 0
    if not 1 <= runs <= MAX_RUNS:
        raise argparse.ArgumentTypeError(f"--runs wants a whole number from 1 to {MAX_RUNS}, got {text!r}")
    return runs


def _fix(text: str) -> list[str] | None:
    """Fix mode's JSON list of repository-relative paths ('': not fix mode). Checked after unpacking."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--fix wants a JSON list of paths: {exc}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise argparse.ArgumentTypeError("--fix wants a JSON list of paths (strings)")
    return value


def parse_args(argv: list[str] | None = None) -> JobConfig:
    p = argparse.ArgumentParser(prog="python -m mendflow_runner", description=__doc__)
    p.add_argument("--source", required=True, help="path or http(s) URL of a .tar/.tar.gz snapshot")
    p.add_argument("--out", required=True, type=Path, help="directory for report.json and friends")
    p.add_argument("--upload", action="append", type=_upload, default=[], metavar="NAME=URL")
    p.add_argument("--repo", default=_env("REPO", "repo"))
    p.add_argument("--commit", default=_env("COMMIT", ""))
    p.add_argument("--branch", default=_env("BRANCH", ""))
    p.add_argument("--stage", default=_env("STAGE", "build"))
    p.add_argument("--attempt", type=int, default=int(_env("ATTEMPT", "1")))
    p.add_argument("--marker", default=_env("TEST_MARKER", "fast"))
    p.add_argument(
        "--select",
        type=_select,
        default=_env("SELECT", ""),
        help="JSON list of pytest node ids to run instead of the suite (then no marker)",
    )
    p.add_argument(
        "--lint-only",
        action="store_true",
        default=_env("LINT_ONLY", "") == "1",
        help="install the dependencies and lint, run no test",
    )
    p.add_argument(
        "--fix",
        type=_fix,
        default=_env("FIX", ""),
        help="JSON list of paths: run the repo's ruff fixers on them and write fixes.json instead of building",
    )
    p.add_argument(
        "--runs",
        type=_runs,
        default=_env("RUNS", "1"),
        help="run the tests this many times, stopping at the first run that does not pass",
    )
    p.add_argument("--timeout", type=float, default=float(_env("TIMEOUT_SEC", "900")))
    p.add_argument("--python", default=_env("PYTHON", sys.executable))
    p.add_argument("--workspace", type=Path, default=Path(_env("WORKSPACE", "")) if _env("WORKSPACE", "") else None)
    a = p.parse_args(argv)
    out = a.out.resolve()
    workspace = (a.workspace or out.parent / "work").resolve()
    return JobConfig(
        source=a.source,
        out=out,
        uploads=a.upload,
        repo=a.repo,
        commit=a.commit,
        branch=a.branch,
        stage=a.stage,
        attempt=a.attempt,
        marker=a.marker,
        timeout_sec=a.timeout,
        python=a.python,
        workspace=workspace,
        select=a.select,
        lint_only=a.lint_only,
        fix=a.fix,
        runs=a.runs,
    )
