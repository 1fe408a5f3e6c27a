"""``proc.StableRoot``: a job's workspace seen at one path by every job, through the real bubblewrap."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_runner import proc

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def _inside(workspace: Path, tmp_path: Path) -> str:
    """What a sandboxed ``sh`` sees as its directory and reads through a rewritten argument."""
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "marker").write_text("here\n")
    root = proc.StableRoot(proc.sandbox(workspace), workspace)
    argv, env = root.command(
        ["sh", "-c", 'echo "$PWD $(pwd)"; cat "$0"', str(workspace / "src" / "marker")],
        workspace / "src",
        {"PATH": "/usr/bin:/bin"},
    )
    return subprocess.run(argv, cwd=workspace / "src", env=env, capture_output=True, text=True, check=True).stdout


@needs_bwrap
def test_two_workspaces_are_seen_at_the_same_path(tmp_path: Path) -> None:
    first, second = _inside(tmp_path / "a" / "work", tmp_path), _inside(tmp_path / "b" / "work", tmp_path)
    assert first == second == f"{proc.STABLE_ROOT}/src {proc.STABLE_ROOT}/src\nhere\n"


@needs_bwrap
def test_flags_and_environment_naming_the_workspace_are_rewritten(tmp_path: Path) -> None:
    root = proc.StableRoot(proc.sandbox(tmp_path), tmp_path)
    argv, env = root.command(
        ["go", f"-coverprofile={tmp_path}/c.out", "./..."], tmp_path, {"GOCACHE": f"{tmp_path}/gc", "HOME": "/home/x"}
    )
    assert f"-coverprofile={proc.STABLE_ROOT}/c.out" in argv and "./..." in argv
    assert env["GOCACHE"] == f"{proc.STABLE_ROOT}/gc" and env["HOME"] == "/home/x"
    assert root.path(f"{tmp_path}other/x") == f"{tmp_path}other/x"  # a sibling is not inside


def test_without_bubblewrap_the_command_runs_as_given(tmp_path: Path) -> None:
    root = proc.StableRoot(proc.as_is, tmp_path)
    argv, env = root.command(["go", f"-coverprofile={tmp_path}/c.out"], tmp_path, {"GOCACHE": f"{tmp_path}/gc"})
    assert argv == ["go", f"-coverprofile={tmp_path}/c.out"] and env == {"GOCACHE": f"{tmp_path}/gc"}


def test_what_a_command_printed_names_the_real_workspace_again(tmp_path: Path) -> None:
    root = proc.StableRoot(proc.as_is, tmp_path)
    printed = f"{proc.STABLE_ROOT}/src/a.rs:3:1 error\nin {proc.STABLE_ROOT}\n{proc.STABLE_ROOT}-other/b.rs\n"
    assert root.real_text(printed) == f"{tmp_path}/src/a.rs:3:1 error\nin {tmp_path}\n{proc.STABLE_ROOT}-other/b.rs\n"
