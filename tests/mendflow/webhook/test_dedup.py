"""The delivery store: a delivery id is claimed once, across restarts, and can be released."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from mendflow.errors import ConfigError
from mendflow.webhook.dedup import DeliveryStore


def test_second_claim_of_a_key_fails(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "d.db")
    assert store.claim("github:1")
    assert not store.claim("github:1")


def test_claims_survive_a_restart(tmp_path: Path) -> None:
    DeliveryStore(tmp_path / "d.db").claim("github:1")
    assert not DeliveryStore(tmp_path / "d.db").claim("github:1")


def test_released_key_can_be_claimed_again(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "d.db")
    store.claim("github:1")
    store.release("github:1")
    assert store.claim("github:1")


def test_prune_forgets_only_old_keys(tmp_path: Path) -> None:
    store = DeliveryStore(tmp_path / "d.db", retention_sec=60)
    store.claim("old")
    store.claim("new")
    with sqlite3.connect(tmp_path / "d.db") as db:
        db.execute("UPDATE deliveries SET received_at = ? WHERE key = 'old'", (time.time() - 120,))
    assert store.prune() == 1
    assert store.claim("old") and not store.claim("new")


def test_unwritable_location_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot open the delivery store") as caught:
        DeliveryStore(blocker / "d.db")
    assert "MENDFLOW_WEBHOOK_DEDUP_DB" in caught.value.one_line()
