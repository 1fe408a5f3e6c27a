"""A hostile client against the webhook: replays, nesting bombs and trickled requests, on a real uvicorn."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from mendflow.webhook.app import create_app
from mendflow.webhook.push import json_depth_exceeds
from mendflow.webhook.server import with_header_timeout
from tests.mendflow.webhook.samples import encode, github_headers, github_push
from tests.mendflow.webhook.test_app import SECRET, SHA, Recorder, serving, settings


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def client(tmp_path: Path, recorder: Recorder) -> Iterator[TestClient]:
    with TestClient(create_app(settings(tmp_path), emitter=recorder)) as test_client:
        yield test_client


@pytest.fixture
def trickle_server(tmp_path: Path, recorder: Recorder) -> Iterator[int]:
    """The app under a real uvicorn with the CLI's protocol and 1 s header and body deadlines."""
    app = create_app(settings(tmp_path, body_timeout_sec=1.0), emitter=recorder)
    with serving(app, http=with_header_timeout(1.0)) as port:
        yield port


def test_a_replay_under_a_new_delivery_id_starts_nothing(client: TestClient, recorder: Recorder) -> None:
    body = encode(github_push(SHA))
    first = client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "d-1"))
    replay = client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "d-2"))
    assert (first.json()["status"], replay.json()["status"], len(recorder.emitted)) == ("accepted", "duplicate", 1)


def test_a_new_push_is_not_mistaken_for_a_replay(client: TestClient, recorder: Recorder) -> None:
    for n, sha in enumerate(("b" * 40, "c" * 40)):
        body = encode(github_push(sha))
        client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, f"d-{n}"))
    assert len(recorder.emitted) == 2


def test_a_delivery_whose_event_failed_can_be_replayed(client: TestClient, recorder: Recorder) -> None:
    recorder.failures = 1
    body = encode(github_push(SHA))
    client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "d-1"))
    again = client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "d-1"))
    assert again.json()["status"] == "accepted"


def test_json_nested_past_the_limit_is_a_400(client: TestClient) -> None:
    body = b'{"a": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    response = client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "deep"))
    assert response.status_code == 400 and "deeper than 64" in response.json()["error"]


def test_brackets_inside_strings_are_not_nesting() -> None:
    assert not json_depth_exceeds(b'{"a": "' + b"[" * 100 + b'\\"' + b"{" * 100 + b'"}', 2)


def _status_or_closed(sock: socket.socket) -> bytes:
    try:
        return sock.recv(4096).split(b"\r\n", 1)[0]
    except (ConnectionResetError, TimeoutError):
        return b""


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b""
    except BlockingIOError:  # nothing to read: still open
        return False


def test_a_client_trickling_its_headers_is_cut_off(trickle_server: int) -> None:
    sock = socket.create_connection(("127.0.0.1", trickle_server), timeout=10)
    started = time.monotonic()
    with pytest.raises((BrokenPipeError, ConnectionResetError)):
        for byte in b"POST /hooks/github HTTP/1.1\r\nHost: t\r\n" + b"X-Slow: " + b"a" * 30:
            sock.send(bytes([byte]))
            time.sleep(0.2)
            if _closed_by_peer(sock):
                raise ConnectionResetError("closed by the server")
    assert time.monotonic() - started < 8  # the 1 s deadline, not the 16 s the trickle would take
    sock.close()


def test_a_client_trickling_its_body_gets_408(trickle_server: int) -> None:
    body = encode(github_push(SHA))
    headers = github_headers(SECRET, body, "slow-body")
    head = "POST /hooks/github HTTP/1.1\r\nHost: t\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock = socket.create_connection(("127.0.0.1", trickle_server), timeout=10)
    sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
    assert _status_or_closed(sock) == b"HTTP/1.1 408 Request Timeout"
    sock.close()
