"""``proc.beside``: work on a thread of its own, at a lower CPU priority that the commands it starts inherit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mendflow_runner import proc
from mendflow_runner.proc import Log

# The nice value, field 19 of /proc/<pid>/stat (the command's name, field 2, has no space here).
NICE_OF_SELF = ["sh", "-c", "cut -d' ' -f19 /proc/self/stat"]


def _nice_of_a_command(tmp_path: Path) -> int:
    step = proc.run(NICE_OF_SELF, cwd=tmp_path, env=dict(os.environ), timeout=30, log=Log(tmp_path / "log"))
    return int(step.stdout)


def test_a_command_started_beside_runs_at_the_lower_priority(tmp_path: Path) -> None:
    nice = proc.beside(lambda: _nice_of_a_command(tmp_path)).result(timeout=30)
    assert nice == os.getpriority(os.PRIO_PROCESS, 0) + proc.BESIDE_NICE


def test_the_main_line_keeps_its_priority(tmp_path: Path) -> None:
    proc.beside(lambda: _nice_of_a_command(tmp_path)).result(timeout=30)
    assert _nice_of_a_command(tmp_path) == os.getpriority(os.PRIO_PROCESS, 0)


def test_what_fails_beside_is_raised_by_its_result() -> None:
    def fail() -> None:
        raise ValueError("the linter's own bug")

    with pytest.raises(ValueError, match="the linter's own bug"):
        proc.beside(fail).result(timeout=30)
