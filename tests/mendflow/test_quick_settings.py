"""The query path's settings shortcut: the state directory when the defaults hold, None otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow import quick_settings
from mendflow.settings import Settings


def test_state_dir_comes_from_the_environment() -> None:
    assert quick_settings.query_state_dir({"MENDFLOW_STATE_DIR": "/srv/state"}) == Path("/srv/state")


def test_state_dir_defaults_like_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MENDFLOW_STATE_DIR", raising=False)
    assert quick_settings.query_state_dir({}) == Settings().state_dir


def test_names_are_case_insensitive_like_settings() -> None:
    assert quick_settings.query_state_dir({"mendflow_state_dir": "/s", "mendflow_index__backend": "Embedded"}) == Path(
        "/s"
    )


def test_another_backend_needs_the_full_settings() -> None:
    assert quick_settings.query_state_dir({"MENDFLOW_INDEX__BACKEND": "weaviate"}) is None


def test_embeddings_need_the_full_settings() -> None:
    assert quick_settings.query_state_dir({"MENDFLOW_INDEX__EMBEDDINGS": "openai"}) is None


def test_index_settings_as_one_json_value_need_the_full_settings() -> None:
    assert quick_settings.query_state_dir({"MENDFLOW_INDEX": '{"backend": "embedded"}'}) is None
