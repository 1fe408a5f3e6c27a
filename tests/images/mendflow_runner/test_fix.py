"""The runner's fix mode run directly: it touches only regular .py files of the snapshot it was asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fixtures.repos import RepoFactory

from .helpers import runner_env, snapshot

UNUSED = "import os\n\n\ndef test_a():\n    assert True\n"


def _fix(tmp_path: Path, repo: Path, uv_cache: Path, paths: list[str]) -> dict[str, Any]:
    source = snapshot(repo, tmp_path / "in" / "source.tar.gz")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "mendflow_runner", "--source", str(source), "--out", str(out)]
    proc = subprocess.run(
        [*argv, "--fix", json.dumps(paths)], env=runner_env(uv_cache), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (out / "report.json").exists()  # fix mode writes no build report
    return json.loads((out / "fixes.json").read_text())


def test_a_path_outside_the_snapshot_or_not_python_is_refused(
    tmp_path: Path, make_repo: RepoFactory, uv_cache: Path
) -> None:
    repo = make_repo({"tests/test_a.py": UNUSED, "tests/data.txt": "import os\n"})
    fixes = _fix(tmp_path, repo, uv_cache, ["../outside.py", "tests/data.txt"])
    assert [(f["path"], f["text"], bool(f["error"])) for f in fixes["files"]] == [
        ("../outside.py", None, True),
        ("tests/data.txt", None, True),
    ]


def test_a_link_to_a_file_is_not_fixed_through(tmp_path: Path, make_repo: RepoFactory, uv_cache: Path) -> None:
    repo = make_repo({"tests/test_a.py": UNUSED})
    (repo / "tests" / "test_link.py").symlink_to("test_a.py")
    subprocess.run(["git", "add", "tests/test_link.py"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "link"], cwd=repo, check=True)
    fixes = _fix(tmp_path, repo, uv_cache, ["tests/test_link.py"])
    assert fixes["files"] == [
        {"path": "tests/test_link.py", "text": None, "remaining": [], "error": "not a regular file of the snapshot"}
    ]
