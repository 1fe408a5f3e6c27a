"""The healing knowledge base and learning engine (``mendflow/heal/knowledge.py``), on every store backend."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mendflow import keys
from mendflow.contracts import Assessment, ErrorCategory, HealAttempt, HealMethod, Scope
from mendflow.heal.knowledge import KnowledgeBase, escalation
from mendflow.store.base import ArtefactStore
from tests.mendflow.store.conftest import CASES

HEALER = "deterministic"
NAME = Assessment(category=ErrorCategory.NAME, uniqueness=1.0)
T0 = datetime(2026, 11, 25, 10, 15, tzinfo=UTC)


@pytest.fixture(params=list(CASES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtefactStore:
    return CASES[request.param](request, tmp_path).store


def attempt(
    method: HealMethod,
    success: bool,
    n: int = 0,
    category: ErrorCategory = ErrorCategory.NAME,
    healer: str = HEALER,
) -> HealAttempt:
    return HealAttempt(
        repo="acme/app", commit_sha="abc123", test_id=f"tests/test_a.py::test_{n}", category=category,
        scope=Scope.LOCAL, healer=healer, method=method, success=success, at=T0 + timedelta(seconds=n),
    )  # fmt: skip


def record_outcomes(kb: KnowledgeBase, method: HealMethod, successes: int, total: int, start: int = 0) -> None:
    for i in range(total):
        kb.record(attempt(method, i < successes, n=start + i))


def test_a_recorded_attempt_survives_a_new_knowledge_base(store: ArtefactStore) -> None:
    recorded = attempt(HealMethod.PATCH, True)
    KnowledgeBase(store).record(recorded)

    assert KnowledgeBase(store).attempts() == [recorded]


def test_each_attempt_is_its_own_file_under_its_category(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    kb.record(attempt(HealMethod.UPDATE, True, n=1))
    kb.record(attempt(HealMethod.UPDATE, False, n=2, category=ErrorCategory.IMPORT))

    names = store.list(keys.HEAL_KB)
    assert len(names) == 2
    assert any(k.startswith(f"{keys.HEAL_KB}/name/20261125T101501") for k in names)
    assert any(k.startswith(f"{keys.HEAL_KB}/import/20261125T101502") for k in names)


def test_recording_the_same_attempt_twice_writes_it_once(store: ArtefactStore) -> None:
    same = attempt(HealMethod.PATCH, True)
    KnowledgeBase(store).record(same)
    KnowledgeBase(store).record(same)

    assert len(store.list(keys.HEAL_KB)) == 1


def test_attempts_of_one_category_leave_the_others_out(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    kb.record(attempt(HealMethod.UPDATE, True, n=1))
    kb.record(attempt(HealMethod.UPDATE, True, n=2, category=ErrorCategory.IMPORT))

    assert [a.category for a in kb.attempts(ErrorCategory.IMPORT)] == [ErrorCategory.IMPORT]


def test_an_unreadable_file_is_skipped_with_a_warning(store: ArtefactStore, caplog: pytest.LogCaptureFixture) -> None:
    kb = KnowledgeBase(store)
    kb.record(attempt(HealMethod.UPDATE, True))
    store.put_bytes(keys.heal_attempt("name", "20261125T000000Z", "broken"), b"{not json")

    assert len(KnowledgeBase(store).attempts()) == 1
    assert "broken" in caplog.text


def test_with_no_outcomes_the_prior_wins(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store, rng=random.Random(1))

    assert {kb.choose_method(NAME, HEALER, prior=HealMethod.REWRITE) for _ in range(50)} == {HealMethod.REWRITE}


def test_outcomes_of_another_healer_leave_the_prior_in_place(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store, rng=random.Random(1))
    record_outcomes(kb, HealMethod.PATCH, 10, 10)

    assert kb.choose_method(NAME, "llm:some-model", prior=HealMethod.UPDATE) is HealMethod.UPDATE


def test_measured_success_overrides_the_prior(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store, rng=random.Random(7))
    record_outcomes(kb, HealMethod.PATCH, 8, 10)
    record_outcomes(kb, HealMethod.UPDATE, 1, 10, start=10)

    picks = [kb.choose_method(NAME, HEALER, prior=HealMethod.UPDATE) for _ in range(200)]

    assert picks.count(HealMethod.PATCH) / len(picks) > 0.8


def test_the_same_seed_gives_the_same_choices(store: ArtefactStore) -> None:
    record_outcomes(KnowledgeBase(store), HealMethod.PATCH, 5, 10)

    def picks(seed: int) -> list[HealMethod]:
        kb = KnowledgeBase(store, rng=random.Random(seed))
        return [kb.choose_method(NAME, HEALER, prior=HealMethod.UPDATE) for _ in range(30)]

    assert picks(3) == picks(3)


def test_escalation_goes_update_patch_rewrite() -> None:
    assert escalation(HealMethod.UPDATE) == [HealMethod.PATCH, HealMethod.REWRITE]


def test_escalation_never_backs_down() -> None:
    assert escalation(HealMethod.PATCH) == [HealMethod.REWRITE]
    assert escalation(HealMethod.REWRITE) == []


def test_learned_table_counts_attempts_and_successes(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    record_outcomes(kb, HealMethod.PATCH, 8, 10)
    record_outcomes(kb, HealMethod.UPDATE, 1, 10, start=10)

    rows = {(r.category, r.healer, r.method): (r.attempts, r.successes, r.success_rate) for r in kb.learned_table()}

    assert rows == {
        (ErrorCategory.NAME, HEALER, HealMethod.UPDATE): (10, 1, 0.1),
        (ErrorCategory.NAME, HEALER, HealMethod.PATCH): (10, 8, 0.8),
    }


def test_learned_table_names_the_method_the_engine_prefers(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    record_outcomes(kb, HealMethod.PATCH, 8, 10)
    record_outcomes(kb, HealMethod.UPDATE, 1, 10, start=10)

    assert {r.chosen for r in kb.learned_table()} == {HealMethod.PATCH}


def test_learned_table_prefers_the_cheaper_method_on_a_tie(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    record_outcomes(kb, HealMethod.REWRITE, 2, 4)
    record_outcomes(kb, HealMethod.PATCH, 2, 4, start=4)

    assert {r.chosen for r in kb.learned_table()} == {HealMethod.PATCH}


def test_learned_markdown_shows_the_rates(store: ArtefactStore) -> None:
    kb = KnowledgeBase(store)
    record_outcomes(kb, HealMethod.PATCH, 8, 10)

    assert "| name | `deterministic` | patch | 10 | 8 | 80% | patch |" in kb.learned_markdown()


def test_learned_markdown_without_attempts_says_so(store: ArtefactStore) -> None:
    assert "No repair attempts recorded yet" in KnowledgeBase(store).learned_markdown()
