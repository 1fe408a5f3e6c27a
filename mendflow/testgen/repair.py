"""The test builder's repair rounds (seed 001: at most two): each candidate file the gates failed is edited with
seed 004's payloads (``mendflow.edits``), the smallest method first.

An answer that cannot be applied or is refused is re-asked at once with the next method; an applied edit that
still fails the gates escalates in the next round. Every answer is untrusted: it may edit only the failing file
it was shown, and the result must stay under the tests dir's caps, parse, and pass the no-weakening gate
(``mendflow.gate``). A changed expected value is allowed: a generated test pins what the code does now.
"""

from __future__ import annotations

import pygit2

from mendflow.contracts import DropReason, HealEdit, HealMethod
from mendflow.edits import apply_edit, next_method, unified_diff
from mendflow.errors import HealError, LLMError
from mendflow.gate import weakening
from mendflow.llm import LLMClient
from mendflow.testgen import layout
from mendflow.testgen.job import JobOutcome
from mendflow.testgen.llm_gen import STAGE, repair_messages

ASKS_PER_ROUND = 6  # per repair round, over all failing files; a file's asks go up the method chain once
REPAIRABLE = {
    DropReason.UNPARSABLE,
    DropReason.LINT,
    DropReason.NOT_COLLECTED,
    DropReason.UNDEFINED_FIXTURE,
    DropReason.FAILS,
}  # what an edit can fix; a flaky test or one gaining no coverage is dropped as it is


def failing_files(outcome: JobOutcome, files: dict[str, str]) -> list[str]:
    """The candidate files with a test (or the whole file) the gates dropped for a reason an edit can fix."""
    paths = {d.node_id.split("::", 1)[0] for d in outcome.result.dropped if d.reason in REPAIRABLE}
    return sorted(p for p in paths if p in files)


class Repairer:
    """The repair rounds' edits: one ``HealEdit`` per ask, escalating update → patch → rewrite per file."""

    def __init__(self, llm: LLMClient, code: str, tests_dir: str, tree: pygit2.Tree, notes: list[str]) -> None:
        self.llm, self.code, self.tests_dir, self.tree, self.notes = llm, code, tests_dir, tree, notes
        self.method: dict[str, HealMethod] = {}  # path → the method to ask first in the next round
        self.applied: dict[str, str] = {}  # path → the edit applied last round, told to the next ask

    def repair(self, round_no: int, files: dict[str, str], failing: list[str], outcome: JobOutcome) -> dict[str, str]:
        """``files`` with the failing ones edited; a file whose every answer was unusable stays as it was."""
        repaired = dict(files)
        budget = ASKS_PER_ROUND
        for path in failing:
            if budget <= 0:
                self.notes.append(f"repair round {round_no}: {path}: not asked, the round's asks are spent")
                continue
            steps: list[str] = []
            try:
                after, asked = self._repair_file(path, files[path], file_feedback(outcome, path), budget, steps)
            except LLMError as exc:
                steps.append(f"LLM error, repairs stop: {exc.one_line()}")
                self.notes.append(f"repair round {round_no}: {path}: " + "; ".join(steps))
                break
            budget -= asked
            self.notes.append(f"repair round {round_no}: {path}: " + "; ".join(steps))
            if after is not None:
                repaired[path] = after
        return repaired

    def _repair_file(
        self, path: str, before: str, feedback: str, budget: int, steps: list[str]
    ) -> tuple[str | None, int]:
        method: HealMethod | None = self.method.get(path, HealMethod.UPDATE)
        previous = self.applied.pop(path, "")
        asked = 0
        while method is not None and asked < budget:
            asked += 1
            edit = self.llm.complete_json(
                STAGE, repair_messages(path, before, feedback, self.code, method, previous), HealEdit
            )
            try:
                after = self._check(edit, path, before)
            except HealError as exc:
                why = exc.one_line()
                steps.append(
                    why if why.startswith(f"{edit.method.value} refused") else f"{edit.method.value} refused: {why}"
                )
                previous = f"Your {edit.method.value} answer was refused: {why}\nIt was: {_shown(edit)}"
                method = next_method(edit.method)
                continue
            steps.append(f"{edit.method.value} applied")
            diff = unified_diff(path, before, after)
            self.applied[path] = f"The {edit.method.value} edit applied last round did not pass the checks:\n{diff}"
            self.method[path] = next_method(edit.method) or HealMethod.REWRITE
            return after, asked
        self.method[path] = method or HealMethod.REWRITE
        return None, asked

    def _check(self, edit: HealEdit, path: str, before: str) -> str:
        """The edited text, or HealError: another file, not applicable, outside the caps, unparsable, weaker."""
        if edit.file_to_patch != path:
            raise HealError(f"it edits {edit.file_to_patch!r}; only {path}, the failing candidate shown, may be edited")
        after = apply_edit(edit, before)
        problem = layout.check_candidate(path, after, self.tests_dir, self.tree)
        if problem:
            raise HealError(f"{problem.reason.value}: {problem.detail}")
        weaker = weakening(path, before, after)  # the healer's gate: a candidate is repaired, never made to test less
        if weaker:
            raise HealError("; ".join(weaker))
        return after


def file_feedback(outcome: JobOutcome, path: str) -> str:
    """What the gates said about ``path``: its feedback paragraphs, and its drops the feedback does not name."""
    blocks = [b for b in outcome.result.feedback.split("\n\n") if path in b]
    said = "\n\n".join(blocks)
    drops = [
        f"{d.node_id}: {d.reason.value}: {d.detail}"
        for d in outcome.result.dropped
        if d.node_id.split("::", 1)[0] == path and d.reason in REPAIRABLE and d.node_id not in said
    ]
    return "\n\n".join([*blocks, *drops])


def _shown(edit: HealEdit) -> str:
    text = edit.model_dump_json(exclude_none=True, exclude={"reasoning"})
    return text if len(text) <= 1500 else text[:1500] + "…"
