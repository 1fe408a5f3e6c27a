"""Flow ``heal_commit``: the heal stage (seed 004) on its own, for one commit whose build fails."""

# No `from __future__ import annotations`: see flows/reindex.py (served runs resolve string annotations without
# this module's namespace).

from typing import Annotated

from prefect import flow
from pydantic import Field

from mendflow.contracts import BuildReport, HealOutcome, HealResult
from tasks.ci import build, resolve_source
from tasks.heal import await_approval, heal, healable
from tasks.merge import merge_tested_branch
from tasks.outcome import cancel_when_interrupted, flow_run_name
from tasks.runs import branch_lock, name_run


@flow(name="heal-commit", flow_run_name=flow_run_name, on_crashed=[cancel_when_interrupted], timeout_seconds=4 * 3600)
def heal_commit(
    repo: Annotated[str, Field(description="Clone URL or path of the repository.")],
    commit: Annotated[str | None, Field(description="The failing sha; default the branch head or HEAD.")] = None,
    branch: Annotated[str | None, Field(description="The branch a healed commit merges into.")] = None,
    repo_id: Annotated[str | None, Field(description="owner/name; default from the repository's remote.")] = None,
) -> HealResult | BuildReport:
    """Build ``commit``; when its tests fail, heal them (the HealResult), else the build's report."""
    source = resolve_source(repo, commit, branch, repo_id)
    name_run(source)
    b1 = build(source, "B1", reuse=True)
    if not healable(b1):
        return b1
    result = await_approval(source, heal(source, b1))
    if result.outcome is HealOutcome.HEALED:
        with branch_lock(source):
            merge_tested_branch(source, result.branch_name, result.heal_commit_sha, "healed tests")
    return result
