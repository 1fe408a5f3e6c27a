"""The indexer's config takes its knobs from mendflow's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.settings import Settings
from rag_indexer.config import IndexerConfig


def test_index_processes_come_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MENDFLOW_INDEX__PROCESSES", "1")
    config = IndexerConfig.from_settings(Settings(state_dir=tmp_path))
    assert config.processes == 1
    assert config.index_dir == tmp_path / "index"
