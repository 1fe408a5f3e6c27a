"""Shared by the Node runner's tests: projects as real git repos, run through ``python -m mendflow_node`` with the
real Node, npm and the npm registry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.images.mendflow_runner.helpers import RUNNER_DIR, runner_env

NODE_RUNNER_DIR = RUNNER_DIR.parent / "ci-runner-node"
EXAMPLE = RUNNER_DIR.parents[1] / "examples" / "ts-invoice"


LOCKS = RUNNER_DIR.parents[1] / "tests" / "fixtures" / "node"  # real pnpm and yarn lockfiles of is-number
USES_IS_NUMBER = """\
import { test } from "node:test";
import assert from "node:assert/strict";
import isNumber from "is-number";

test("a number is a number", () => {
  assert.ok(isNumber(3));
});
"""


def example_files(**overrides: str | None) -> dict[str, str | bytes | None]:
    """The TypeScript example's files (keys are paths), some replaced (None removes one)."""
    files: dict[str, str | bytes | None] = {
        p.relative_to(EXAMPLE).as_posix(): p.read_text() for p in sorted(EXAMPLE.rglob("*")) if p.is_file()
    }
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


def node_env(cache: Path, **extra: str) -> dict[str, str]:
    """The Node image's environment: node and npm on PATH, the npm registry from this machine's configuration."""
    node_bin = Path(shutil.which("node") or "/usr/bin/node").parent
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    env["PATH"] = ":".join([str(node_bin), env["PATH"]])
    env["PYTHONPATH"] = f"{RUNNER_DIR}:{NODE_RUNNER_DIR}"
    env["HOME"] = str(cache / "home")
    return env


def run_node_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow_node", "--source", str(source), "--out", str(out), *args],
        env=node_env(cache, **env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = out / "report.json"
    assert proc.returncode == 0 and report.is_file(), f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return dict(json.loads(report.read_text()))


def package_json(test: str, **dev: str) -> str:
    return json.dumps(
        {"name": "demo", "version": "1.0.0", "private": True, "scripts": {"test": test}, "devDependencies": dev}
    )
