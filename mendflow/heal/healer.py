"""The repairs of one healing round, made on the trusted side.

Healing edits text and never runs the repository's code: the failing commit's files are read from git, each
still-failing test is analysed, repaired (deterministic rules first, then the LLM's tri-modal payloads with
escalation), and every repair passes the no-weakening gate before it is kept. Whether a repair *worked* is
decided by the incremental re-run, a CI job; ``judge`` then records the outcome in the checklist and the
knowledge base, which is how the learning engine learns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

import pygit2

from mendflow.contracts import (
    Assessment,
    BuildReport,
    Checklist,
    ChecklistEntry,
    CheckStatus,
    FailureKind,
    HealAttempt,
    HealEdit,
    HealMethod,
    TestFailure,
)
from mendflow.edits import apply_edit, checked_path, diff_size, unified_diff
from mendflow.errors import HealError, LLMError
from mendflow.gate import changed_expectations, weakening
from mendflow.heal import checklist as checks
from mendflow.heal.analyzer import analyze, choose_by_decision_tree
from mendflow.heal.audit import AuditTrail
from mendflow.heal.changes import CommitChanges
from mendflow.heal.deterministic import deterministic_fixes
from mendflow.heal.knowledge import KnowledgeBase, escalation
from mendflow.heal.llm_heal import ask_for_edit
from mendflow.llm.client import LLMClient

MAX_FILE_BYTES = 256 * 1024
_METHOD_ORDER = [HealMethod.UPDATE, HealMethod.PATCH, HealMethod.REWRITE]
MakeEdits = Callable[[], tuple[list[HealEdit], int]]  # the edits of one candidate repair and their tokens


def test_path(node_id: str) -> str:
    return node_id.split("::", 1)[0]


@dataclass
class Files:
    """The failing commit's files as read from git, and the ones repaired so far (path → text)."""

    repo: pygit2.Repository
    commit: str
    may_touch: Callable[[str], bool]
    changed: dict[str, str] = field(default_factory=dict)

    def read(self, path: str) -> str:
        if path in self.changed:
            return self.changed[path]
        if not self.may_touch(checked_path(path)):
            raise HealError(f"{path} is not a file healing may change", hint="only test code is healed")
        tree = self.repo.revparse_single(self.commit).peel(pygit2.Commit).tree
        try:
            entry = tree[path]
        except KeyError as exc:
            raise HealError(f"{path} is not in commit {self.commit[:12]}") from exc
        if entry.filemode != pygit2.enums.FileMode.BLOB:  # a link, an executable or a directory
            raise HealError(f"{path} is not a regular file")
        blob = self.repo[entry.id].peel(pygit2.Blob)
        if blob.size > MAX_FILE_BYTES:
            raise HealError(f"{path} is larger than {MAX_FILE_BYTES // 1024} KiB")
        return blob.data.decode("utf-8", errors="replace")

    def write(self, path: str, text: str) -> None:
        self.changed[path] = text


@dataclass
class Repair:
    """A repair applied to the files, waiting for the re-run's verdict."""

    test_id: str
    attempt: HealAttempt
    needs_approval: list[str]


@dataclass
class Healer:
    files: Files
    changes: CommitChanges
    kb: KnowledgeBase
    audit: AuditTrail
    repo_id: str
    llm: LLMClient | None = None
    llm_attempts: int = 3  # per test, across rounds
    approvals: dict[str, list[str]] = field(default_factory=dict)  # path → why a human must say yes
    _feedback: list[str] = field(default_factory=list)

    def repair(self, checklist: Checklist, failures: dict[str, TestFailure]) -> list[Repair]:
        """Repairs for the still-failing tests, one per test file per round (the re-run says what is left)."""
        repairs: list[Repair] = []
        touched: set[str] = set()
        for test_id in checks.still_failing(checklist):
            path = test_path(test_id)
            if path in touched:
                continue
            failure = failures.get(test_id) or TestFailure(node_id=test_id, kind=FailureKind.FAILED)
            repair = self._repair_one(checklist, failure, path)
            if repair is not None:
                touched.add(path)
                repairs.append(repair)
        return repairs

    def _repair_one(self, checklist: Checklist, failure: TestFailure, path: str) -> Repair | None:
        entry = checks.entry(checklist, failure.node_id)
        try:
            text = self.files.read(path)
        except HealError as exc:
            checks.mark(checklist, failure.node_id, CheckStatus.GAVE_UP, error=exc.one_line())
            self.audit.record("refused", test=failure.node_id, reason=exc.one_line())
            return None
        assessment = entry.assessment = analyze(failure, self.changes, text)
        entry.category = assessment.category
        self.audit.record("analysis", test=failure.node_id, error=entry.last_error, **assessment.model_dump())
        if not assessment.explained_by_change:
            checks.mark(checklist, failure.node_id, CheckStatus.REGRESSION, error=entry.last_error)
            return None
        # What the LLM is told on each try: the error, then why each earlier repair failed.
        self._feedback = [f"{failure.exception}: {failure.message}", *(a.error for a in entry.history if a.error)]
        for healer, make in self._candidates(failure, assessment, path, text, entry.history):
            repair = self._try(entry, assessment, path, text, healer, make)
            if repair is not None:
                return repair
        return None

    def _candidates(
        self, failure: TestFailure, assessment: Assessment, path: str, text: str, history: list[HealAttempt]
    ) -> Iterator[tuple[str, MakeEdits]]:
        """Deterministic rules first (no tokens, smallest diff), then the LLM: the method the engine picks, then
        bigger ones, the biggest again with the feedback while the test's LLM attempts last."""
        tried = {a.healer for a in history}
        for fix in deterministic_fixes(failure, assessment, self.changes, path, text):
            healer = f"deterministic:{fix.rule}"
            if healer not in tried:
                yield healer, partial(_given, fix.edits)
        if self.llm is None:
            return
        healer = f"llm:{self.llm.settings.model}"
        asked = [a.method for a in history if a.healer == healer]
        if asked:
            chain = [*escalation(asked[-1])] or [asked[-1]]
        else:
            first = self.kb.choose_method(assessment, healer, prior=choose_by_decision_tree(assessment))
            chain = [first, *escalation(first)]
        for i in range(self.llm_attempts - len(asked)):
            yield healer, partial(self._ask, failure, assessment, path, text, chain[min(i, len(chain) - 1)])

    def _ask(
        self, failure: TestFailure, assessment: Assessment, path: str, text: str, method: HealMethod
    ) -> tuple[list[HealEdit], int]:
        assert self.llm is not None
        edit, tokens = ask_for_edit(
            self.llm, failure=failure, assessment=assessment, files={path: text},
            change=assessment.change, method=method, feedback="\n".join(self._feedback),
        )  # fmt: skip
        if edit.file_to_patch != path:
            raise HealError(f"the answer edits {edit.file_to_patch}, not the failing test file {path}")
        return [edit], tokens

    def _try(
        self, entry: ChecklistEntry, assessment: Assessment, path: str, before: str, healer: str, make: MakeEdits
    ) -> Repair | None:
        started = time.monotonic()
        attempt = HealAttempt(
            repo=self.repo_id, commit_sha=self.files.commit, test_id=entry.test_id, category=assessment.category,
            scope=assessment.scope, healer=healer, method=HealMethod.UPDATE, success=False, at=datetime.now(UTC),
        )  # fmt: skip
        try:
            edits, attempt.tokens = make()
            attempt.method = max((e.method for e in edits), key=_METHOD_ORDER.index)
            after = _apply_all(edits, before)
        except (HealError, LLMError) as exc:
            self._failed(entry, attempt, started, exc.one_line())
            return None
        attempt.diff = unified_diff(path, before, after)
        attempt.diff_lines = diff_size(attempt.diff)
        attempt.gate = weakening(path, before, after)
        if attempt.gate:
            self._failed(entry, attempt, started, "no-weakening gate: " + "; ".join(attempt.gate))
            return None
        attempt.duration_sec = round(time.monotonic() - started, 3)
        self.files.write(path, after)
        approval = changed_expectations(path, before, after)
        if approval:
            self.approvals.setdefault(path, []).extend(approval)
        self.audit.record("repair", **attempt.model_dump(mode="json"), needs_approval=approval)
        return Repair(entry.test_id, attempt, approval)

    def _failed(self, entry: ChecklistEntry, attempt: HealAttempt, started: float, error: str) -> None:
        attempt.error = error
        attempt.duration_sec = round(time.monotonic() - started, 3)
        entry.history.append(attempt)
        self._feedback.append(f"{attempt.healer} {attempt.method.value}: {error}")
        self.kb.record(attempt)  # a payload that could not apply or was refused is a failed method already
        self.audit.record("attempt-failed", **attempt.model_dump(mode="json"))
        return None

    def judge(self, checklist: Checklist, repairs: list[Repair], rerun: BuildReport) -> None:
        """The re-run's verdict: a repaired test that passes is healed; the method's outcome is learned."""
        failed = set(rerun.failed_tests)
        details = {f.node_id: f for f in rerun.failures}
        for repair in repairs:
            repair.attempt.success = repair.test_id not in failed
            if not repair.attempt.success:
                repair.attempt.error = details[repair.test_id].message if repair.test_id in details else "still fails"
            self.kb.record(repair.attempt)
            checks.entry(checklist, repair.test_id).history.append(repair.attempt)
        for test_id in checks.still_failing(checklist):
            if test_id in failed:
                detail = details.get(test_id)
                error = f"{detail.exception}: {detail.message}" if detail else None
                checks.mark(checklist, test_id, CheckStatus.FAILED, error=error)
            elif test_id in rerun.selected or not rerun.selected:
                checks.mark(checklist, test_id, CheckStatus.HEALED)


def _given(edits: list[HealEdit]) -> tuple[list[HealEdit], int]:
    return edits, 0


def _apply_all(edits: list[HealEdit], text: str) -> str:
    for edit in edits:
        text = apply_edit(edit, text)
    return text
