"""The audit trail (``mendflow/heal/audit.py``), on every store backend."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mendflow.heal.audit import AuditTrail
from mendflow.keys import RepoKeys
from mendflow.store.base import ArtefactStore
from tests.mendflow.store.conftest import CASES

KEYS = RepoKeys("acme/app")
SHA = "abc123"


@pytest.fixture(params=list(CASES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtefactStore:
    return CASES[request.param](request, tmp_path).store


def trail(store: ArtefactStore) -> AuditTrail:
    return AuditTrail(store, KEYS, SHA, "B1")


def test_records_are_numbered_from_one(store: ArtefactStore) -> None:
    audit = trail(store)

    keys = [audit.record("analysis", test="t1"), audit.record("attempt", test="t1")]

    assert keys == [KEYS.audit(SHA, "B1", 1), KEYS.audit(SHA, "B1", 2)]


def test_a_record_keeps_its_kind_data_and_a_utc_time(store: ArtefactStore) -> None:
    audit = trail(store)
    audit.record("gate", test="t1", refused=["assertion removed"])

    [item] = audit.entries()

    assert (item["seq"], item["kind"], item["data"]) == (1, "gate", {"test": "t1", "refused": ["assertion removed"]})
    offset = datetime.fromisoformat(item["time"]).utcoffset()
    assert offset is not None and offset.total_seconds() == 0


def test_data_named_like_the_trails_fields_does_not_clash(store: ArtefactStore) -> None:
    audit = trail(store)
    audit.record("repair", at="2026-11-25T10:15:00Z", seq=99, time="later")

    [item] = audit.entries()

    assert item["seq"] == 1 and item["data"] == {"at": "2026-11-25T10:15:00Z", "seq": 99, "time": "later"}


def test_a_resumed_trail_continues_after_what_is_stored(store: ArtefactStore) -> None:
    first = trail(store)
    first.record("analysis")
    first.record("attempt")

    key = trail(store).record("approval", approver="alice")

    assert key == KEYS.audit(SHA, "B1", 3)
    assert [e["kind"] for e in trail(store).entries()] == ["analysis", "attempt", "approval"]


def test_a_trail_appends_after_another_trails_records(store: ArtefactStore) -> None:
    older, newer = trail(store), trail(store)
    older.record("analysis")
    newer.record("approval")

    older.record("outcome")

    assert [e["kind"] for e in trail(store).entries()] == ["analysis", "approval", "outcome"]


def test_trails_of_other_stages_are_separate(store: ArtefactStore) -> None:
    trail(store).record("analysis")

    assert AuditTrail(store, KEYS, SHA, "B2").entries() == []


def test_an_unreadable_entry_is_skipped(store: ArtefactStore) -> None:
    audit = trail(store)
    audit.record("analysis")
    store.put_bytes(KEYS.audit(SHA, "B1", 2), b"not json")

    assert [e["kind"] for e in trail(store).entries()] == ["analysis"]


def test_markdown_lists_each_decision_in_order(store: ArtefactStore) -> None:
    audit = trail(store)
    audit.record("analysis", test="tests/test_a.py::test_add", category="import")
    audit.record("approval", approver="alice", approve=True)

    text = audit.markdown()

    assert text.index("| 1 |") < text.index("| 2 |")
    assert "| analysis | test=tests/test_a.py::test_add; category=import |" in text
    assert "| approval | approver=alice; approve=true |" in text


def test_markdown_of_an_empty_trail_says_so(store: ArtefactStore) -> None:
    assert "Nothing recorded" in trail(store).markdown()
