"""Seed 004's smart checklist (``mendflow/heal/checklist.py``); save and load on every store backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.contracts import (
    Assessment,
    BuildReport,
    BuildStatus,
    CheckStatus,
    ErrorCategory,
    FailureKind,
    HealAttempt,
    HealMethod,
    Scope,
    TestFailure,
)
from mendflow.errors import HealError
from mendflow.heal import checklist as checks
from mendflow.keys import RepoKeys
from mendflow.store.base import ArtefactStore
from tests.mendflow.store.conftest import CASES

KEYS = RepoKeys("acme/app")
A = "tests/test_a.py::test_add"
B = "tests/test_b.py::test_sub"


@pytest.fixture(params=list(CASES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtefactStore:
    return CASES[request.param](request, tmp_path).store


def report(**fields: object) -> BuildReport:
    base: dict[str, object] = {"repo": "acme/app", "commit_sha": "abc123", "stage": "B1", "status": BuildStatus.FAILED}
    return BuildReport.model_validate(base | fields)


def failing_report() -> BuildReport:
    return report(
        failed_tests=[A, B],
        failures=[
            TestFailure(
                node_id=A, kind=FailureKind.ERROR, exception="ImportError", message="cannot import 'add'\nmore"
            ),
            TestFailure(node_id=B, kind=FailureKind.FAILED, exception="AssertionError", message="assert 3 == 4"),
        ],
    )


def an_attempt(success: bool = False) -> HealAttempt:
    return HealAttempt(
        repo="acme/app", commit_sha="abc123", test_id=A, category=ErrorCategory.IMPORT, scope=Scope.LOCAL,
        healer="deterministic:rename", method=HealMethod.UPDATE, success=success,
    )  # fmt: skip


def test_checklist_from_a_report_has_one_failed_entry_per_failure() -> None:
    checklist = checks.checklist_from(failing_report())

    assert [(e.test_id, e.status) for e in checklist.entries] == [(A, CheckStatus.FAILED), (B, CheckStatus.FAILED)]
    assert (checklist.repo, checklist.commit_sha, checklist.stage) == ("acme/app", "abc123", "B1")


def test_last_error_is_the_exception_and_the_first_line() -> None:
    checklist = checks.checklist_from(failing_report())

    assert [e.last_error for e in checklist.entries] == [
        "ImportError: cannot import 'add'",
        "AssertionError: assert 3 == 4",
    ]


def test_without_details_the_failed_tests_are_listed() -> None:
    checklist = checks.checklist_from(report(failed_tests=[A, B]))

    assert [(e.test_id, e.last_error) for e in checklist.entries] == [(A, ""), (B, "")]


def test_entry_of_a_test_not_on_the_list_is_an_error() -> None:
    with pytest.raises(HealError):
        checks.entry(checks.checklist_from(failing_report()), "tests/test_c.py::test_other")


def test_mark_sets_the_status_and_the_error() -> None:
    checklist = checks.checklist_from(failing_report())

    checks.mark(checklist, A, CheckStatus.FAILED, error="NameError: name 'plus' is not defined")

    e = checks.entry(checklist, A)
    assert (e.status, e.last_error) == (CheckStatus.FAILED, "NameError: name 'plus' is not defined")


def test_mark_without_an_error_keeps_the_last_one() -> None:
    checklist = checks.checklist_from(failing_report())

    checks.mark(checklist, A, CheckStatus.HEALED)

    assert checks.entry(checklist, A).last_error == "ImportError: cannot import 'add'"


def test_mark_with_an_attempt_appends_it_to_the_history() -> None:
    checklist = checks.checklist_from(failing_report())
    first, second = an_attempt(), an_attempt(success=True)

    checks.mark(checklist, A, CheckStatus.FAILED, attempt=first)
    checks.mark(checklist, A, CheckStatus.HEALED, attempt=second)

    assert checks.entry(checklist, A).history == [first, second]


def test_each_rerun_verdict_bumps_the_retries() -> None:
    checklist = checks.checklist_from(failing_report())

    checks.mark(checklist, A, CheckStatus.FAILED, attempt=an_attempt())
    checks.mark(checklist, A, CheckStatus.HEALED)

    assert checks.entry(checklist, A).retries == 2


def test_giving_up_is_no_retry() -> None:
    checklist = checks.checklist_from(failing_report())

    checks.mark(checklist, A, CheckStatus.GAVE_UP)
    checks.mark(checklist, B, CheckStatus.REGRESSION)

    assert [e.retries for e in checklist.entries] == [0, 0]


def test_still_failing_lists_only_failed_tests_in_order() -> None:
    checklist = checks.checklist_from(failing_report())
    assert checks.still_failing(checklist) == [A, B]

    checks.mark(checklist, A, CheckStatus.HEALED)

    assert checks.still_failing(checklist) == [B]


def test_save_then_load_round_trips(store: ArtefactStore) -> None:
    checklist = checks.checklist_from(failing_report())
    checks.mark(checklist, A, CheckStatus.HEALED, attempt=an_attempt(success=True))

    checks.save(store, KEYS, checklist)

    assert checks.load(store, KEYS, "abc123", "B1") == checklist


def test_save_writes_the_checklist_key(store: ArtefactStore) -> None:
    checks.save(store, KEYS, checks.checklist_from(failing_report()))

    assert store.exists(KEYS.checklist("abc123", "B1"))


def test_load_of_nothing_saved_is_none(store: ArtefactStore) -> None:
    assert checks.load(store, KEYS, "abc123", "B1") is None


def test_load_of_an_unreadable_checklist_is_none(store: ArtefactStore) -> None:
    store.put_bytes(KEYS.checklist("abc123", "B1"), b'{"repo": 1}')

    assert checks.load(store, KEYS, "abc123", "B1") is None


def test_markdown_has_a_row_per_test_with_status_retries_category_and_method() -> None:
    checklist = checks.checklist_from(failing_report())
    e = checks.mark(checklist, A, CheckStatus.FAILED)
    e.category = ErrorCategory.IMPORT
    e.assessment = Assessment(category=ErrorCategory.IMPORT, suggested_method=HealMethod.UPDATE)

    text = checks.checklist_markdown(checklist)

    assert f"| `{A}` | failed | 1 | import | update | ImportError: cannot import 'add' |" in text
    assert f"| `{B}` | failed | 0 |  |  | AssertionError: assert 3 == 4 |" in text


def test_markdown_escapes_pipes_in_errors() -> None:
    checklist = checks.checklist_from(failing_report())
    checks.mark(checklist, B, CheckStatus.FAILED, error="AssertionError: a | b")

    assert "a \\| b" in checks.checklist_markdown(checklist)
