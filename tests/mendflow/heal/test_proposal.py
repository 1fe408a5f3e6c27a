"""Source-fix proposals (``mendflow/heal/proposal.py``): the real openai client against the scripted server."""

from __future__ import annotations

from mendflow.contracts import Assessment, ErrorCategory, FailureKind, TestFailure
from mendflow.heal.proposal import SYSTEM, propose_fix, source_paths
from mendflow.llm import LLMClient
from tests.fixtures.llm_server import LLMServer, llm_settings

CODE = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"}
FAILURE = TestFailure(node_id="tests/test_calc.py::test_add", kind=FailureKind.FAILED, exception="AssertionError",
                      message="assert 0 == 4")  # fmt: skip
ASSESSMENT = Assessment(category=ErrorCategory.ASSERTION, explained_by_change=False)


def answer(**payload: object) -> dict[str, object]:
    return {"reasoning": "add subtracts since the commit", "file_to_patch": "calc.py", **payload}


def test_only_changed_code_is_offered_never_tests() -> None:
    assert source_paths(["calc.py", "tests/test_calc.py", "conftest.py", "README.md"]) == ["calc.py"]


def test_the_fixed_code_comes_back_with_its_tokens(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(
        answer(update={"old_str": "    return a - b\n\n\ndef sub", "new_str": "    return a + b\n\n\ndef sub"})
    )

    proposed = propose_fix(LLMClient(llm_settings(scripted_llm)), FAILURE, ASSESSMENT, CODE, "diff", 3)

    assert proposed is not None and proposed.files == {"calc.py": CODE["calc.py"].replace("a - b", "a + b", 1)}
    assert proposed.tokens > 0 and scripted_llm.chat_requests()[0]["messages"][0]["content"] == SYSTEM


def test_a_non_unique_old_str_escalates_to_a_patch(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(answer(update={"old_str": "return a - b", "new_str": "return a + b"}))  # occurs twice
    patch = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    scripted_llm.reply(answer(patch=patch))

    proposed = propose_fix(LLMClient(llm_settings(scripted_llm)), FAILURE, ASSESSMENT, CODE, "diff", 3)

    assert proposed is not None and proposed.files["calc.py"].startswith("def add(a, b):\n    return a + b\n")
    assert "update" in scripted_llm.chat_requests()[1]["messages"][1]["content"]  # the failure fed back


def test_an_answer_for_a_file_not_shown_is_no_proposal(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(
        {"reasoning": "r", "file_to_patch": "tests/test_calc.py", "new_content": "def test_add(): pass\n"}
    )

    assert propose_fix(LLMClient(llm_settings(scripted_llm)), FAILURE, ASSESSMENT, CODE, "diff", 1) is None


def test_code_that_no_longer_parses_is_no_proposal(scripted_llm: LLMServer) -> None:
    scripted_llm.reply(answer(new_content="def add(a, b):\n    return a +\n"))

    assert propose_fix(LLMClient(llm_settings(scripted_llm)), FAILURE, ASSESSMENT, CODE, "diff", 1) is None
