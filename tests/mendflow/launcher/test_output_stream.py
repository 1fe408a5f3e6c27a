"""A job's output reaches the caller's ``on_output`` while the job runs, line by line, bounded, and a callback
that raises never breaks the job's handling.

Local: real sandboxed processes. Kubernetes: kwok fakes the kubelet and serves no container logs (the API
server's pods/log answers 404 for its pods), so the real launcher is run against kwok for the wiring, and the
log follower streams a real chunked HTTP response through the real Kubernetes client from a loopback server
answering the pods/log endpoint.
"""

from __future__ import annotations

import http.server
import logging
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k

from mendflow import progress
from mendflow.launcher.base import MAX_LINE_BYTES, JobSpec, JobState, OutputLines
from mendflow.launcher.k8s_logs import LogFollower
from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings
from tests.k8s import fixtures as k8s_fixtures
from tests.mendflow.launcher.test_kubernetes import KwokLauncher, _spec, settings  # noqa: F401 (fixture)

_session_fixture = k8s_fixtures.k8s_deployed_fixture  # the kwok test's `settings` fixture needs it

# The job prints its workspace, then waits for the file "go" there, which only the callback writes: the job
# can only end well if line 1 reached the callback while it was still running.
WAITS_FOR_GO = textwrap.dedent(
    """
    import os, sys, time
    print(os.getcwd(), flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists("go"):
        if time.monotonic() > deadline:
            sys.exit("no go: line 1 never reached the callback while the job ran")
        time.sleep(0.05)
    print("went", flush=True)
    """
)


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(Settings(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache"))


def python_job(code: str, **kw: Any) -> JobSpec:
    return JobSpec(name="stream", command=["python", "-c", code], timeout_sec=120, **kw)


# -- the line splitter both launchers use ------------------------------------------------------------------


def test_lines_split_across_chunks_are_joined_and_the_last_one_kept() -> None:
    lines: list[str] = []
    out = OutputLines(lines.append)
    for chunk in (b"one\r\ntw", b"o\nth\xc3", b"\xa9r", b"ee"):  # CRLF, a line and a character split in two
        out.feed(chunk)
    out.close()
    assert lines == ["one", "two", "théree"]


def test_an_endless_line_is_cut_to_the_limit_and_the_next_one_is_whole() -> None:
    lines: list[str] = []
    out = OutputLines(lines.append)
    for _ in range(100):
        out.feed(b"x" * 10_000)
    out.feed(b"\nnext\n")
    assert lines == ["x" * MAX_LINE_BYTES, "next"]


# -- local launcher ----------------------------------------------------------------------------------------


def test_local_job_lines_reach_the_callback_while_the_job_runs(launcher: LocalLauncher) -> None:
    lines: list[str] = []

    def on_output(line: str) -> None:
        lines.append(line)
        if len(lines) == 1:
            (Path(line) / "go").write_text("")

    result = launcher.run(python_job(WAITS_FOR_GO), on_output)
    assert result.state is JobState.SUCCEEDED, result.log_tail
    assert lines[1:] == ["went"]


def test_a_callback_that_raises_does_not_break_the_local_job(launcher: LocalLauncher, tmp_path: Path) -> None:
    code = "import json\nfor i in range(3): print(i, flush=True)\njson.dump({'ok': True}, open('out/r.json', 'w'))"
    seen: list[str] = []

    def crash(line: str) -> None:
        seen.append(line)
        raise RuntimeError("the display broke")

    result = launcher.run(python_job(code, outputs={"r.json": (tmp_path / "r.json").as_uri()}), crash)
    assert result.state is JobState.SUCCEEDED, result.log_tail
    assert seen == ["0", "1", "2"] and (tmp_path / "r.json").read_text() == '{"ok": true}'


def test_a_local_job_printing_an_endless_line_gets_it_cut(launcher: LocalLauncher) -> None:
    code = "import sys\nsys.stdout.write('y' * 1_000_000)\nprint()\nprint('after')"
    lines: list[str] = []
    result = launcher.run(python_job(code), lines.append)
    assert result.state is JobState.SUCCEEDED, result.log_tail
    assert lines == ["y" * MAX_LINE_BYTES, "after"]


def test_local_job_lines_reach_progress_listeners_under_the_jobs_stage(launcher: LocalLauncher) -> None:
    updates: list[progress.Update] = []
    with progress.listening(updates.append):
        result = launcher.run(python_job("print('\\x1b[2Jcleared')", labels={"stage": "B1"}))
    assert result.state is JobState.SUCCEEDED, result.log_tail
    assert updates == [progress.Update(progress.Kind.OUTPUT, "B1", detail="[2Jcleared")]  # no escape sequence


# -- Kubernetes --------------------------------------------------------------------------------------------


@dataclass
class LogServer:
    """Answers GET .../pods/<pod>/log with a chunked stream: a first line, then, once ``go`` is set (or after
    30 s), ``rest``; records whether ``go`` came while the stream was still open."""

    first: bytes
    rest: bytes
    go: threading.Event = field(default_factory=threading.Event)
    went_in_time: bool = False
    paths: list[str] = field(default_factory=list)


def _handler(server: LogServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            server.paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunk(server.first)
            server.went_in_time = server.go.wait(30)
            self._chunk(server.rest)
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def log_server() -> Iterator[tuple[LogServer, k.ApiClient]]:
    server = LogServer(first=b"step 1 of 2\n", rest=b"step 2 of 2\n" + b"z" * 50_000 + b"\nlast words")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    api = k.ApiClient(k.Configuration(host=f"http://127.0.0.1:{httpd.server_address[1]}"))
    yield server, api
    api.close()
    httpd.shutdown()


def test_pod_log_lines_reach_the_callback_while_the_stream_is_open(log_server: tuple[LogServer, k.ApiClient]) -> None:
    server, api = log_server
    lines: list[str] = []

    def on_output(line: str) -> None:
        lines.append(line)
        server.go.set()

    follower = LogFollower(api, "mendflow-jobs", logging.getLogger("test"), "job", on_output)
    follower.start("stage-pod")
    assert follower.thread is not None
    follower.thread.join(60)
    assert server.paths[0].startswith("/api/v1/namespaces/mendflow-jobs/pods/stage-pod/log?")
    assert server.went_in_time and follower.error is None
    assert lines == ["step 1 of 2", "step 2 of 2", "z" * MAX_LINE_BYTES, "last words"]


def test_a_callback_that_raises_does_not_stop_the_pod_log(log_server: tuple[LogServer, k.ApiClient]) -> None:
    server, api = log_server
    server.go.set()

    def crash(line: str) -> None:
        raise RuntimeError("the display broke")

    follower = LogFollower(api, "mendflow-jobs", logging.getLogger("test"), "job", crash)
    follower.start("stage-pod")
    assert follower.thread is not None
    follower.thread.join(60)
    assert follower.error is None and follower.finish().splitlines()[-1] == "last words"


@pytest.mark.slow
def test_kubernetes_launcher_runs_a_job_with_an_output_callback(settings: Settings) -> None:  # noqa: F811
    # kwok's pods have no log to stream: this proves the callback is taken and a missing log harms nothing.
    result = KwokLauncher(settings).run(_spec(), print)
    assert (result.state, result.exit_code) == (JobState.SUCCEEDED, 0), result.reason
