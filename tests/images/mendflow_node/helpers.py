"""Shared by the Node runner's tests: projects as real git repos, run through ``python -m mendflow_node`` with the
real Node, npm and the npm registry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.images.mendflow_runner.helpers import RUNNER_DIR, run_language_runner, runner_env, tree_files

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
    return tree_files(EXAMPLE, **overrides)


def node_env(cache: Path, **extra: str) -> dict[str, str]:
    """The Node image's environment: node and npm on PATH, the runner from this checkout (unless ``PYTHONPATH``
    is given)."""
    node_bin = Path(shutil.which("node") or "/usr/bin/node").parent
    env = runner_env(cache / "uv", MENDFLOW_JOB_CACHE=str(cache), **extra)
    env["PATH"] = ":".join([str(node_bin), env["PATH"]])
    env["PYTHONPATH"] = extra.get("PYTHONPATH", f"{RUNNER_DIR}:{NODE_RUNNER_DIR}")
    env["HOME"] = extra.get("HOME", str(cache / "home"))
    return env


def run_node_runner(source: Path, out: Path, cache: Path, *args: str, **env: str) -> dict[str, Any]:
    return run_language_runner("mendflow_node", source, out, node_env(cache, **env), *args)


def package_json(test: str, **dev: str) -> str:
    return json.dumps(
        {"name": "demo", "version": "1.0.0", "private": True, "scripts": {"test": test}, "devDependencies": dev}
    )
