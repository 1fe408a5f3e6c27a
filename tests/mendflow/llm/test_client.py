"""LLMClient against the scripted OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from mendflow.errors import BudgetExceededError, ConfigError, LLMError
from mendflow.llm import LLMClient, TokenLedger
from mendflow.settings import LLMSettings
from tests.fixtures.llm_server import LLMServer, llm_settings


class Answer(BaseModel):
    value: int


def test_json_answer_is_validated_into_the_model(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({"value": 7})
    client = LLMClient(llm_settings(scripted_llm))

    got = client.complete_json("plan", [{"role": "user", "content": "give 7"}], Answer)

    assert got == Answer(value=7)
    sent = scripted_llm.chat_requests()[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["model"] == scripted_llm.model


def test_invalid_json_is_sent_back_once_with_the_error(scripted_llm: LLMServer) -> None:
    scripted_llm.reply("not json at all")
    scripted_llm.reply({"value": 3})
    client = LLMClient(llm_settings(scripted_llm))

    got = client.complete_json("plan", [{"role": "user", "content": "x"}], Answer)

    assert got.value == 3
    retry = scripted_llm.chat_requests()[1]["messages"]
    assert retry[-1]["role"] == "user" and "invalid" in retry[-1]["content"]


def test_twice_invalid_json_is_a_clear_llm_error(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({"value": "seven"})
    scripted_llm.reply({"other": 1})
    client = LLMClient(llm_settings(scripted_llm))

    with pytest.raises(LLMError, match="no valid Answer in 2 attempts"):
        client.complete_json("plan", [{"role": "user", "content": "x"}], Answer)


def test_rate_limit_then_success_is_retried(scripted_llm: LLMServer) -> None:
    scripted_llm.fail(429, times=2)
    scripted_llm.reply({"value": 1})
    client = LLMClient(llm_settings(scripted_llm, max_retries=3))

    assert client.complete_json("plan", [{"role": "user", "content": "x"}], Answer).value == 1
    assert len(scripted_llm.chat_requests()) == 3


def test_server_errors_beyond_the_retries_raise_llm_error(scripted_llm: LLMServer) -> None:
    scripted_llm.fail(503, times=3)
    client = LLMClient(llm_settings(scripted_llm, max_retries=2))

    with pytest.raises(LLMError, match="HTTP 503"):
        client.complete_text("plan", [{"role": "user", "content": "x"}])
    assert len(scripted_llm.chat_requests()) == 3


def test_tokens_are_accounted_per_stage(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({"value": 1}, usage={"prompt_tokens": 30, "completion_tokens": 12})
    scripted_llm.reply("ok", usage={"prompt_tokens": 5, "completion_tokens": 5})
    ledger = TokenLedger(10_000)
    client = LLMClient(llm_settings(scripted_llm), ledger)

    client.complete_json("planner", [{"role": "user", "content": "x"}], Answer)
    client.complete_text("builder", [{"role": "user", "content": "y"}])

    assert ledger.by_stage == {"planner": 42, "builder": 10}


def test_budget_cap_raises_and_refuses_further_calls(scripted_llm: LLMServer) -> None:
    scripted_llm.reply("first", usage={"prompt_tokens": 80, "completion_tokens": 40})
    client = LLMClient(llm_settings(scripted_llm, token_budget_per_run=100))

    with pytest.raises(BudgetExceededError, match="exceeded"):
        client.complete_text("planner", [{"role": "user", "content": "x"}])
    with pytest.raises(BudgetExceededError, match="exhausted"):
        client.complete_text("builder", [{"role": "user", "content": "x"}])
    assert len(scripted_llm.chat_requests()) == 1  # the second call never left the process


def test_client_without_endpoint_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no LLM endpoint"):
        LLMClient(LLMSettings())
