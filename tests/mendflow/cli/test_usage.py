"""Every usage error, bad setting and bad input is one line on stderr and exit 2, never a traceback.

The real CLI runs as a subprocess: only that goes through ``main()``, where the one-line rule lives.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def mendflow(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MENDFLOW_", "BUILD_TIMEOUT", "MIN_LINE"))}
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=60,
        check=False,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize("command", ["build", "run", "index", "search", "webhook", "plan", "gen", "reap"])
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
    ],
)
def test_malformed_value(args: list[str], word: str) -> None:
    assert_one_line(mendflow(*args), word)


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
