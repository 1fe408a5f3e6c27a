"""The one way mendflow talks to an LLM: the real ``openai`` client pointed at any compatible endpoint.

Transport retries (429, 408/409, 5xx, connection errors) are openai's own, with its exponential back-off that
honours ``Retry-After``; what this module adds is JSON-mode answers validated against a pydantic model (one
corrective round trip on a bad answer), token accounting per stage and the per-run budget cap.
"""

from __future__ import annotations

import json
import logging
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from mendflow import blocks
from mendflow.errors import ConfigError, LLMError
from mendflow.llm.budget import TokenLedger, estimate_tokens
from mendflow.settings import LLMSettings, Settings

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
Message = dict[str, str]


class LLMClient:
    """Chat completions for one run; every call is charged to ``ledger`` under its stage name."""

    def __init__(self, settings: LLMSettings, ledger: TokenLedger | None = None) -> None:
        if not settings.enabled:
            raise ConfigError(
                "no LLM endpoint configured", hint="set MENDFLOW_LLM__BASE_URL (and MENDFLOW_LLM__API_KEY)"
            )
        self.settings = settings
        self.ledger = ledger or TokenLedger(settings.token_budget_per_run)
        import openai  # late: importing openai costs seconds, and offline runs never need it

        secret = (
            blocks.secret(settings.api_key_block, "MENDFLOW_LLM__API_KEY_BLOCK") if settings.api_key_block else None
        )
        secret = secret or settings.api_key
        key = secret.get_secret_value() if secret else "unused"  # local servers need none
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key,
            max_retries=settings.max_retries,
            timeout=settings.timeout_sec,
        )

    def complete_text(self, stage: str, messages: list[Message], *, temperature: float = 0.2) -> str:
        return self._chat(stage, messages, temperature=temperature, json_mode=False)

    def complete_json(
        self,
        stage: str,
        messages: list[Message],
        schema: type[M],
        *,
        attempts: int = 2,
        temperature: float = 0.2,
    ) -> M:
        """An answer validated against ``schema``; a malformed one is sent back once with the error."""
        convo = list(messages)
        problem = ""
        for _ in range(max(1, attempts)):
            raw = self._chat(stage, convo, temperature=temperature, json_mode=True)
            try:
                return schema.model_validate(json.loads(raw))
            except (json.JSONDecodeError, ValidationError) as exc:
                problem = _describe_invalid(exc)
                log.warning("LLM answer for %s is not a valid %s: %s", stage, schema.__name__, problem)
                convo += [
                    {"role": "assistant", "content": raw[:4000]},
                    {
                        "role": "user",
                        "content": f"That answer is invalid: {problem}. "
                        "Reply again with ONLY one JSON object matching the schema.",
                    },
                ]
        raise LLMError(
            f"the LLM gave no valid {schema.__name__} in {attempts} attempts for stage {stage!r}: {problem}",
            hint=f"check that model {self.settings.model!r} supports JSON mode, or run offline",
        )

    def _chat(self, stage: str, messages: list[Message], *, temperature: float, json_mode: bool) -> str:
        self.ledger.check(stage, estimate_tokens("".join(m["content"] for m in messages)))
        import openai

        kwargs: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        try:
            resp = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                **kwargs,
            )
        except openai.APIStatusError as exc:
            raise LLMError(
                f"LLM endpoint answered HTTP {exc.status_code} for stage {stage!r}: {_short(exc.message)}",
                hint=_status_hint(exc.status_code),
            ) from exc
        except openai.APIConnectionError as exc:  # includes timeouts
            raise LLMError(
                f"cannot reach the LLM endpoint {self.settings.base_url}: {exc}",
                hint="check MENDFLOW_LLM__BASE_URL and the network, or run offline",
            ) from exc
        content = (resp.choices[0].message.content or "") if resp.choices else ""
        used = resp.usage.total_tokens if resp.usage else estimate_tokens(str(messages) + content)
        self.ledger.add(stage, used)
        if not content.strip():
            raise LLMError(f"the LLM returned an empty answer for stage {stage!r}", hint="retry or run offline")
        return content


def _describe_invalid(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        return f"{where}: {err['msg']} ({exc.error_count()} error(s))"
    return f"not JSON ({exc})"


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return "check MENDFLOW_LLM__API_KEY"
    if status == 404:
        return "check MENDFLOW_LLM__BASE_URL (it usually ends in /v1) and MENDFLOW_LLM__MODEL"
    if status == 429:
        return "the endpoint is rate limiting even after retries; wait or lower the load"
    return "retry later or run offline (unset MENDFLOW_LLM__BASE_URL)"


def client_from_settings(settings: Settings, ledger: TokenLedger | None = None) -> LLMClient | None:
    """An LLM client when one is configured, else None (offline mode)."""
    return LLMClient(settings.llm, ledger) if settings.llm.enabled else None
