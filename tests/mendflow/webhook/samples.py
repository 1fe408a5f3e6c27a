"""Push deliveries as each provider sends them (trimmed to the fields mendflow reads, plus some noise)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

ZERO = "0" * 40


def sign(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github_push(
    after: str,
    *,
    repo: str = "acme/demo",
    clone_url: str = "https://example.invalid/acme/demo.git",
    ref: str = "refs/heads/main",
    before: str = "1" * 40,
) -> dict[str, Any]:
    return {
        "ref": ref,
        "before": before,
        "after": after,
        "deleted": after == ZERO,
        "repository": {"full_name": repo, "clone_url": clone_url, "private": False},
        "pusher": {"name": "alice", "email": "alice@example.invalid"},
        "commits": [],
    }


def gitea_push(
    after: str,
    *,
    repo: str = "acme/demo",
    clone_url: str = "https://git.invalid/acme/demo.git",
    ref: str = "refs/heads/main",
) -> dict[str, Any]:
    return {
        "ref": ref,
        "before": "1" * 40,
        "after": after,
        "repository": {"full_name": repo, "clone_url": clone_url},
        "pusher": {"login": "bob", "username": "bob"},
    }


def gitlab_push(
    after: str,
    *,
    repo: str = "acme/demo",
    clone_url: str = "https://gitlab.invalid/acme/demo.git",
    ref: str = "refs/heads/main",
) -> dict[str, Any]:
    return {
        "object_kind": "push",
        "ref": ref,
        "before": "1" * 40,
        "after": after,
        "user_username": "carol",
        "user_name": "Carol",
        "project": {"path_with_namespace": repo, "git_http_url": clone_url},
    }


def git_push(
    after: str, *, repo: str = "demo", clone_url: str = "/srv/git/demo.git", ref: str = "refs/heads/main"
) -> dict[str, Any]:
    return {
        "repo_name": repo,
        "clone_url": clone_url,
        "ref": ref,
        "before": "1" * 40,
        "after": after,
        "pusher": "dave",
        "delivery": f"d-{after}",
    }


def encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def github_headers(secret: str, body: bytes, delivery: str, event: str = "push") -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": "sha256=" + sign(secret, body),
        "Content-Type": "application/json",
    }


def gitlab_headers(token: str, delivery: str) -> dict[str, str]:
    return {
        "X-Gitlab-Event": "Push Hook",
        "X-Gitlab-Token": token,
        "X-Gitlab-Event-UUID": delivery,
        "Content-Type": "application/json",
    }


def gitea_headers(secret: str, body: bytes, delivery: str, flavour: str = "Gitea") -> dict[str, str]:
    return {
        f"X-{flavour}-Event": "push",
        f"X-{flavour}-Delivery": delivery,
        f"X-{flavour}-Signature": sign(secret, body),
        "Content-Type": "application/json",
    }


def git_headers(secret: str, body: bytes, delivery: str) -> dict[str, str]:
    return {
        "X-Mendflow-Signature": "sha256=" + sign(secret, body),
        "X-Mendflow-Delivery": delivery,
        "Content-Type": "application/json",
    }
