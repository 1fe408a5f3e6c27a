"""Source-fix proposals (seed 004's ``src/payment.py`` example): for a real regression, with an LLM, the smallest
fix to the code the commit changed, committed on a branch of its own for a human — never merged by mendflow.

Here the test is the authority: it asserts behaviour the commit broke. The LLM sees the failure, the commit's
diff and the source files the commit changed, and answers one of the seed's payloads for one of those files
(anything else is refused); the fixed text must still parse. Whether the fix works is decided by a CI job that
runs the regression tests on the proposal branch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mendflow.contracts import Assessment, HealMethod, TestFailure, is_test_file
from mendflow.edits import apply_edit
from mendflow.errors import HealError, LLMError
from mendflow.heal.llm_heal import ask_for_edit
from mendflow.llm.client import LLMClient

MAX_SOURCE_FILES = 3  # the prompt shows the changed code; a sweeping commit is beyond a proposal
MAX_DIFF_CHARS = 8000

SYSTEM = """You are Code-Fixer v1. A commit changed a Python repository and a test about behaviour now fails: the
test is right, and the commit broke the behaviour it checks. Propose the smallest fix to the CODE the commit
changed so that the test passes again, keeping everything else the commit meant to do. Rules:
- Edit only one of the files you are shown: code, never tests.
- Fix the logic; never special-case the test's inputs.
Return ONE JSON object and nothing else, with the keys "reasoning" (one or two sentences), "file_to_patch" (the
file's path exactly as shown) and exactly ONE payload key: "update", "patch" or "new_content"."""

_METHODS = (HealMethod.UPDATE, HealMethod.PATCH, HealMethod.REWRITE)


@dataclass(frozen=True)
class Proposed:
    files: dict[str, str]  # path → fixed text
    reasoning: str
    tokens: int


def source_paths(changed: list[str]) -> list[str]:
    """The code a proposal may edit: the commit's changed Python files that are not tests."""
    return [p for p in changed if p.endswith(".py") and not is_test_file(p)][:MAX_SOURCE_FILES]


def propose_fix(
    llm: LLMClient, failure: TestFailure, assessment: Assessment, texts: dict[str, str], diff: str, attempts: int
) -> Proposed | None:
    """Ask for a fix of one of ``texts`` (path → the code ``source_paths`` chose), escalating update → patch →
    rewrite while an answer fails to apply; None when none did."""
    spent, feedback = llm.ledger.spent, list[str]()
    for method in _METHODS[: max(attempts, 0)]:
        try:
            edit, _ = ask_for_edit(
                llm, failure=failure, assessment=assessment, files=texts, change=diff[:MAX_DIFF_CHARS],
                method=method, feedback="\n".join(feedback), system=SYSTEM,
            )  # fmt: skip
            fixed = apply_edit(edit, texts[edit.file_to_patch])
            ast.parse(fixed, filename=edit.file_to_patch)
        except (HealError, LLMError, SyntaxError) as exc:
            feedback.append(f"{method.value}: {exc}")
            continue
        return Proposed({edit.file_to_patch: fixed}, edit.reasoning, llm.ledger.spent - spent)
    return None
