"""Where the test builder commits kept tests: ``agt/testbuilder/<spec_id>`` (the commit is ``gitops.commit_files``)."""

from __future__ import annotations


def branch_for(spec_id: str) -> str:
    return f"agt/testbuilder/{spec_id}"
