"""Merge or push a branch whose B2 passed, per the ``merge_mode`` setting; one event either way."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from mendflow import events, gitops
from mendflow.contracts import GeneratedTests
from mendflow.settings import get_settings
from mendflow.source import Source


@task(name="merge", cache_policy=NO_CACHE)
def merge_tested_branch(source: Source, generated: GeneratedTests) -> str:
    """'merge' into the run's branch (returns its new sha), 'push' the branch to origin, or 'none' ('')."""
    mode = get_settings().merge_mode
    merged = ""
    if source.branch and mode == "merge":
        message = f"Merge {generated.branch_name}: tests for {generated.spec_id}\n"
        merged = gitops.merge_branch(source.open(), generated.branch_name, source.branch, message)
    elif source.branch and mode == "push":
        gitops.push_branch(source.open(), generated.branch_name)
        merged = generated.commit_sha
    events.emit(source.repo_id, source.commit_sha, "merge", "merged" if merged else "ready", sha=merged, mode=mode)
    return merged
