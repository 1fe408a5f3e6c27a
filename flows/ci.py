"""Flow ``ci_build``: the Build/CI Runner stage (seed 003) on its own, for one commit."""

# No `from __future__ import annotations`: see flows/reindex.py (served runs resolve string annotations without
# this module's namespace).

from typing import Annotated

from prefect import flow
from pydantic import Field

from mendflow.contracts import BuildReport
from tasks.ci import build, resolve_source
from tasks.outcome import cancel_when_interrupted, flow_run_name
from tasks.runs import name_run


@flow(name="ci-build", flow_run_name=flow_run_name, on_crashed=[cancel_when_interrupted], timeout_seconds=3 * 3600)
def ci_build(
    repo: Annotated[str, Field(description="Clone URL or path of the repository.")],
    commit: Annotated[str | None, Field(description="sha, tag or branch; default branch head or HEAD.")] = None,
    branch: Annotated[str | None, Field(description="Branch recorded on the report (built when no commit).")] = None,
    stage: Annotated[str, Field(description="Label in artefact keys and reports, e.g. 'B1', 'B2'.")] = "build",
    repo_id: Annotated[str | None, Field(description="owner/name; default from the repository's remote.")] = None,
) -> BuildReport:
    """Build ``commit`` of ``repo`` in a sandbox and publish its BuildReport."""
    source = resolve_source(repo, commit, branch, repo_id)
    name_run(source)
    return build(source, stage)
