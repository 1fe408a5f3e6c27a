"""Stale generated tests end to end: a commit changes behaviour a mendflow-generated test pinned; the loop
reports the regression, drops the stale test on the heal branch and generates tests again from the current
code, for a human's approval (real Prefect server, git, the sandboxed runner, Pynguin offline)."""

from __future__ import annotations

import json
from typing import Any

import pygit2
import pytest
from prefect.flow_runs import resume_flow_run

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import CheckStatus, ErrorCategory, HealOutcome, PipelineOutcome
from mendflow.heal.report import branch_for
from mendflow.settings import get_settings
from mendflow.store import open_store
from tasks.outcome import pipeline_result
from tests.fixtures.repos import commit_files
from tests.flows.sample_repos import PYPROJECT
from tests.flows.test_heal import in_background, wait_for_paused_run

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

CODE = "def f(x: int) -> int:\n    return x * 2\n\n\ndef g() -> str:\n    return 'g'\n"
GENERATED = "from shapes import f\n\n\ndef test_f() -> None:\n    assert f(2) == 4\n"
USERS = "from shapes import g\n\n\ndef test_g() -> None:\n    assert g() == 'g'\n"
STALE = "tests/test_shapes_mendflow.py::test_f"


def repo_with(make_repo: Any, name: str, **extra: str) -> tuple[pygit2.Repository, str]:
    files = {
        "pyproject.toml": PYPROJECT, "shapes.py": CODE, "tests/test_shapes_mendflow.py": GENERATED,
        "tests/test_shapes.py": USERS, **extra,
    }  # fmt: skip
    path = make_repo(files, name=name)
    sha = commit_files(path, {"shapes.py": CODE.replace("x * 2", "x * 3")}, "f triples")
    return pygit2.Repository(str(path)), sha


def test_a_stale_generated_test_is_regenerated_for_approval_and_the_regression_reported(make_repo: Any) -> None:
    git, sha = repo_with(make_repo, "stale")

    state = self_healing_pipeline(repo=git.workdir, commit=sha, branch="main", return_state=True)

    result = pipeline_result(state)
    heal = result.heal
    assert heal is not None and heal.regenerated is not None, heal and heal.summary_md
    assert state.name == "Awaiting approval" and result.outcome is PipelineOutcome.AWAITING_APPROVAL, heal.summary_md
    assert result.regression is not None and result.regression.failed_tests == [STALE]
    assert heal.outcome is HealOutcome.AWAITING_APPROVAL and heal.regenerated.passed
    assert heal.regenerated.dropped == [STALE]
    (entry,) = heal.checklist.entries
    assert entry.status is CheckStatus.REGRESSION and entry.history[-1].category is ErrorCategory.STALE_GENERATED
    # The heal branch: the drop commit, then the regenerated tests, passing B2; the user's test untouched.
    assert git.branches.local[branch_for(sha, "B1")].target == pygit2.Oid(hex=heal.heal_commit_sha)
    head = git[heal.heal_commit_sha].peel(pygit2.Commit)
    assert str(head.parent_ids[0]) == heal.regenerated.drop_commit_sha
    assert str(git[heal.regenerated.drop_commit_sha].peel(pygit2.Commit).parent_ids[0]) == sha
    generated = heal.regenerated.generated
    assert generated is not None and generated.kept and heal.b3 is not None and heal.b3.status.value == "PASSED"
    assert all(k.target.startswith("shapes.py") for k in generated.kept)
    assert head.tree["tests/test_shapes.py"].data.decode() == USERS
    assert "f(2) == 4" not in "".join(head.tree[p].data.decode() for p in generated.files)
    assert heal.b3.tests.passed >= 2 and not heal.b3.failed_tests
    assert str(git.branches.local["main"].target) == sha  # never merged without a human
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    trail = store.list(f"repos/local/stale/{sha}/heal/B1/audit")
    kinds = {json.loads(store.get_bytes(k))["kind"] for k in trail}
    assert {"drop-stale", "regenerate", "outcome"} <= kinds
    assert store.list("heal-kb/stale_generated")


def test_a_failing_test_outside_the_generated_files_is_never_dropped_or_regenerated(make_repo: Any) -> None:
    pinned = "from shapes import f\n\n\ndef test_f_users() -> None:\n    assert f(3) == 6\n"
    git, sha = repo_with(make_repo, "mixed", **{"tests/test_pinned.py": pinned})

    state = self_healing_pipeline(repo=git.workdir, commit=sha, branch="main", return_state=True)

    result = pipeline_result(state)
    assert state.name == "Regression" and result.outcome is PipelineOutcome.REGRESSION
    assert result.heal is not None and result.heal.regenerated is None
    assert {e.status for e in result.heal.checklist.entries} == {CheckStatus.REGRESSION}
    assert not [b for b in git.branches.local if b.startswith("agt/")]


def test_an_approved_regeneration_merges_like_any_heal(make_repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MENDFLOW_HEAL__APPROVAL_WAIT_SEC", "600")
    get_settings.cache_clear()
    git, sha = repo_with(make_repo, "approved")
    states: list[Any] = []
    runner = in_background(
        lambda: states.append(self_healing_pipeline(repo=git.workdir, commit=sha, branch="main", return_state=True))
    )

    resume_flow_run(wait_for_paused_run(timeout=600).id, run_input={"approve": True, "approver": "carol"})
    runner.join(300)

    result = pipeline_result(states[0])
    assert result.outcome is PipelineOutcome.HEALED and result.heal is not None, result.heal and result.heal.summary_md
    assert result.heal.approver == "carol" and result.merged_sha == str(git.branches.local["main"].target)
    merged = git[result.merged_sha].peel(pygit2.Commit).tree
    assert result.heal.regenerated is not None and result.heal.regenerated.generated is not None
    fresh = "".join(merged[p].data.decode() for p in result.heal.regenerated.generated.files)
    assert "shapes" in fresh and "f(2) == 4" not in fresh
    assert merged["shapes.py"].data.decode() == CODE.replace("x * 2", "x * 3")  # the code stays as committed
