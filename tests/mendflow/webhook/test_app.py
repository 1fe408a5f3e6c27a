"""The ASGI app's answers, with the Prefect API replaced by a recorder (tests/deploy/ has the real one)."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.testclient import TestClient

from mendflow.webhook.app import create_app
from mendflow.webhook.config import WebhookSettings
from mendflow.webhook.errors import EmitError
from mendflow.webhook.push import PushEvent
from tests.fixtures.prefect import free_port
from tests.mendflow.webhook.samples import (
    ZERO,
    encode,
    git_headers,
    git_push,
    gitea_headers,
    gitea_push,
    github_headers,
    github_push,
    gitlab_headers,
    gitlab_push,
)

SECRET = "s3cret"
SHA = "b" * 40


class Recorder:
    """Stands in for the Prefect API: records what would have been emitted; can be told to fail."""

    def __init__(self) -> None:
        self.emitted: list[tuple[PushEvent, str]] = []
        self.failures = 0

    async def __call__(self, push: PushEvent, key: str) -> uuid.UUID:
        if self.failures:
            self.failures -= 1
            raise EmitError("API down")
        self.emitted.append((push, key))
        return uuid.uuid4()


def settings(tmp_path: Path, **overrides: object) -> WebhookSettings:
    values: dict[str, object] = {
        "github_secret": SECRET,
        "gitlab_token": SECRET,
        "gitea_secret": SECRET,
        "git_secret": SECRET,
        "dedup_db": tmp_path / "deliveries.db",
        "max_body_bytes": 64 * 1024,
    }
    return WebhookSettings(**{**values, **overrides})  # type: ignore[arg-type]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def client(tmp_path: Path, recorder: Recorder) -> TestClient:
    app = create_app(settings(tmp_path, allowed_branches=["main", "release/*"]), emitter=recorder)
    return TestClient(app)


def post_github(client: TestClient, payload: dict[str, object], delivery: str = "d1", secret: str = SECRET):  # type: ignore[no-untyped-def]
    body = encode(payload)
    return client.post("/hooks/github", content=body, headers=github_headers(secret, body, delivery))


def test_signed_github_push_is_accepted_and_emitted(client: TestClient, recorder: Recorder) -> None:
    response = post_github(client, github_push(SHA))
    assert (response.status_code, response.json()["status"]) == (202, "accepted")
    assert [(p.after, key) for p, key in recorder.emitted] == [(SHA, "github:d1")]


def test_replayed_delivery_emits_nothing_more(client: TestClient, recorder: Recorder) -> None:
    post_github(client, github_push(SHA))
    response = post_github(client, github_push(SHA))
    assert (response.status_code, response.json()["status"]) == (200, "duplicate")
    assert len(recorder.emitted) == 1


def test_replay_after_restart_emits_nothing(tmp_path: Path, recorder: Recorder) -> None:
    post_github(TestClient(create_app(settings(tmp_path), emitter=recorder)), github_push(SHA))
    response = post_github(TestClient(create_app(settings(tmp_path), emitter=recorder)), github_push(SHA))
    assert response.json()["status"] == "duplicate"
    assert len(recorder.emitted) == 1


def test_bad_signature_is_401(client: TestClient, recorder: Recorder) -> None:
    response = post_github(client, github_push(SHA), secret="wrong")
    assert response.status_code == 401
    assert recorder.emitted == []


def test_missing_signature_is_400(client: TestClient, recorder: Recorder) -> None:
    body = encode(github_push(SHA))
    response = client.post("/hooks/github", content=body, headers={"X-GitHub-Event": "push"})
    assert response.status_code == 400
    assert "X-Hub-Signature-256" in response.json()["error"]


def test_provider_without_secret_is_404(tmp_path: Path, recorder: Recorder) -> None:
    client = TestClient(create_app(settings(tmp_path, gitlab_token=None), emitter=recorder))
    body = encode(gitlab_push(SHA))
    assert client.post("/hooks/gitlab", content=body, headers=gitlab_headers(SECRET, "g1")).status_code == 404


def test_unknown_provider_is_404(client: TestClient) -> None:
    assert client.post("/hooks/bitbucket", content=b"{}").status_code == 404


def test_branch_deletion_is_ignored_with_202(client: TestClient, recorder: Recorder) -> None:
    response = post_github(client, github_push(ZERO))
    assert (response.status_code, response.json()["reason"]) == (202, "branch deleted")
    assert recorder.emitted == []


def test_branch_outside_the_globs_is_ignored(client: TestClient, recorder: Recorder) -> None:
    response = post_github(client, github_push(SHA, ref="refs/heads/feature/x"))
    assert (response.status_code, response.json()["status"]) == (202, "ignored")
    assert recorder.emitted == []


def test_branch_matching_a_glob_is_accepted(client: TestClient, recorder: Recorder) -> None:
    assert post_github(client, github_push(SHA, ref="refs/heads/release/2.0")).json()["status"] == "accepted"


def test_repo_outside_the_globs_is_ignored(tmp_path: Path, recorder: Recorder) -> None:
    client = TestClient(create_app(settings(tmp_path, allowed_repos=["acme/*"]), emitter=recorder))
    response = post_github(client, github_push(SHA, repo="evil/demo"))
    assert (response.status_code, response.json()["status"]) == (202, "ignored")
    assert recorder.emitted == []


def test_tag_push_is_ignored(client: TestClient, recorder: Recorder) -> None:
    assert post_github(client, github_push(SHA, ref="refs/tags/v1")).json()["status"] == "ignored"


def test_ping_is_answered(client: TestClient) -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    headers = github_headers(SECRET, body, "p", event="ping")
    response = client.post("/hooks/github", content=body, headers=headers)
    assert (response.status_code, response.json()["status"]) == (200, "pong")


def test_signed_garbage_is_400(client: TestClient) -> None:
    body = b'{"hello": "world"}'
    response = client.post("/hooks/github", content=body, headers=github_headers(SECRET, body, "x"))
    assert response.status_code == 400


def test_declared_oversize_body_is_413(client: TestClient, recorder: Recorder) -> None:
    payload = github_push(SHA)
    payload["padding"] = "x" * 70_000
    assert post_github(client, payload).status_code == 413
    assert recorder.emitted == []


def test_failed_emit_is_503_and_a_redelivery_succeeds(client: TestClient, recorder: Recorder) -> None:
    recorder.failures = 1
    assert post_github(client, github_push(SHA)).status_code == 503
    assert post_github(client, github_push(SHA)).json()["status"] == "accepted"


def test_gitlab_token_is_accepted(client: TestClient, recorder: Recorder) -> None:
    body = encode(gitlab_push(SHA))
    response = client.post("/hooks/gitlab", content=body, headers=gitlab_headers(SECRET, "g"))
    assert response.json()["status"] == "accepted"
    assert recorder.emitted[0][1] == "gitlab:g"


@pytest.mark.parametrize(("path", "flavour"), [("gitea", "Gitea"), ("forgejo", "Forgejo")])
def test_gitea_and_forgejo_are_accepted(client: TestClient, path: str, flavour: str) -> None:
    body = encode(gitea_push(SHA))
    response = client.post(f"/hooks/{path}", content=body, headers=gitea_headers(SECRET, body, "e", flavour))
    assert response.json()["status"] == "accepted"


def test_git_hook_body_is_accepted(client: TestClient, recorder: Recorder) -> None:
    body = encode(git_push(SHA))
    response = client.post("/hooks/git", content=body, headers=git_headers(SECRET, body, "h"))
    assert response.json()["status"] == "accepted"
    assert recorder.emitted[0][0].clone_url == "/srv/git/demo.git"


def test_health(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


@contextlib.contextmanager
def serving(app: Any, **config: Any) -> Iterator[int]:
    """``app`` under a real uvicorn on a free port (a thread), for what only a socket can show."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2, **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def served(tmp_path: Path, recorder: Recorder) -> Iterator[int]:
    with serving(create_app(settings(tmp_path), emitter=recorder)) as port:
        yield port


def test_endless_chunked_body_gets_413_while_streaming(served: int) -> None:
    """A body without Content-Length that never ends: only a limit applied while reading can answer."""
    sock = socket.create_connection(("127.0.0.1", served), timeout=5)
    sock.sendall(
        b"POST /hooks/github HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
        b"X-GitHub-Event: push\r\nX-Hub-Signature-256: sha256=00\r\n\r\n"
    )
    frame = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    pending = b""  # a partly sent frame is finished before the next starts, so the chunking stays valid
    sock.setblocking(False)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        readable, writable, _ = select.select([sock], [sock], [], 0.2)
        if readable:
            break
        if writable:
            pending = pending or frame
            with contextlib.suppress(BlockingIOError, ConnectionError):
                pending = pending[sock.send(pending) :]
    sock.settimeout(5)
    status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    sock.close()
    assert status_line == b"HTTP/1.1 413 Request Entity Too Large"
