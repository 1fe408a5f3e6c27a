"""The ASGI app: ``POST /hooks/{provider}`` and ``GET /healthz``.

Order matters: size limit and deadline while reading, signature before parsing, nesting depth before
``json.loads``, filters before the delivery is recorded, and the delivery (its id *and* its signed body, so a
replay under a new id is caught too) is recorded before the event is sent (released again if sending fails).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from fnmatch import fnmatchcase

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mendflow.errors import MendflowError
from mendflow.webhook.config import SECRET_FIELDS, WebhookSettings
from mendflow.webhook.dedup import DeliveryStore
from mendflow.webhook.emit import Emitter, post_event
from mendflow.webhook.errors import BodyTimeoutError, EmitError, PayloadTooLargeError, ProviderDisabledError
from mendflow.webhook.push import PARSERS, PushEvent, decode_json, delivery_id, event_kind
from mendflow.webhook.verify import VERIFIERS

log = logging.getLogger("mendflow.webhook")

# URL segment → provider; Forgejo speaks Gitea's protocol.
ROUTES = {"github": "github", "gitlab": "gitlab", "gitea": "gitea", "forgejo": "gitea", "git": "git"}


async def read_body(request: Request, limit: int, timeout_sec: float) -> bytes:
    """The body, 413 past ``limit`` bytes, 408 when it has not all arrived within ``timeout_sec``."""
    try:
        async with asyncio.timeout(timeout_sec):
            return await read_limited(request, limit)
    except TimeoutError as exc:
        raise BodyTimeoutError(
            f"the body did not arrive within {timeout_sec:g} s", hint="send the whole body at once"
        ) from exc


async def read_limited(request: Request, limit: int) -> bytes:
    """The body, or 413 as soon as more than ``limit`` bytes have arrived (never buffering the rest)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(f"body of {declared} bytes exceeds {limit}", hint="raise max_body_bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLargeError(f"body exceeds {limit} bytes", hint="raise max_body_bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def body_key(provider: str, body: bytes) -> str:
    """The signed body's identity: a replay under a new delivery id carries the same bytes and signature."""
    return f"{provider}:body:{hashlib.sha256(body).hexdigest()}"


def ignore_reason(push: PushEvent, settings: WebhookSettings) -> str | None:
    """Why a verified push starts nothing, or None to accept it."""
    if push.deleted:
        return "branch deleted"
    if push.branch is None:
        return f"{push.ref} is not a branch"
    if not any(fnmatchcase(push.repo_name, glob) for glob in settings.allowed_repos):
        return f"repo {push.repo_name} not in allowed_repos"
    if not any(fnmatchcase(push.branch, glob) for glob in settings.allowed_branches):
        return f"branch {push.branch} not in allowed_branches"
    return None


def _secret(settings: WebhookSettings, provider: str) -> str:
    secret = settings.secret_for(provider)
    if secret is None:
        raise ProviderDisabledError(
            f"{provider} deliveries are not enabled",
            hint=f"set MENDFLOW_WEBHOOK_{SECRET_FIELDS[provider].upper()}",
        )
    return secret


def _reply(code: int, **body: str) -> JSONResponse:
    return JSONResponse(body, status_code=code)


def create_app(
    settings: WebhookSettings | None = None,
    emitter: Emitter = post_event,
    store: DeliveryStore | None = None,
) -> Starlette:
    settings = settings or WebhookSettings()
    store = store or DeliveryStore(settings.dedup_db, retention_sec=settings.dedup_retention_days * 86400)

    async def receive(request: Request) -> Response:
        provider = ROUTES.get(request.path_params["provider"])
        if provider is None:
            return _reply(404, error=f"unknown provider {request.path_params['provider']!r}")
        secret = _secret(settings, provider)
        body = await read_body(request, settings.max_body_bytes, settings.body_timeout_sec)
        VERIFIERS[provider](request.headers, body, secret)
        kind = event_kind(provider, request.headers)
        if kind == "ping":
            return _reply(200, status="pong")
        if kind != "push":
            return _reply(202, status="ignored", reason=f"{kind} is not a push")
        push = PARSERS[provider](decode_json(body, settings.max_json_depth))
        if reason := ignore_reason(push, settings):
            log.info("ignored %s push to %s %s: %s", provider, push.repo_name, push.ref, reason)
            return _reply(202, status="ignored", reason=reason)
        key = f"{provider}:{delivery_id(provider, request.headers, body)}"
        if not await run_in_threadpool(store.claim, key, body_key(provider, body)):
            log.info("duplicate delivery %s ignored (its id or its signed body was seen)", key)
            return _reply(200, status="duplicate", delivery=key)
        try:
            event_id = await emitter(push, key)
        except EmitError:
            await run_in_threadpool(store.release, key, body_key(provider, body))
            raise
        log.info("push %s %s@%s accepted as event %s", key, push.repo_name, push.after[:12], event_id)
        return _reply(202, status="accepted", delivery=key, event_id=str(event_id))

    async def health(_: Request) -> Response:
        ok = await run_in_threadpool(store.healthy)
        return _reply(200 if ok else 503, status="ok" if ok else "delivery store unavailable")

    async def refused(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, MendflowError)
        status = getattr(exc, "status_code", 500)
        if status >= 500:
            log.error("delivery failed: %s", exc.one_line())
        else:
            log.warning("delivery refused (%s): %s", status, exc.one_line())
        response = _reply(status, error=exc.one_line())
        if isinstance(exc, PayloadTooLargeError):
            # The rest of the body is still on its way; closing is cheaper than reading it to throw it away.
            response.headers["Connection"] = "close"
        return response

    store.prune()
    return Starlette(
        routes=[
            Route("/healthz", health, methods=["GET"]),
            Route("/hooks/{provider}", receive, methods=["POST"]),
        ],
        exception_handlers={MendflowError: refused},
    )
