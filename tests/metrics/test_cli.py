"""`mendflow metrics`: bad input is one line on stderr and exit 2, before anything is served."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def mendflow_metrics(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "metrics", *args],
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}, **env},
        timeout=60,
        check=False,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize(
    ("args", "word"),
    [(["--bogus"], "--bogus"), (["--port", "http"], "--port"), (["--port", "0"], "--port"), (["--port"], "--port")],
)
def test_usage_errors(args: list[str], word: str) -> None:
    assert_one_line(mendflow_metrics(*args), word)


def test_without_a_prefect_server_it_says_which_setting_to_set() -> None:
    assert_one_line(mendflow_metrics(), "PREFECT_API_URL")


def test_a_port_in_use_is_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert_one_line(mendflow_metrics("--port", port, PREFECT_API_URL="http://127.0.0.1:9/api"), port)
