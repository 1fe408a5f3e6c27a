"""Signature checks per provider: the right secret passes, anything else is refused with the right error."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from mendflow.webhook.errors import BadSignatureError, MissingHeaderError
from mendflow.webhook.verify import verify_git, verify_gitea, verify_github, verify_gitlab
from tests.mendflow.webhook.samples import sign

SECRET = "correct horse"
BODY = b'{"ref": "refs/heads/main"}'


def h(**items: str) -> Headers:
    return Headers({k.replace("_", "-"): v for k, v in items.items()})


def test_github_accepts_its_signature() -> None:
    verify_github(h(X_Hub_Signature_256="sha256=" + sign(SECRET, BODY)), BODY, SECRET)


def test_github_header_names_are_case_insensitive() -> None:
    verify_github(Headers({"x-hub-signature-256": "sha256=" + sign(SECRET, BODY)}), BODY, SECRET)


def test_github_refuses_another_secret() -> None:
    with pytest.raises(BadSignatureError):
        verify_github(h(X_Hub_Signature_256="sha256=" + sign("other", BODY)), BODY, SECRET)


def test_github_refuses_a_changed_body() -> None:
    with pytest.raises(BadSignatureError):
        verify_github(h(X_Hub_Signature_256="sha256=" + sign(SECRET, BODY)), BODY + b" ", SECRET)


def test_github_refuses_a_signature_without_sha256_prefix() -> None:
    with pytest.raises(BadSignatureError, match="sha256="):
        verify_github(h(X_Hub_Signature_256=sign(SECRET, BODY)), BODY, SECRET)


def test_github_refuses_the_sha1_header_alone() -> None:
    with pytest.raises(MissingHeaderError, match="X-Hub-Signature-256"):
        verify_github(h(X_Hub_Signature="sha1=abc"), BODY, SECRET)


def test_non_ascii_signature_is_refused_not_crashed() -> None:
    with pytest.raises(BadSignatureError):
        verify_github(h(X_Hub_Signature_256="sha256=é" * 3), BODY, SECRET)


def test_gitlab_accepts_its_token() -> None:
    verify_gitlab(h(X_Gitlab_Token=SECRET), BODY, SECRET)


def test_gitlab_refuses_a_wrong_token() -> None:
    with pytest.raises(BadSignatureError):
        verify_gitlab(h(X_Gitlab_Token=SECRET + "x"), BODY, SECRET)


def test_gitlab_refuses_a_missing_token() -> None:
    with pytest.raises(MissingHeaderError):
        verify_gitlab(h(X_Gitlab_Event="Push Hook"), BODY, SECRET)


@pytest.mark.parametrize("header", ["X-Gitea-Signature", "X-Forgejo-Signature"])
def test_gitea_and_forgejo_accept_a_bare_hex_hmac(header: str) -> None:
    verify_gitea(Headers({header: sign(SECRET, BODY)}), BODY, SECRET)


def test_gitea_refuses_another_secret() -> None:
    with pytest.raises(BadSignatureError):
        verify_gitea(h(X_Gitea_Signature=sign("other", BODY)), BODY, SECRET)


def test_gitea_refuses_a_missing_signature() -> None:
    with pytest.raises(MissingHeaderError, match="X-Gitea-Signature or X-Forgejo-Signature"):
        verify_gitea(h(X_Gitea_Event="push"), BODY, SECRET)


def test_git_hook_accepts_its_signature() -> None:
    verify_git(h(X_Mendflow_Signature="sha256=" + sign(SECRET, BODY)), BODY, SECRET)


def test_git_hook_refuses_a_changed_body() -> None:
    with pytest.raises(BadSignatureError):
        verify_git(h(X_Mendflow_Signature="sha256=" + sign(SECRET, BODY)), b"{}", SECRET)
