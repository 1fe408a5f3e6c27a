"""Which repositories mendflow serves: one small record per repository under its own key prefix."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ValidationError

from mendflow.keys import SERVED, served
from mendflow.source import Source
from mendflow.store.base import ArtefactStore


class ServedRepo(BaseModel):
    repo_id: str
    location: str  # the path or clone URL the last run was given
    branch: str = ""
    last_run_at: datetime


def remember(store: ArtefactStore, source: Source) -> None:
    """Record (or refresh) the run's repository for the scheduled re-index."""
    record = ServedRepo(
        repo_id=source.repo_id, location=source.location, branch=source.branch, last_run_at=datetime.now(UTC)
    )
    store.put_bytes(served(source.repo_id), record.model_dump_json().encode())


def served_repos(store: ArtefactStore) -> list[ServedRepo]:
    """Every repository a run has been made on, by identity; unreadable records are skipped."""
    found = []
    for key in store.list(SERVED):
        try:
            found.append(ServedRepo.model_validate_json(store.get_bytes(key)))
        except ValidationError:
            continue
    return sorted(found, key=lambda r: r.repo_id)
