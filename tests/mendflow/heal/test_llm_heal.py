"""The LLM healer (``mendflow/heal/llm_heal.py``): the real openai client against the scripted server."""

from __future__ import annotations

import pytest

from mendflow.contracts import Assessment, ErrorCategory, FailureKind, HealMethod, TestFailure, UpdateEdit
from mendflow.errors import HealError, LLMError
from mendflow.heal.llm_heal import ask_for_edit
from mendflow.llm import LLMClient, TokenLedger
from tests.fixtures.llm_server import LLMServer, llm_settings

PATH = "tests/test_calc.py"
TEXT = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
FAILURE = TestFailure(
    node_id=f"{PATH}::test_add",
    kind=FailureKind.ERROR,
    exception="ImportError",
    message="cannot import name 'add' from 'calc'",
    location=f"{PATH}:1",
)
ASSESSMENT = Assessment(category=ErrorCategory.IMPORT, locations=[f"{PATH}:1"], uniqueness=1.0, lines_to_change=1)
CHANGE = "calc.add renamed to calc.plus"
UPDATE = {
    "reasoning": "add was renamed to plus",
    "file_to_patch": PATH,
    "update": {"old_str": "from calc import add", "new_str": "from calc import plus"},
}


def ask(client: LLMClient, method: HealMethod = HealMethod.UPDATE, feedback: str = "") -> tuple:
    return ask_for_edit(
        client, failure=FAILURE, assessment=ASSESSMENT, files={PATH: TEXT}, change=CHANGE, method=method,
        feedback=feedback,
    )  # fmt: skip


def user_prompt(server: LLMServer, index: int = 0) -> str:
    return server.chat_requests()[index]["messages"][1]["content"]


def test_a_valid_update_payload_is_returned_with_its_tokens(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(UPDATE, usage={"prompt_tokens": 300, "completion_tokens": 40})
    ledger = TokenLedger(100_000)

    edit, tokens = ask(LLMClient(llm_settings(scripted_llm), ledger))

    assert edit.update == UpdateEdit(old_str="from calc import add", new_str="from calc import plus")
    assert edit.method is HealMethod.UPDATE
    assert tokens == 340 == ledger.by_stage["heal"]


def test_the_prompt_carries_error_change_numbered_file_and_requested_method(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(UPDATE)
    ask(LLMClient(llm_settings(scripted_llm)), HealMethod.PATCH)

    prompt = user_prompt(scripted_llm)
    assert "ImportError: cannot import name 'add' from 'calc'" in prompt
    assert CHANGE in prompt
    assert "   5 |     assert add(2, 2) == 4" in prompt
    assert 'Answer with a "patch" payload' in prompt
    assert scripted_llm.chat_requests()[0]["response_format"] == {"type": "json_object"}


def test_a_payload_with_two_methods_is_refused_then_corrected(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({**UPDATE, "new_content": TEXT.replace("add", "plus")})
    scripted_llm.reply(UPDATE)

    edit, _ = ask(LLMClient(llm_settings(scripted_llm)))

    assert edit.method is HealMethod.UPDATE and edit.new_content is None
    correction = scripted_llm.chat_requests()[1]["messages"][-1]["content"]
    assert "exactly one of update, patch, new_content" in correction


def test_twice_two_methods_is_an_llm_error(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({**UPDATE, "patch": "--- a/x\n"})
    scripted_llm.reply({**UPDATE, "patch": "--- a/x\n"})

    with pytest.raises(LLMError, match="no valid HealEdit"):
        ask(LLMClient(llm_settings(scripted_llm)))


def test_an_answer_of_another_method_is_accepted_with_its_real_method(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({"reasoning": "r", "file_to_patch": PATH, "new_content": TEXT.replace("add", "plus")})

    edit, _ = ask(LLMClient(llm_settings(scripted_llm)), HealMethod.UPDATE)

    assert edit.method is HealMethod.REWRITE


def test_an_answer_editing_a_file_not_shown_is_refused(scripted_llm: LLMServer) -> None:
    scripted_llm.reply({**UPDATE, "file_to_patch": "calc.py"})

    with pytest.raises(HealError, match=r"'calc\.py', a file it was not shown"):
        ask(LLMClient(llm_settings(scripted_llm)))


def test_feedback_of_the_previous_attempt_reaches_the_retry(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(UPDATE)
    scripted_llm.reply(UPDATE)
    client = LLMClient(llm_settings(scripted_llm))

    ask(client)
    ask(client, HealMethod.PATCH, feedback="llm:scripted-model update: old_str occurs 3 times in the file")

    assert "PREVIOUS ATTEMPT FAILED" not in user_prompt(scripted_llm, 0)
    assert "old_str occurs 3 times in the file" in user_prompt(scripted_llm, 1)
