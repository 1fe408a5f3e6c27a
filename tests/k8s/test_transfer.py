"""The pod's transfer wrapper (stdlib only) against a real S3 server: presigned GET in, presigned PUT out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mendflow.store.s3 import S3Store
from tests.fixtures.s3 import S3Bucket, S3Server

pytestmark = pytest.mark.slow  # a moto server process

RUNNER = Path(__file__).resolve().parents[2] / "images" / "ci-runner-python"
STDLIB_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable

# The command under test: reads its input, writes two outputs, exits with $EXIT.
SCRIPT = """
import os, pathlib, sys
ws = pathlib.Path(os.environ["MENDFLOW_WORKSPACE"])
data = (ws / "in" / "source.tar.gz").read_bytes()
print("command saw", len(data), "bytes; transfer env visible:", "MENDFLOW_TRANSFER" in os.environ)
(ws / "out" / "report.json").write_text('{"ok": true}')
(ws / "out" / "junit.xml").write_bytes(data[::-1])
sys.exit(int(os.environ.get("EXIT", "0")))
"""


@pytest.fixture
def store(s3_server: S3Server, s3_bucket: S3Bucket) -> S3Store:
    return S3Store(s3_bucket.name, "t", s3_server.settings())


def _run(
    tmp_path: Path,
    inputs: dict[str, str],
    outputs: dict[str, str],
    exit_code: int = 0,
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    term = tmp_path / "termination-log"
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(RUNNER),
        "MENDFLOW_WORKSPACE": str(tmp_path / "ws"),
        "MENDFLOW_TERMINATION_LOG": str(term),
        "MENDFLOW_TRANSFER": json.dumps({"inputs": inputs, "outputs": outputs}),
        "EXIT": str(exit_code),
    }
    proc = subprocess.run(
        [STDLIB_PYTHON, "-B", "-m", "mendflow_runner.transfer", "--", STDLIB_PYTHON, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc, json.loads(term.read_text())


def test_inputs_fetched_outputs_delivered_report_last(tmp_path: Path, store: S3Store) -> None:
    store.put_bytes("src.tar.gz", b"0123456789")
    outputs = {
        "report.json": store.upload_url("o/report.json"),
        "junit.xml": store.upload_url("o/junit.xml"),
        "coverage.json": store.upload_url("o/coverage.json"),
    }
    proc, summary = _run(tmp_path, {"source.tar.gz": store.download_url("src.tar.gz")}, outputs)
    assert proc.returncode == 0, proc.stderr
    assert "command saw 10 bytes; transfer env visible: False" in proc.stdout
    assert store.get_bytes("o/junit.xml") == b"9876543210"
    assert store.get_bytes("o/report.json") == b'{"ok": true}'
    assert not store.exists("o/coverage.json")  # not produced, so not delivered
    assert summary["delivered"] == ["junit.xml", "report.json"]
    assert summary["exit_code"] == 0 and summary["error"] is None
    assert "command saw 10 bytes" in str(summary["tail"])


def test_the_commands_exit_code_is_kept_and_outputs_still_delivered(tmp_path: Path, store: S3Store) -> None:
    store.put_bytes("src.tar.gz", b"abc")
    outputs = {"report.json": store.upload_url("o/report.json")}
    proc, summary = _run(tmp_path, {"source.tar.gz": store.download_url("src.tar.gz")}, outputs, exit_code=7)
    assert proc.returncode == 7
    assert summary["delivered"] == ["report.json"] and store.exists("o/report.json")


def test_an_unreadable_input_stops_before_the_command_runs(tmp_path: Path, store: S3Store) -> None:
    missing = store.download_url("never-written.tar.gz")  # a valid signature for an absent object: 404
    proc, summary = _run(tmp_path, {"source.tar.gz": missing}, {"report.json": store.upload_url("o/report.json")})
    assert proc.returncode == 125
    assert "fetching source.tar.gz: HTTP 404" in str(summary["error"])
    assert "command saw" not in proc.stdout
    assert not store.exists("o/report.json")
    assert not (tmp_path / "ws" / "in" / "source.tar.gz").exists()


def test_a_lost_upload_turns_success_into_a_transfer_error(tmp_path: Path, store: S3Store, s3_server: S3Server) -> None:
    store.put_bytes("src.tar.gz", b"abc")
    forged = S3Store("no-such-bucket-x1", "t", s3_server.settings()).upload_url("o/report.json")  # 404
    proc, summary = _run(tmp_path, {"source.tar.gz": store.download_url("src.tar.gz")}, {"report.json": forged})
    assert proc.returncode == 125
    assert "uploading report.json: HTTP 404" in str(summary["error"])
    assert summary["delivered"] == []


def test_the_termination_message_fits_the_kubelet_limit(tmp_path: Path) -> None:
    from collections import deque

    sys.path.insert(0, str(RUNNER))
    try:
        from mendflow_runner.transfer import TERMINATION_LIMIT, summary
    finally:
        sys.path.remove(str(RUNNER))
    tail = deque(['é"\\ line with escapes\n' * 40] * 60)
    text = summary(1, ["report.json"], None, tail)
    assert len(text.encode()) <= TERMINATION_LIMIT
    assert json.loads(text)["tail"].endswith("escapes\n")
