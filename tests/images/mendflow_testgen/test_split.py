"""The builder job split at its dependency phase, as the Kubernetes launcher runs it: the second process gates the
tests with no network (a fresh network namespace) and an empty cache, from the first one's archive alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mendflow import contracts
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import demo_files, runner_env, snapshot

pytestmark = pytest.mark.slow

GENERATED = "from demo import sign\n\n\ndef test_sign_negative() -> None:\n    assert sign(-1) == 'negative'\n"
CANDIDATES = {
    "mode": "files",
    "files": {"tests/test_demo_mendflow.py": GENERATED},
    "tests_dir": "tests",
    "targets": [
        {"path": "demo/__init__.py", "symbol": "sign", "start_line": 5, "end_line": 8, "missing_lines": [7]},
    ],
    "runs": 2,
}


def _phase(phase: str, source: Path, candidates: Path, out: Path, archive: Path, cache: Path) -> str:
    env = runner_env(cache, MENDFLOW_PHASE=phase, MENDFLOW_HANDOFF=str(archive), MENDFLOW_JOB_TIMEOUT_SEC="300")
    prefix = ["unshare", "--net", "--"] if phase == "offline" else []
    argv = [*prefix, sys.executable, "-m", "mendflow_testgen"]
    argv += ["--source", str(source), "--candidates", str(candidates), "--out", str(out)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_the_offline_pod_keeps_a_test_that_covers_a_missed_line(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = snapshot(make_repo(demo_files()), tmp_path / "src.tar.gz")
    candidates = tmp_path / "candidates.json"
    candidates.write_text(json.dumps(CANDIDATES))
    out, archive = tmp_path / "pod" / "out", tmp_path / "store" / "env.tar.gz"
    _phase("dependencies", source, candidates, out, archive, tmp_path / "cache")
    assert archive.is_file() and not (out / "result.json").exists()
    shutil.rmtree(tmp_path / "pod")  # nothing shared with the second pod but the archive
    said = _phase("offline", source, candidates, out, archive, tmp_path / "empty-cache")
    result = contracts.TestgenJobResult.model_validate_json((out / "result.json").read_text())
    assert result.error == "", said
    assert [k.node_id for k in result.kept] == ["tests/test_demo_mendflow.py::test_sign_negative"]
