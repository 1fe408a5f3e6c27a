"""End to end: a signed push to `mendflow webhook` becomes a `git.push` event, the deployment trigger turns it
into a flow run, a real process worker runs it from this checkout, and its artifacts land in Prefect.

Everything is real: `prefect server start` (SQLite), `prefect deploy` of prefect.yaml, `prefect worker start`,
`mendflow webhook`, git. Negative cases are checked after a later accepted push has produced its run, so
"no run" means "none by the time a later event had been turned into one", not "none after a fixed sleep".
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import FlowRun, StateType

from tests.deploy.conftest import (
    GIT_SECRET,
    GITHUB_SECRET,
    GITLAB_TOKEN,
    MAX_BODY,
    ROOT,
    Deployed,
    SourceRepo,
    Webhook,
    poll,
    run_for_commit,
    runs_of,
)
from tests.mendflow.webhook.samples import (
    ZERO,
    encode,
    github_headers,
    github_push,
    gitlab_headers,
    gitlab_push,
)

pytestmark = pytest.mark.slow

FINAL = {StateType.COMPLETED, StateType.FAILED, StateType.CRASHED, StateType.CANCELLED}


@dataclass
class Timed:
    run: FlowRun
    seconds_to_run_created: float
    seconds_to_finished: float


def wait_finished(deployed: Deployed, commit: str, created_by: float, finished_by: float) -> Timed:
    start = time.monotonic()
    run = poll(f"a flow run for {commit[:12]}", lambda: run_for_commit(deployed.target_id, commit), created_by)
    created = time.monotonic() - start

    def finished() -> FlowRun | None:
        with get_client(sync_client=True) as client:
            current = client.read_flow_run(run.id)
        return current if current.state and current.state.type in FINAL else None

    done = poll(f"flow run {run.name} to finish", finished, finished_by, every=2)
    return Timed(done, created, time.monotonic() - start)


def post(webhook: Webhook, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{webhook.url}{path}", content=body, headers=headers, timeout=30)


@dataclass
class GithubPush:
    commit: str
    body: bytes
    headers: dict[str, str]
    response: httpx.Response
    timed: Timed


@pytest.fixture(scope="module")
def github_run(deployed: Deployed, worker: Path, webhook: Webhook, source_repo: SourceRepo) -> GithubPush:
    commit = source_repo.commit("github push")
    body = encode(github_push(commit, repo="acme/calc", clone_url=str(source_repo.path)))
    headers = github_headers(GITHUB_SECRET, body, "gh-delivery-1")
    response = post(webhook, "/hooks/github", body, headers)
    assert response.status_code == 202, response.text
    timed = wait_finished(deployed, commit, created_by=90, finished_by=600)
    print(
        f"\ngithub push → run created in {timed.seconds_to_run_created:.1f}s, "
        f"finished in {timed.seconds_to_finished:.1f}s ({timed.run.state_name}); deploy {deployed.deploy_seconds:.1f}s"
    )
    return GithubPush(commit, body, headers, response, timed)


@dataclass
class Outcomes:
    """Answers to deliveries sent after the first accepted push, and the runs existing afterwards."""

    responses: dict[str, httpx.Response] = field(default_factory=dict)
    commits: dict[str, str] = field(default_factory=dict)
    runs: list[FlowRun] = field(default_factory=list)
    hook_stderr: str = ""


def oversize_status(webhook: Webhook) -> bytes:
    """Declare a body over the limit and send none of it: the answer must come before any body is read."""
    with socket.create_connection(("127.0.0.1", webhook.port), timeout=10) as sock:
        sock.sendall(
            b"POST /hooks/github HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"X-GitHub-Event: push\r\nX-Hub-Signature-256: sha256=00\r\n"
            + f"Content-Length: {MAX_BODY + 1}\r\n\r\n".encode()
        )
        return sock.recv(4096).split(b"\r\n", 1)[0]


def push_through_hook(source: SourceRepo, webhook: Webhook, bare: Path) -> str:
    subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(bare)], check=True)
    hook = bare / "hooks" / "post-receive"
    shutil.copy(ROOT / "scripts" / "post-receive", hook)
    hook.chmod(0o755)
    env = {**os.environ, "MENDFLOW_HOOK_URL": f"{webhook.url}/hooks/git", "MENDFLOW_HOOK_SECRET": GIT_SECRET}
    result = subprocess.run(
        ["git", "push", str(bare), "main"], cwd=source.path, env=env, capture_output=True, text=True, check=True
    )
    return result.stderr


@pytest.fixture(scope="module")
def outcomes(
    github_run: GithubPush, deployed: Deployed, webhook: Webhook, source_repo: SourceRepo, tmp_path_factory
) -> Outcomes:  # type: ignore[no-untyped-def]
    out = Outcomes()
    out.responses["replay"] = post(webhook, "/hooks/github", github_run.body, github_run.headers)

    def refused(name: str, ref: str = "refs/heads/main", secret: str = GITHUB_SECRET, drop: str = "") -> None:
        commit = out.commits[name] = f"{len(out.commits) + 1:x}".rjust(40, "e")
        body = encode(github_push(commit, repo="acme/calc", clone_url=str(source_repo.path), ref=ref))
        headers = {k: v for k, v in github_headers(secret, body, f"gh-{name}").items() if k != drop}
        out.responses[name] = post(webhook, "/hooks/github", body, headers)

    refused("bad_signature", secret="not-the-secret")
    refused("missing_signature", drop="X-Hub-Signature-256")
    refused("ignored_branch", ref="refs/heads/feature/x")
    deleted = encode(github_push(ZERO, repo="acme/calc", clone_url=str(source_repo.path)))
    out.responses["deleted"] = post(
        webhook, "/hooks/github", deleted, github_headers(GITHUB_SECRET, deleted, "gh-deleted")
    )
    out.responses["oversize_status_line"] = httpx.Response(200, content=oversize_status(webhook))

    # Accepted ones after the refused ones: once their runs exist, the refused ones had their chance.
    gitlab_commit = out.commits["gitlab"] = source_repo.commit("gitlab push")
    body = encode(gitlab_push(gitlab_commit, repo="acme/calc", clone_url=str(source_repo.path)))
    out.responses["gitlab"] = post(webhook, "/hooks/gitlab", body, gitlab_headers(GITLAB_TOKEN, "gl-1"))
    out.commits["hook"] = source_repo.commit("post-receive push")
    out.hook_stderr = push_through_hook(source_repo, webhook, tmp_path_factory.mktemp("bare") / "calc.git")
    for name in ("gitlab", "hook"):
        wait_finished(deployed, out.commits[name], created_by=90, finished_by=600)
    out.runs = runs_of(deployed.target_id)
    return out


def commits_run(outcomes: Outcomes) -> list[str]:
    return [run.parameters.get("commit") for run in outcomes.runs]


def test_signed_github_push_runs_the_deployment_to_completion(github_run: GithubPush) -> None:
    assert github_run.timed.run.state_type is StateType.COMPLETED


def test_run_parameters_come_from_the_event(github_run: GithubPush, source_repo: SourceRepo) -> None:
    params = github_run.timed.run.parameters
    assert (params["repo"], params["commit"], params["branch"]) == (str(source_repo.path), github_run.commit, "main")


def test_run_repo_id_is_the_pushed_repositorys_owner_and_name(github_run: GithubPush) -> None:
    """The clone URL is a local path (no owner in it): repo_id comes from the push, not from the URL."""
    assert github_run.timed.run.parameters["repo_id"] == "acme/calc"


def test_run_has_artifacts(github_run: GithubPush) -> None:
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[github_run.timed.run.id]))
        )
    assert artifacts, "the run published no artifacts"


def test_replayed_delivery_starts_no_second_run(outcomes: Outcomes, github_run: GithubPush) -> None:
    assert outcomes.responses["replay"].json()["status"] == "duplicate"
    assert commits_run(outcomes).count(github_run.commit) == 1


def test_bad_signature_is_401_and_starts_nothing(outcomes: Outcomes) -> None:
    assert outcomes.responses["bad_signature"].status_code == 401
    assert outcomes.commits["bad_signature"] not in commits_run(outcomes)


def test_missing_signature_header_is_400_and_starts_nothing(outcomes: Outcomes) -> None:
    assert outcomes.responses["missing_signature"].status_code == 400
    assert outcomes.commits["missing_signature"] not in commits_run(outcomes)


def test_oversize_body_is_413(outcomes: Outcomes) -> None:
    assert outcomes.responses["oversize_status_line"].content == b"HTTP/1.1 413 Request Entity Too Large"


def test_push_to_an_ignored_branch_is_202_and_starts_nothing(outcomes: Outcomes) -> None:
    assert outcomes.responses["ignored_branch"].status_code == 202
    assert outcomes.responses["ignored_branch"].json()["status"] == "ignored"
    assert outcomes.commits["ignored_branch"] not in commits_run(outcomes)


def test_branch_deletion_is_202_and_starts_nothing(outcomes: Outcomes) -> None:
    assert outcomes.responses["deleted"].status_code == 202
    assert ZERO not in commits_run(outcomes)


def test_gitlab_token_push_starts_a_run(outcomes: Outcomes) -> None:
    assert outcomes.responses["gitlab"].status_code == 202
    assert outcomes.commits["gitlab"] in commits_run(outcomes)


def test_post_receive_hook_push_starts_a_run(outcomes: Outcomes) -> None:
    assert "202" in outcomes.hook_stderr, outcomes.hook_stderr
    run = next(r for r in outcomes.runs if r.parameters.get("commit") == outcomes.commits["hook"])
    assert run.parameters["repo"].endswith("calc.git")
