"""Each provider's push payload read into one ``PushEvent``; plus the event kind and delivery id headers."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mendflow.webhook.errors import MalformedPayloadError, MissingHeaderError

BRANCH_PREFIX = "refs/heads/"


@dataclass(frozen=True)
class PushEvent:
    """One ref update, whatever the provider; ``payload()`` is what the ``git.push`` event carries."""

    provider: str
    repo_name: str
    clone_url: str
    ref: str
    before: str
    after: str
    pusher: str

    @property
    def branch(self) -> str | None:
        return self.ref.removeprefix(BRANCH_PREFIX) if self.ref.startswith(BRANCH_PREFIX) else None

    @property
    def deleted(self) -> bool:
        return set(self.after) == {"0"}

    def payload(self) -> dict[str, str]:
        return {
            "repo": self.clone_url,
            "repo_name": self.repo_name,
            "ref": self.ref,
            "branch": self.branch or "",
            "before": self.before,
            "after": self.after,
            "pusher": self.pusher,
            "provider": self.provider,
        }


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_NESTING = re.compile(rb"[\[\]{}]")


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether ``body`` nests arrays/objects deeper than ``limit``, found without parsing (no recursion).

    Strings are blanked first (a bracket inside one is text); the scan stops as soon as the limit is passed.
    """
    depth = 0
    for bracket in _JSON_NESTING.finditer(_JSON_STRING.sub(b'""', body)):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        if depth > limit:
            return True
    return False


def decode_json(body: bytes, max_depth: int = 64) -> dict[str, Any]:
    if json_depth_exceeds(body, max_depth):
        raise MalformedPayloadError(
            f"body nests JSON deeper than {max_depth} levels", hint="send the push payload as the provider sends it"
        )
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedPayloadError(f"body is not JSON: {exc}", hint="send application/json") from exc
    if not isinstance(data, dict):
        raise MalformedPayloadError("body is not a JSON object", hint="send the push payload as an object")
    return data


def _field(data: Mapping[str, Any], dotted: str) -> str:
    value: Any = data
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if not isinstance(value, str) or not value:
        raise MalformedPayloadError(f"push payload lacks {dotted!r}", hint="send a push event")
    return value


def _first(data: Mapping[str, Any], *dotted: str) -> str:
    for path in dotted[:-1]:
        try:
            return _field(data, path)
        except MalformedPayloadError:
            continue
    return _field(data, dotted[-1])


def parse_github(data: Mapping[str, Any]) -> PushEvent:
    return _github_like("github", data, pusher=("pusher.name",))


def parse_gitea(data: Mapping[str, Any]) -> PushEvent:
    return _github_like("gitea", data, pusher=("pusher.login", "pusher.username", "pusher.name"))


def _github_like(provider: str, data: Mapping[str, Any], pusher: tuple[str, ...]) -> PushEvent:
    return PushEvent(
        provider=provider,
        repo_name=_field(data, "repository.full_name"),
        clone_url=_field(data, "repository.clone_url"),
        ref=_field(data, "ref"),
        before=_field(data, "before"),
        after=_field(data, "after"),
        pusher=_first(data, *pusher),
    )


def parse_gitlab(data: Mapping[str, Any]) -> PushEvent:
    return PushEvent(
        provider="gitlab",
        repo_name=_field(data, "project.path_with_namespace"),
        clone_url=_first(data, "project.git_http_url", "repository.git_http_url"),
        ref=_field(data, "ref"),
        before=_field(data, "before"),
        after=_field(data, "after"),
        pusher=_first(data, "user_username", "user_name"),
    )


def parse_git(data: Mapping[str, Any]) -> PushEvent:
    """The body ``scripts/post-receive`` sends: one ref update, flat."""
    return PushEvent(
        provider="git",
        repo_name=_field(data, "repo_name"),
        clone_url=_field(data, "clone_url"),
        ref=_field(data, "ref"),
        before=_field(data, "before"),
        after=_field(data, "after"),
        pusher=_field(data, "pusher"),
    )


PARSERS: dict[str, Callable[[Mapping[str, Any]], PushEvent]] = {
    "github": parse_github,
    "gitlab": parse_gitlab,
    "gitea": parse_gitea,
    "git": parse_git,
}

# Header naming the event type, and the value(s) meaning "push"; the plain git hook only ever sends pushes.
_EVENT_HEADERS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "github": (("X-GitHub-Event",), frozenset({"push"})),
    "gitlab": (("X-Gitlab-Event",), frozenset({"Push Hook"})),
    "gitea": (("X-Gitea-Event", "X-Forgejo-Event"), frozenset({"push"})),
}
_PING = {"github": "ping", "gitea": "ping"}

# Headers carrying a delivery id that stays the same when the provider redelivers.
_DELIVERY_HEADERS: dict[str, tuple[str, ...]] = {
    "github": ("X-GitHub-Delivery",),
    "gitlab": ("Idempotency-Key", "X-Gitlab-Event-UUID"),
    "gitea": ("X-Gitea-Delivery", "X-Forgejo-Delivery"),
    "git": ("X-Mendflow-Delivery",),
}


def event_kind(provider: str, headers: Mapping[str, str]) -> str:
    """'push', 'ping', or the provider's own name for anything else (which is ignored)."""
    if provider not in _EVENT_HEADERS:
        return "push"
    names, push_values = _EVENT_HEADERS[provider]
    value = next((headers[name] for name in names if headers.get(name)), None)
    if value is None:
        raise MissingHeaderError(f"missing {' or '.join(names)} header", hint="is this a webhook delivery?")
    if value in push_values:
        return "push"
    return "ping" if value == _PING.get(provider) else value


def delivery_id(provider: str, headers: Mapping[str, str], body: bytes) -> str:
    """The provider's delivery id; without one, the body's hash (an identical body is the same delivery)."""
    for name in _DELIVERY_HEADERS[provider]:
        if value := headers.get(name):
            return value.strip()
    return "sha256:" + hashlib.sha256(body).hexdigest()
