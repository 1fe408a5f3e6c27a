"""Every usage error, bad setting and bad input is one line on stderr and exit 2, never a traceback.

The real CLI runs as a subprocess: only that goes through ``main()``, where the one-line rule lives.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def mendflow(*args: str, cwd: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MENDFLOW_", "BUILD_TIMEOUT", "MIN_LINE"))}
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=60,
        check=False,
        cwd=cwd,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert all(word in lines[0] for word in words), lines[0]


COMMANDS = ["build", "run", "index", "search", "webhook", "plan", "gen", "reap", "metrics"]


@pytest.mark.parametrize("command", COMMANDS)
def test_unknown_option(command: str) -> None:
    assert_one_line(mendflow(command, "--bogus"), "--bogus")


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["plan"], "--report"),
        (["gen"], "--spec"),
        (["search"], "query"),
    ],
)
def test_missing_argument(args: list[str], word: str) -> None:
    assert_one_line(mendflow(*args), word)


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["reap", "--older-than", "soon"], "--older-than"),
        (["run", ".", "--deployment", "d/x", "--timeout", "abc"], "--timeout"),
        (["search", "x", "--k", "many"], "--k"),
        (["webhook", "--port", "x"], "--port"),
        (["metrics", "--port", "x"], "--port"),
        (["plan", "--report", "/no/such/report.json"], "/no/such/report.json"),
        (["gen", "--spec", "/no/such/spec.json"], "/no/such/spec.json"),
        (["index", "/no/such/tree"], "/no/such/tree"),
    ],
)
def test_malformed_value(args: list[str], word: str) -> None:
    assert_one_line(mendflow(*args), word)


@pytest.mark.parametrize("command", ["build", "run"])
def test_no_repository_outside_a_repository(command: str, tmp_path: Path) -> None:
    assert_one_line(mendflow(command, cwd=str(tmp_path)), "not a git repository")


def test_unknown_command() -> None:
    assert_one_line(mendflow("heel"), "heel")


@pytest.mark.parametrize("repo", ["", "/no/such/repository"])
def test_bad_repository(repo: str) -> None:
    assert_one_line(mendflow("build", repo))


@pytest.mark.parametrize(
    ("variable", "value"),
    [("MENDFLOW_LAUNCHER", "nope"), ("BUILD_TIMEOUT_SEC", "abc"), ("MENDFLOW_SANDBOX__MEMORY_LIMIT_MB", "lots")],
)
def test_bad_setting_names_the_variable(variable: str, value: str) -> None:
    assert_one_line(mendflow("build", ".", **{variable: value}), variable)
