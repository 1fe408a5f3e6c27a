"""Uploads: a plain PUT per output with no headers a presigned URL did not sign, report.json last."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.images.mendflow_runner.helpers import RUNNER_DIR

sys.path.insert(0, str(RUNNER_DIR))
from mendflow_runner.proc import Log
from mendflow_runner.report import upload_all


@pytest.fixture
def server() -> Iterator[tuple[str, list[tuple[str, dict[str, str], bytes]]]]:
    received: list[tuple[str, dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, dict(self.headers), body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", received
    httpd.shutdown()


def test_uploads_put_each_file_report_last_without_extra_headers(
    tmp_path: Path, server: tuple[str, list[tuple[str, dict[str, str], bytes]]]
) -> None:
    base, received = server
    for name in ("report.json", "junit.xml"):
        (tmp_path / name).write_text(name)
    uploads = [("report.json", f"{base}/r?X-Amz-Signature=abc"), ("junit.xml", f"{base}/j?sig=1")]
    failed = upload_all(tmp_path, uploads, Log(tmp_path / "runner.log"))
    assert failed == []
    assert [(path, body) for path, _, body in received] == [
        ("/j?sig=1", b"junit.xml"),
        ("/r?X-Amz-Signature=abc", b"report.json"),
    ]
    assert {h.lower() for h in received[0][1]} == {"host", "content-length"}
    assert "X-Amz-Signature" not in (tmp_path / "runner.log").read_text()


def test_refused_upload_is_reported_as_failed(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{}")
    failed = upload_all(tmp_path, [("report.json", "http://127.0.0.1:9/nowhere")], Log(tmp_path / "runner.log"))
    assert failed == ["report.json"]
