"""The LLM half of the tri-modal healer (seed 004): one prompt, one ``HealEdit`` back, validated by its contract.

The prompt gives the error, the analyzer's reading, what the commit changed and the test file(s) with line
numbers, and asks for one payload of the method the learning engine chose (``update``, ``patch`` or
``new_content``). The answer is untrusted data: ``LLMClient.complete_json`` validates it against ``HealEdit``
(exactly one payload, unknown keys refused, one corrective round trip), and the caller applies it only through
``mendflow.edits`` and the no-weakening gate. An answer of another method than asked is accepted: its
``method`` says what it really is. ``feedback`` is how the previous attempt failed, so a retry does not repeat it.
"""

from __future__ import annotations

from mendflow.contracts import Assessment, HealEdit, HealMethod, TestFailure
from mendflow.edits import numbered
from mendflow.errors import HealError
from mendflow.llm import LLMClient

STAGE = "heal"

SYSTEM = """You are Test-Healer v1. A commit changed a Python repository and a test now fails. You repair the
TEST so that it follows the code as the commit changed it (a rename, a move, a new signature). Rules:
- Edit only one of the files you are shown; never the code under test.
- Never weaken a test: keep every test function and class, every assert, pytest.raises and self.assert* call,
  each as strict as before (no == turned into in/>=/truthiness, no broader exception types); add no skip, xfail,
  importorskip, early return, or try/except around assertions.
- Change an expected value only when the commit's change explains it; say so in "reasoning".
- Make the smallest change that repairs the failure.
Return ONE JSON object and nothing else, with the keys "reasoning" (one or two sentences), "file_to_patch" (the
file's path exactly as shown) and exactly ONE payload key: "update", "patch" or "new_content"."""

METHOD_GUIDE: dict[HealMethod, str] = {
    HealMethod.UPDATE: """Answer with an "update" payload (replace one string):
{"reasoning": "calc.add was renamed to calc.plus; the import follows it.",
 "file_to_patch": "tests/test_calc.py",
 "update": {"old_str": "from calc import add", "new_str": "from calc import plus"}}
"old_str" must occur EXACTLY ONCE in the file, character for character (indentation included, line numbers
excluded): include neighbouring lines when the text alone is not unique. Give no "patch" and no "new_content".""",
    HealMethod.PATCH: """Answer with a "patch" payload (a unified diff of that one file):
{"reasoning": "calc.add was renamed to calc.plus; the import and the call follow it.",
 "file_to_patch": "tests/test_calc.py",
 "patch": "--- a/tests/test_calc.py\\n+++ b/tests/test_calc.py\\n@@ -1,5 +1,5 @@\\n-from calc import add\\n+from calc \
import plus\\n \\n \\n def test_add():\\n-    assert add(2, 2) == 4\\n+    assert plus(2, 2) == 4\\n"}
Every context (' ') and removed ('-') line must equal the file's line exactly; the @@ counts must match the
hunk's lines. Give no "update" and no "new_content".""",
    HealMethod.REWRITE: """Answer with a "new_content" payload (the whole new file):
{"reasoning": "calc was split into calc.ops and calc.errors; the imports and calls follow it.",
 "file_to_patch": "tests/test_calc.py",
 "new_content": "from calc.ops import plus\\n\\n\\ndef test_add():\\n    assert plus(2, 2) == 4\\n"}
"new_content" is the complete file: keep every test and every assertion, changed only where the commit requires.
Give no "update" and no "patch".""",
}

USER = """FAILING TEST
{node_id} ({kind})

ERROR
{error}
at {location}{traceback}

ANALYSIS
{analysis}

WHAT THE COMMIT CHANGED
{change}

FILES (line numbers are for reading only: never copy them into old_str or a patch)
{files}
{feedback}
{guide}"""

FEEDBACK = """
THE PREVIOUS ATTEMPT FAILED, do not repeat it:
{feedback}
"""

_MAX_TRACEBACK = 3000
_MAX_FEEDBACK = 2000


def ask_for_edit(
    client: LLMClient,
    *,
    failure: TestFailure,
    assessment: Assessment,
    files: dict[str, str],
    change: str,
    method: HealMethod,
    feedback: str = "",
    system: str = SYSTEM,
) -> tuple[HealEdit, int]:
    """One repair of ``failure`` as a ``method`` payload, and the tokens the call used.

    Raises LLMError when no valid ``HealEdit`` came back, HealError when it edits a file it was not shown.
    """
    messages = build_messages(failure, assessment, files, change, method, feedback, system)
    spent = client.ledger.spent
    edit = client.complete_json(STAGE, messages, HealEdit)
    tokens = client.ledger.spent - spent
    if edit.file_to_patch not in files:
        shown = ", ".join(sorted(files))
        raise HealError(f"the LLM's answer edits {edit.file_to_patch!r}, a file it was not shown ({shown})")
    return edit, tokens


def build_messages(
    failure: TestFailure,
    assessment: Assessment,
    files: dict[str, str],
    change: str,
    method: HealMethod,
    feedback: str = "",
    system: str = SYSTEM,
) -> list[dict[str, str]]:
    """The system and user messages of one heal request (no I/O); ``system`` says what may be edited."""
    error = f"{failure.exception}: {failure.message}" if failure.exception else failure.message
    user = USER.format(
        node_id=failure.node_id,
        kind=failure.kind.value,
        error=error or "(no message)",
        location=failure.location or "(unknown)",
        traceback=f"\n{_tail(failure.traceback.strip(), _MAX_TRACEBACK)}" if failure.traceback.strip() else "",
        analysis=_analysis(assessment),
        change=change.strip() or assessment.change or "(not known: infer it from the error)",
        files="\n".join(numbered(path, text) for path, text in files.items()),
        feedback=FEEDBACK.format(feedback=_tail(feedback.strip(), _MAX_FEEDBACK)) if feedback.strip() else "",
        guide=METHOD_GUIDE[method],
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _analysis(a: Assessment) -> str:
    lines = [
        f"category: {a.category.value}; scope: {a.scope.value}; lines to change: {a.lines_to_change}",
        f"places: {', '.join(a.locations) or '(not located)'}",
        f"explained by the commit's change: {'yes' if a.explained_by_change else 'not established'}",
    ]
    return "\n".join(lines)


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]
