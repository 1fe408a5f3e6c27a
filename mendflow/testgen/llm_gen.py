"""Tests from the LLM (seed 000 §4's prompt): whole files or a unified diff, checked before use.

A candidate file that fails the gates is repaired with the healer's payloads (seed 004): one ``HealEdit`` per
ask, ``update`` first, applied with ``mendflow.edits``. ``repair_messages`` builds that ask.
"""

from __future__ import annotations

import json

import pygit2
import unidiff
from pydantic import BaseModel, ConfigDict, Field

from mendflow.contracts import DropReason, HealMethod, TestSpec
from mendflow.edits import numbered
from mendflow.testgen.context import BUILTIN_FIXTURES, RepoContext
from mendflow.testgen.layout import MAX_TOTAL_BYTES, Rejection, check_candidate

STAGE = "builder"


class FileDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    content: str


class TestDraft(BaseModel):
    """The LLM's answer: whole files, or one unified diff (new files or edits to test files)."""

    __test__ = False
    model_config = ConfigDict(extra="forbid")
    files: list[FileDraft] = Field(default_factory=list)
    diff: str = ""


def system_prompt(tests_dir: str, suggested: list[str]) -> str:
    return f"""You write pytest-style unit tests for a Python repository.
Write tests ONLY in files under {tests_dir}/ (preferably new files: {", ".join(suggested)});
never touch other files.
Rules: use pytest and plain asserts with a message; no sleeps longer than 50 ms; no network; deterministic;
each test's name says what it checks; no assertions that only restate module constants;
import the code the way the existing tests do; use only the fixtures listed (or define them in the test file).
Return ONE JSON object: {{"files": [{{"path": "{suggested[0] if suggested else tests_dir + "/test_x.py"}",
"content": "<whole file>"}}]}} or {{"diff": "<unified diff, paths a/... b/...>"}}."""


def user_prompt(spec: TestSpec, ctx: RepoContext) -> str:
    targets = {t.ref: t for t in spec.targets}
    parts = []
    for case in spec.cases:
        t = targets.get(case.target_path)
        where = f"{t.path}:{t.start_line}-{t.end_line}" if t else case.target_path
        steps = "; ".join(case.steps)
        parts.append(
            f"- GOAL: {case.goal} (name: {case.name}, kind: {case.kind.value}, steps: {steps})\n"
            f"  FUNCTION UNDER TEST: {where}"
        )
    code = "\n\n".join(f"# {ref}\n{text}" for ref, text in ctx.snippets.items())
    fixtures = sorted(set(ctx.fixtures) | set(BUILTIN_FIXTURES))
    missing = "\n".join(f"- {t.ref}: lines never run {t.missing_lines[:40]}" for t in spec.targets)
    markers = ", ".join(ctx.markers) or "(none declared)"
    return (
        f"CASES\n{chr(10).join(parts)}\n\nLINES TO COVER\n{missing}\n\nCODE\n{code}\n\n"
        f"FIXTURES AVAILABLE: {', '.join(fixtures)}\nMARKERS DECLARED: {markers}\n"
        f"STYLE GUIDE (an existing test file):\n{ctx.style_sample or '(no tests yet)'}\n\n"
        "Return the JSON object."
    )


def repair_prompt(feedback: str) -> str:
    return (
        f"The tests did not pass the checks (parse, ruff, collection, 5 runs, coverage gain):\n{feedback}\n\n"
        "Fix them. Return the whole corrected files in the same JSON format."
    )


REPAIR_SYSTEM = """You repair a generated pytest file that failed the checks (parse, ruff, pytest collection,
5 runs, then the repository's whole suite). The code under test is right as it is: make the TEST follow it. Rules:
- Edit only the file you are shown; never the code under test, never another file.
- Never test less: keep every test function, every assert and every pytest.raises; add no skip, xfail,
  importorskip, early return, or try/except around assertions.
- Make the smallest change that repairs the failure (a wrong expected value, a missing import, a bad call).
Return ONE JSON object and nothing else, with the keys "reasoning" (one or two sentences), "file_to_patch" (the
file's path exactly as shown) and exactly ONE payload key: "update", "patch" or "new_content"."""

METHOD_GUIDE: dict[HealMethod, str] = {
    HealMethod.UPDATE: """Answer with an "update" payload (replace one string):
{"reasoning": "half(4) is 2, not 3.", "file_to_patch": "tests/test_half_mendflow.py",
 "update": {"old_str": "    assert half(4) == 3", "new_str": "    assert half(4) == 2"}}
"old_str" must occur EXACTLY ONCE in the file, character for character (indentation included, line numbers
excluded): include neighbouring lines when the text alone is not unique. Give no "patch" and no "new_content".""",
    HealMethod.PATCH: """Answer with a "patch" payload (a unified diff of that one file):
{"reasoning": "half(4) is 2, not 3.", "file_to_patch": "tests/test_half_mendflow.py",
 "patch": "--- a/tests/test_half_mendflow.py\\n+++ b/tests/test_half_mendflow.py\\n@@ -4,2 +4,2 @@\\n def \
test_half_of_four():\\n-    assert half(4) == 3\\n+    assert half(4) == 2\\n"}
Every context (' ') and removed ('-') line must equal the file's line exactly; the @@ counts must match the
hunk's lines. Give no "update" and no "new_content".""",
    HealMethod.REWRITE: """Answer with a "new_content" payload (the whole new file):
{"reasoning": "half(4) is 2, not 3.", "file_to_patch": "tests/test_half_mendflow.py",
 "new_content": "from half import half\\n\\n\\ndef test_half_of_four():\\n    assert half(4) == 2\\n"}
"new_content" is the complete file: keep every test and every assertion. Give no "update" and no "patch".""",
}

REPAIR_USER = """WHAT THE CHECKS REPORTED FOR {path}
{feedback}

CODE UNDER TEST
{code}

FILE (line numbers are for reading only: never copy them into old_str or a patch)
{file}
{previous}
{guide}"""

PREVIOUS = """
THE PREVIOUS ATTEMPT FAILED, do not repeat it:
{previous}
"""

_MAX_FEEDBACK = 3000
_MAX_CODE = 6000


def repair_messages(
    path: str, text: str, feedback: str, code: str, method: HealMethod, previous: str = ""
) -> list[dict[str, str]]:
    """The system and user messages asking for one ``method`` payload repairing ``path`` (no I/O)."""
    user = REPAIR_USER.format(
        path=path,
        feedback=_tail(feedback.strip(), _MAX_FEEDBACK) or "(no detail: the file's tests failed)",
        code=_tail(code.strip(), _MAX_CODE) or "(not available)",
        file=numbered(path, text),
        previous=PREVIOUS.format(previous=_tail(previous.strip(), _MAX_FEEDBACK)) if previous.strip() else "",
        guide=METHOD_GUIDE[method],
    )
    return [{"role": "system", "content": REPAIR_SYSTEM}, {"role": "user", "content": user}]


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _apply_patch(patched: unidiff.PatchedFile, original: str) -> str:
    """Apply one file's hunks to ``original``, checking every context and removed line."""
    src = original.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    for hunk in patched:
        start = max(hunk.source_start - 1, 0)
        out += src[pos:start]
        pos = start
        for line in hunk:
            if line.is_context or line.is_removed:
                if pos >= len(src) or src[pos].rstrip("\r\n") != line.value.rstrip("\r\n"):
                    raise ValueError(f"hunk at line {hunk.source_start} does not match {patched.path}")
                if line.is_context:
                    out.append(src[pos])
                pos += 1
            elif line.is_added:
                out.append(line.value if line.value.endswith("\n") else line.value + "\n")
    return "".join(out + src[pos:])


def _read(tree: pygit2.Tree, path: str) -> str:
    try:
        obj = tree[path]
    except KeyError:
        return ""
    return obj.data.decode("utf-8", errors="replace") if isinstance(obj, pygit2.Blob) else ""


def materialise(draft: TestDraft, tree: pygit2.Tree, tests_dir: str) -> tuple[dict[str, str], list[Rejection]]:
    """The draft as path → full text, with every path and size checked; rejected files are reported."""
    proposed: dict[str, str] = {}
    rejected: list[Rejection] = []
    if len(json.dumps(draft.model_dump())) > MAX_TOTAL_BYTES:
        return {}, [Rejection("(answer)", DropReason.OVERSIZE, f"the answer exceeds {MAX_TOTAL_BYTES} bytes")]
    for f in draft.files:
        proposed[f.path] = f.content
    if draft.diff.strip():
        try:
            patch = unidiff.PatchSet(draft.diff)
        except unidiff.UnidiffParseError as exc:
            return {}, [Rejection("(diff)", DropReason.UNPARSABLE, f"not a unified diff: {exc}")]
        for patched in patch:
            path = patched.path
            if patched.is_removed_file:
                rejected.append(Rejection(path, DropReason.OUTSIDE_TESTS_DIR, "generated changes may not delete"))
                continue
            base = "" if patched.is_added_file else _read(tree, path)
            try:
                proposed[path] = _apply_patch(patched, base)
            except ValueError as exc:
                rejected.append(Rejection(path, DropReason.UNPARSABLE, str(exc)))
    files = {}
    for path, text in proposed.items():
        problem = check_candidate(path, text, tests_dir, tree)
        if problem:
            rejected.append(problem)
        else:
            files[path.strip()] = text
    return files, rejected
