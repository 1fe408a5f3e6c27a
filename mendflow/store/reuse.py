"""Finished stage outputs kept in the artefact store, so a re-run of the same commit picks up where it stopped.

Why not Prefect's cache policies: a stage's output already *is* a published artefact in the store (the
BuildReport, TestSpec and GeneratedTests other stages and people read there), and jobs only ever see store
URLs. Prefect's cache would keep a second, pickled copy in its own result storage, which every worker would
need configured (and credentialed) for each store backend; reusing the published artefact needs neither. The
key carries a fingerprint of every setting that shapes the output, so a changed setting is a fresh run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from mendflow.errors import ArtefactNotFoundError
from mendflow.store.base import ArtefactStore

M = TypeVar("M", bound=BaseModel)


def reuse_or_run(
    store: ArtefactStore, key: str, model: type[M], run: Callable[[], M], valid: Callable[[M], bool] = lambda _: True
) -> M:
    """The stored ``model`` at ``key`` when it is there and still ``valid``; else ``run()`` and store it."""
    try:
        cached = model.model_validate_json(store.get_bytes(key))
    except ArtefactNotFoundError:
        cached = None
    if cached is not None and valid(cached):
        return cached
    result = run()
    store.put_bytes(key, result.model_dump_json(indent=2).encode())
    return result
