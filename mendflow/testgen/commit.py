"""Where the test builder commits kept tests: ``agt/testbuilder/<spec_id>`` (the commit is ``gitops.commit_files``)."""

from __future__ import annotations

from mendflow.contracts import MENDFLOW_BRANCH_PREFIX


def branch_for(spec_id: str) -> str:
    return f"{MENDFLOW_BRANCH_PREFIX}testbuilder/{spec_id}"
