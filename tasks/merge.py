"""Merge or push a branch whose B2 passed, per the ``merge_mode`` setting."""

from __future__ import annotations

from prefect import task

from mendflow import gitops, snapshot
from mendflow.contracts import GeneratedTests
from mendflow.settings import get_settings


@task(name="merge")
def merge_tested_branch(repo: str, generated: GeneratedTests, target_branch: str) -> str:
    """'merge' into ``target_branch`` (returns its new sha), 'push' the branch to origin, or 'none' ('')."""
    settings = get_settings()
    repository = snapshot.resolve_repo(repo, settings)
    if settings.merge_mode == "merge":
        message = f"Merge {generated.branch_name}: tests for {generated.spec_id}\n"
        return gitops.merge_branch(repository, generated.branch_name, target_branch, message)
    if settings.merge_mode == "push":
        gitops.push_branch(repository, generated.branch_name)
        return generated.commit_sha
    return ""
