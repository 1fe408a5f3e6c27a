"""The heal bench's scripted model, over HTTP, on the healer's real prompts (``mendflow.heal.llm_heal``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bench.heal_model import Server
from mendflow.contracts import Assessment, ErrorCategory, FailureKind, HealEdit, HealMethod, Scope, TestFailure
from mendflow.edits import apply_edit
from mendflow.errors import HealError
from mendflow.heal.llm_heal import build_messages

PATH = "tests/test_calc.py"
TEST = """\
from calc import add


def test_add():
    assert add(2, 2) == 4
"""
RENAMED = TEST.replace("import add", "import plus").replace("assert add(", "assert plus(")
FAILURE = TestFailure(
    node_id=f"{PATH}::test_add", kind=FailureKind.ERROR, exception="ImportError",
    message="cannot import name 'add' from 'calc'",
)  # fmt: skip
RENAME = Assessment(category=ErrorCategory.IMPORT, scope=Scope.MULTI_LINE, change="calc.add renamed to calc.plus")


@pytest.fixture
def server() -> Iterator[Server]:
    with Server() as running:
        yield running


def post(server: Server, messages: list[dict[str, str]]) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"model": "m", "messages": messages}).encode()
    request = urllib.request.Request(
        f"{server.url}/chat/completions", body, {"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def edit_of(reply: dict[str, Any]) -> HealEdit:
    return HealEdit.model_validate_json(reply["choices"][0]["message"]["content"])


def apply_edit_error(edit: HealEdit) -> str:
    try:
        apply_edit(edit, TEST)
    except HealError as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize("method", [HealMethod.UPDATE, HealMethod.PATCH, HealMethod.REWRITE])
def test_a_rename_is_answered_in_the_payload_asked_for(server: Server, method: HealMethod) -> None:
    status, reply = post(server, build_messages(FAILURE, RENAME, {PATH: TEST}, "", method))

    edit = edit_of(reply)
    assert status == 200 and edit.method is method and edit.file_to_patch == PATH
    fixed = apply_edit(edit, TEST)
    # update replaces the first changed line only; patch and new_content the whole rename
    assert fixed == (TEST.replace("import add", "import plus") if method is HealMethod.UPDATE else RENAMED)


def test_a_change_it_cannot_read_gets_a_payload_that_changes_nothing(server: Server) -> None:
    signature = RENAME.model_copy(update={"change": "signature of calc.add changed: (a, b) → (b, a)"})
    status, reply = post(server, build_messages(FAILURE, signature, {PATH: TEST}, "", HealMethod.PATCH))

    assert status == 200 and apply_edit_error(edit_of(reply)) == "the patch edit of tests/test_calc.py changes nothing"


def test_any_other_prompt_is_refused_with_400(server: Server) -> None:
    status, reply = post(server, [{"role": "system", "content": "You are a poet."}, {"role": "user", "content": "hi"}])

    assert status == 400 and "does not answer" in reply["error"]["message"]


def test_usage_counts_a_token_per_four_characters(server: Server) -> None:
    messages = build_messages(FAILURE, RENAME, {PATH: TEST}, "", HealMethod.REWRITE)
    _, reply = post(server, messages)

    content = reply["choices"][0]["message"]["content"]
    prompt = sum(len(m["content"]) for m in messages) // 4
    assert reply["usage"] == {
        "prompt_tokens": prompt,
        "completion_tokens": len(content) // 4,
        "total_tokens": prompt + len(content) // 4,
    }
