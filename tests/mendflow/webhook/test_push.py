"""Each provider's push payload becomes the same PushEvent; event kinds and delivery ids come from headers."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from mendflow.webhook.errors import MalformedPayloadError, MissingHeaderError
from mendflow.webhook.push import (
    PushEvent,
    decode_json,
    delivery_id,
    event_kind,
    parse_git,
    parse_gitea,
    parse_github,
    parse_gitlab,
)
from tests.mendflow.webhook.samples import ZERO, git_push, gitea_push, github_push, gitlab_push

SHA = "a" * 40


def test_github_payload_fields() -> None:
    push = parse_github(github_push(SHA, clone_url="https://x.invalid/acme/demo.git"))
    assert push == PushEvent(
        "github", "acme/demo", "https://x.invalid/acme/demo.git", "refs/heads/main", "1" * 40, SHA, "alice"
    )


def test_gitlab_payload_fields() -> None:
    push = parse_gitlab(gitlab_push(SHA, repo="grp/sub/demo"))
    assert (push.repo_name, push.pusher, push.after) == ("grp/sub/demo", "carol", SHA)


def test_gitea_payload_uses_login_as_pusher() -> None:
    assert parse_gitea(gitea_push(SHA)).pusher == "bob"


def test_git_hook_payload_fields() -> None:
    push = parse_git(git_push(SHA, clone_url="/srv/git/demo.git"))
    assert (push.repo_name, push.clone_url, push.branch) == ("demo", "/srv/git/demo.git", "main")


def test_event_payload_carries_what_the_trigger_templates() -> None:
    payload = parse_github(github_push(SHA, ref="refs/heads/release/1.2")).payload()
    assert {k: payload[k] for k in ("repo", "after", "branch")} == {
        "repo": "https://example.invalid/acme/demo.git",
        "after": SHA,
        "branch": "release/1.2",
    }


def test_tag_ref_has_no_branch() -> None:
    assert parse_github(github_push(SHA, ref="refs/tags/v1")).branch is None


def test_all_zero_after_means_deleted() -> None:
    assert parse_github(github_push(ZERO)).deleted
    assert not parse_github(github_push(SHA)).deleted


def test_missing_field_is_malformed() -> None:
    payload = github_push(SHA)
    del payload["repository"]["clone_url"]
    with pytest.raises(MalformedPayloadError, match=r"repository\.clone_url"):
        parse_github(payload)


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b"\xff\xfe"])
def test_non_object_body_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayloadError):
        decode_json(body)


@pytest.mark.parametrize(
    ("provider", "headers", "kind"),
    [
        ("github", {"X-GitHub-Event": "push"}, "push"),
        ("github", {"X-GitHub-Event": "ping"}, "ping"),
        ("github", {"X-GitHub-Event": "issues"}, "issues"),
        ("gitlab", {"X-Gitlab-Event": "Push Hook"}, "push"),
        ("gitlab", {"X-Gitlab-Event": "Tag Push Hook"}, "Tag Push Hook"),
        ("gitea", {"X-Forgejo-Event": "push"}, "push"),
        ("git", {}, "push"),
    ],
)
def test_event_kind(provider: str, headers: dict[str, str], kind: str) -> None:
    assert event_kind(provider, Headers(headers)) == kind


def test_missing_event_header_is_refused() -> None:
    with pytest.raises(MissingHeaderError, match="X-GitHub-Event"):
        event_kind("github", Headers({}))


def test_delivery_id_from_header() -> None:
    assert delivery_id("github", Headers({"X-GitHub-Delivery": "abc"}), b"{}") == "abc"


def test_gitlab_idempotency_key_wins_over_event_uuid() -> None:
    headers = Headers({"Idempotency-Key": "stable", "X-Gitlab-Event-UUID": "per-attempt"})
    assert delivery_id("gitlab", headers, b"{}") == "stable"


def test_delivery_id_without_header_is_the_body_hash() -> None:
    first = delivery_id("gitlab", Headers({}), b'{"a": 1}')
    assert first == delivery_id("gitlab", Headers({}), b'{"a": 1}')
    assert first != delivery_id("gitlab", Headers({}), b'{"a": 2}')
