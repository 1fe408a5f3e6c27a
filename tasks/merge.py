"""Merge or push a branch whose B2 passed, per the ``merge_mode`` setting; one event either way."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from mendflow import events, gitops
from mendflow.settings import get_settings
from mendflow.source import Source


@task(name="merge", cache_policy=NO_CACHE)
def merge_tested_branch(source: Source, branch: str, sha: str, what: str) -> str:
    """'merge' ``branch`` (tested at ``sha``) into the run's branch (returns its new sha), 'push' it to origin,
    or 'none' (''); ``what`` says what the branch brings, for the merge commit's message."""
    mode = get_settings().merge_mode
    merged = ""
    if source.branch and mode == "merge":
        merged = gitops.merge_branch(source.open(), branch, source.branch, f"Merge {branch}: {what}\n")
    elif source.branch and mode == "push":
        gitops.push_branch(source.open(), branch)
        merged = sha
    events.emit(source.repo_id, source.commit_sha, "merge", "merged" if merged else "ready", sha=merged, mode=mode)
    return merged
