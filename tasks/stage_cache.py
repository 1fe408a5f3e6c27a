"""Finished stage outputs kept in the artefact store, so a re-run of the same commit picks up where it stopped."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from mendflow.errors import ArtefactNotFoundError
from mendflow.settings import get_settings
from mendflow.store import open_store

M = TypeVar("M", bound=BaseModel)


def reuse_or_run(key: str, model: type[M], run: Callable[[], M], valid: Callable[[M], bool] = lambda _: True) -> M:
    """The stored ``model`` at ``key`` when it is there and still ``valid``; else ``run()`` and store it."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    try:
        cached = model.model_validate_json(store.get_bytes(key))
    except ArtefactNotFoundError:
        cached = None
    if cached is not None and valid(cached):
        return cached
    result = run()
    store.put_bytes(key, result.model_dump_json(indent=2).encode())
    return result
