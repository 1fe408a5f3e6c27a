"""Signature checks per provider, all constant-time (``hmac.compare_digest``), all on the raw body bytes."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

from mendflow.webhook.errors import BadSignatureError, MissingHeaderError

Verifier = Callable[[Mapping[str, str], bytes, str], None]

GITHUB_SIGNATURE = "X-Hub-Signature-256"
GITLAB_TOKEN = "X-Gitlab-Token"
GITEA_SIGNATURES = ("X-Gitea-Signature", "X-Forgejo-Signature")
GIT_SIGNATURE = "X-Mendflow-Signature"


def hmac_sha256_hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _same(expected: str, received: str) -> bool:
    # Bytes on both sides: compare_digest refuses non-ASCII str, and a header can carry anything.
    return hmac.compare_digest(expected.encode(), received.strip().encode("utf-8", "replace"))


def _header(headers: Mapping[str, str], *names: str) -> tuple[str, str]:
    for name in names:
        value = headers.get(name) or headers.get(name.lower())
        if value:
            return name, value
    raise MissingHeaderError(
        f"missing {' or '.join(names)} header", hint="configure the webhook with a secret on the git host"
    )


def _check_hmac(body: bytes, secret: str, received: str, header: str, prefix: str = "") -> None:
    if prefix and not received.startswith(prefix):
        raise BadSignatureError(f"{header} does not start with {prefix!r}", hint="use SHA-256 signatures")
    if not _same(hmac_sha256_hex(secret, body), received[len(prefix) :].lower()):
        raise BadSignatureError(f"{header} does not match the body", hint="check the webhook secret")


def verify_github(headers: Mapping[str, str], body: bytes, secret: str) -> None:
    _, received = _header(headers, GITHUB_SIGNATURE)
    _check_hmac(body, secret, received, GITHUB_SIGNATURE, prefix="sha256=")


def verify_gitlab(headers: Mapping[str, str], body: bytes, secret: str) -> None:
    # GitLab does not sign the body: it echoes the configured secret token.
    _, received = _header(headers, GITLAB_TOKEN)
    if not _same(secret, received):
        raise BadSignatureError(f"{GITLAB_TOKEN} does not match", hint="check the webhook secret token")


def verify_gitea(headers: Mapping[str, str], body: bytes, secret: str) -> None:
    # Gitea and Forgejo send a bare hex HMAC-SHA256 (no "sha256=" prefix); Forgejo sends both headers.
    name, received = _header(headers, *GITEA_SIGNATURES)
    _check_hmac(body, secret, received, name)


def verify_git(headers: Mapping[str, str], body: bytes, secret: str) -> None:
    _, received = _header(headers, GIT_SIGNATURE)
    _check_hmac(body, secret, received, GIT_SIGNATURE, prefix="sha256=")


VERIFIERS: dict[str, Verifier] = {
    "github": verify_github,
    "gitlab": verify_gitlab,
    "gitea": verify_gitea,
    "git": verify_git,
}
