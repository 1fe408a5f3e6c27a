"""Seed 004's smart checklist: every failing test's state, error, category, intended fix and healing history.

The checklist is the heal stage's state: the incremental re-run runs only ``still_failing`` tests, and it is
saved after every round (``keys.checklist``) so a resumed flow, or a person, sees where healing stands.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from mendflow.contracts import BuildReport, Checklist, ChecklistEntry, CheckStatus, HealAttempt, TestFailure
from mendflow.errors import HealError, StoreError
from mendflow.keys import RepoKeys
from mendflow.store.base import ArtefactStore

log = logging.getLogger(__name__)

# A verdict of a run (the re-run, the flaky check) counts as one more retry; a decision (gave up, regression) not.
_RUN_VERDICTS = {CheckStatus.FAILED, CheckStatus.PASSED, CheckStatus.HEALED, CheckStatus.QUARANTINED}
_MAX_ERROR_CHARS = 500


def error_line(failure: TestFailure) -> str:
    """The seed's ``last_error``: 'Exception: first line of the message'."""
    message = failure.message.strip().splitlines()[0] if failure.message.strip() else ""
    text = f"{failure.exception}: {message}" if failure.exception and message else failure.exception or message
    return text[:_MAX_ERROR_CHARS]


def checklist_from(report: BuildReport) -> Checklist:
    """One FAILED entry per failing test of a build, in the report's order.

    Details come from ``report.failures``; a test in ``failed_tests`` without details still gets an entry (with no
    error text), so nothing that failed is left off.
    """
    entries: dict[str, ChecklistEntry] = {}
    for failure in report.failures:
        if failure.node_id not in entries:
            entries[failure.node_id] = ChecklistEntry(test_id=failure.node_id, last_error=error_line(failure))
    for test_id in report.failed_tests:
        if test_id not in entries:
            entries[test_id] = ChecklistEntry(test_id=test_id)
    return Checklist(repo=report.repo, commit_sha=report.commit_sha, stage=report.stage, entries=list(entries.values()))


def entry(checklist: Checklist, test_id: str) -> ChecklistEntry:
    """The entry of ``test_id``; HealError when the checklist has none (a test that never failed)."""
    for e in checklist.entries:
        if e.test_id == test_id:
            return e
    raise HealError(f"{test_id} is not on the checklist of {checklist.commit_sha[:12]} {checklist.stage}")


def mark(
    checklist: Checklist,
    test_id: str,
    status: CheckStatus,
    *,
    error: str | None = None,
    attempt: HealAttempt | None = None,
) -> ChecklistEntry:
    """Record a verdict on one test: its new status, its latest error (kept when ``error`` is None), and the
    attempt behind it (appended to its history).

    ``retries`` counts the times the test was tried again: one per call with an attempt or with a run's verdict
    (failed, passed, healed, quarantined); a decision alone (gave up, regression) is no retry.
    """
    e = entry(checklist, test_id)
    e.status = status
    if error is not None:
        e.last_error = error[:_MAX_ERROR_CHARS]
    if attempt is not None:
        e.history.append(attempt)
    if attempt is not None or status in _RUN_VERDICTS:
        e.retries += 1
    return e


def still_failing(checklist: Checklist) -> list[str]:
    """The tests still to heal, in checklist order: what the incremental re-run should run."""
    return [e.test_id for e in checklist.entries if e.status is CheckStatus.FAILED]


def save(store: ArtefactStore, keys: RepoKeys, checklist: Checklist) -> str:
    """Write the checklist at ``keys.checklist``, replacing the previous round's; return its URL."""
    key = keys.checklist(checklist.commit_sha, checklist.stage)
    return store.put_bytes(key, checklist.model_dump_json(indent=2).encode())


def load(store: ArtefactStore, keys: RepoKeys, sha: str, stage: str) -> Checklist | None:
    """The saved checklist of a commit's stage; None when there is none, or it cannot be read (logged)."""
    key = keys.checklist(sha, stage)
    if not store.exists(key):
        return None
    try:
        return Checklist.model_validate_json(store.get_bytes(key))
    except (StoreError, ValidationError, UnicodeDecodeError) as exc:
        log.warning("ignoring unreadable checklist %s: %s", key, str(exc).splitlines()[0] if str(exc) else exc)
        return None


def checklist_markdown(checklist: Checklist) -> str:
    """The checklist as a table: test, status, retries, category, suggested method, last error."""
    if not checklist.entries:
        return "No failing tests.\n"
    lines = [
        "| Test | Status | Retries | Category | Suggested method | Last error |",
        "|---|---|---:|---|---|---|",
    ]
    for e in checklist.entries:
        category = e.category.value if e.category else (e.assessment.category.value if e.assessment else "")
        method = e.assessment.suggested_method.value if e.assessment else ""
        lines.append(
            f"| `{_cell(e.test_id)}` | {e.status.value} | {e.retries} | {category} | {method} "
            f"| {_cell(e.last_error[:200])} |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")
