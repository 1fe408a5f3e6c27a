"""Merge or push a branch whose B2 passed, per the ``merge_mode`` setting; one event either way."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from mendflow import events, gitops, snapshot
from mendflow.settings import get_settings
from mendflow.source import Source


@task(name="merge", cache_policy=NO_CACHE)
def merge_tested_branch(source: Source, branch: str, sha: str, what: str) -> str:
    """Per ``merge_mode``: 'merge' ``branch`` (tested at ``sha``) into the run's branch, pushed to origin when the
    repository came by URL (returns the branch's new sha; the merged ``branch`` is deleted); 'push' ``branch`` to
    origin for a human to merge (returns ``sha``); 'none' leaves it where it is (returns ''). ``what`` says what
    the branch brings, for the merge commit's message."""
    mode = get_settings().merge_mode
    merged = ""
    repo = source.open()
    if source.branch and mode == "merge":
        merged = gitops.merge_branch(repo, branch, source.branch, f"Merge {branch}: {what}\n")
        if snapshot.is_url(source.location):  # the mirror is a cache: the merge counts once origin has it
            gitops.push_branch(repo, source.branch, force=False)
        gitops.delete_branch(repo, branch)
    elif source.branch and mode == "push":
        gitops.push_branch(repo, branch)
        merged = sha
    events.emit(source.repo_id, source.commit_sha, "merge", "merged" if merged else "ready", sha=merged, mode=mode)
    return merged
