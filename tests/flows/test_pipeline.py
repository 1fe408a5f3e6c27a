"""The self-healing loop end to end, offline (Pynguin): real Prefect server, git, sandbox, coverage."""

from __future__ import annotations

import uuid
from pathlib import Path

import pygit2
import pytest
from prefect import get_client

from flows import pipeline
from flows.pipeline import self_healing_pipeline
from mendflow.contracts import BuildStatus, FailReason, PipelineOutcome
from mendflow.settings import get_settings
from mendflow.snapshot import resolve_repo
from mendflow.store import open_store
from tasks.outcome import pipeline_result
from tests.flows.sample_repos import FAILING, PASSING

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]


def store_keys(prefix: str) -> list[str]:
    settings = get_settings()
    return open_store(settings.resolved_store_url(), settings).list(prefix)


def test_offline_loop_merges_new_tests_that_raise_coverage(calc_repo: Path) -> None:
    result = self_healing_pipeline(repo=str(calc_repo), branch="main")
    assert result.outcome is PipelineOutcome.MERGED
    assert result.generated is not None and result.generated.kept
    assert result.b2 is not None and result.b2.status is BuildStatus.PASSED
    assert result.coverage_delta_pct is not None and result.coverage_delta_pct > 0
    repo = pygit2.Repository(str(calc_repo))
    assert str(repo.branches.local["main"].target) == result.merged_sha
    merged_tree = repo[result.merged_sha].peel(pygit2.Commit).tree
    assert "tests" in merged_tree and any(e.name.endswith("_mendflow.py") for e in merged_tree["tests"])


def test_failing_b1_files_a_regression_and_plans_nothing(make_repo) -> None:
    state = self_healing_pipeline(repo=str(make_repo(FAILING, name="red")), branch="main", return_state=True)
    assert state.is_failed() and state.name == "Regression"  # a CI job gating on the run fails
    result = pipeline_result(state)
    assert result.outcome is PipelineOutcome.REGRESSION
    assert result.spec is None and result.b2 is None
    assert result.regression is not None and result.regression.failed_tests == ["tests/test_shapes.py::test_area"]
    assert f"repos/local/red/{result.commit_sha}/B1/regression.json" in store_keys(
        f"repos/local/red/{result.commit_sha}"
    )


def test_the_final_state_the_server_holds_carries_the_result(make_repo) -> None:
    # What a client gets back when its request to set the final state timed out and its retry was refused as a
    # duplicate: the server's copy of the state (one CI run's merged loop then failed with MissingResult).
    state = self_healing_pipeline(repo=str(make_repo(FAILING, name="read-back")), branch="main", return_state=True)
    with get_client(sync_client=True) as client:
        held = client.read_flow_run(state.state_details.flow_run_id).state
    assert held is not None and held.name == "Regression"
    assert pipeline_result(held) == pipeline_result(state)


def test_a_repo_without_tests_gets_its_first_ones_merged(make_repo) -> None:
    # As bidict 0.23.1 and sortedcontainers 2.4.0 publish their sdists: the code, no tests.
    untested = {k: v for k, v in PASSING.items() if not k.startswith("tests/")}
    repo = make_repo(untested, name=f"untested-{uuid.uuid4().hex[:8]}")
    result = self_healing_pipeline(repo=str(repo), branch="main")
    assert result.b1.status is BuildStatus.FAILED and result.b1.fail_reason is FailReason.NO_TESTS
    assert result.outcome is PipelineOutcome.MERGED and result.regression is None
    assert result.b2 is not None and result.b2.status is BuildStatus.PASSED and result.b2.tests.passed > 0


def test_rerun_after_a_crash_reuses_finished_stages(calc_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_build = pipeline.build

    def crash_at_b2(source, stage, **options):  # type: ignore[no-untyped-def]
        if stage == "B2":
            raise RuntimeError("worker lost")
        return real_build(source, stage, **options)

    monkeypatch.setattr(pipeline, "build", crash_at_b2)
    with pytest.raises(RuntimeError, match="worker lost"):
        self_healing_pipeline(repo=str(calc_repo), branch="main")
    repo = pygit2.Repository(str(calc_repo))
    branches_before = {b: str(repo.branches.local[b].target) for b in repo.branches.local}
    monkeypatch.setattr(pipeline, "build", real_build)

    result = self_healing_pipeline(repo=str(calc_repo), branch="main")

    assert result.outcome is PipelineOutcome.MERGED, result.regression
    agt = result.generated.branch_name if result.generated else ""
    assert branches_before[agt] == result.generated.commit_sha  # the builder's commit was reused, not redone
    assert [k for k in store_keys(f"repos/local/calc/{result.commit_sha}/B1") if k.endswith("report.json")] == [
        f"repos/local/calc/{result.commit_sha}/B1/1/report.json"
    ]


def test_a_repo_given_by_url_gets_the_merge_pushed_and_the_builder_branch_deleted(
    calc_repo: Path, tmp_path: Path
) -> None:
    origin = pygit2.clone_repository(calc_repo.as_uri(), str(tmp_path / "calc.git"), bare=True)
    url = Path(origin.path).as_uri()
    result = self_healing_pipeline(repo=url, branch="main")
    assert result.outcome is PipelineOutcome.MERGED and result.generated is not None
    assert str(pygit2.Repository(origin.path).branches.local["main"].target) == result.merged_sha
    mirror = resolve_repo(url, get_settings())
    assert result.generated.branch_name not in mirror.branches.local
    assert str(mirror.branches.local["main"].target) == result.merged_sha


def test_a_b1_that_measured_nothing_ends_no_coverage_not_a_crash(make_repo) -> None:
    # The repo's own coverage config includes only a file it does not have. (A `source` naming none, as
    # ordered-set 4.1.0's does, now measures the tree.)
    repo = make_repo({**PASSING, ".coveragerc": "[run]\ninclude = no_such_module.py\n"})
    state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    result = pipeline_result(state)
    assert state.is_completed() and result.outcome is PipelineOutcome.NO_COVERAGE
    assert result.b1.status is BuildStatus.PASSED and result.b1.coverage is None
