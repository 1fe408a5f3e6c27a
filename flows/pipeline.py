"""Flow ``self_healing_pipeline``: seed 000 §5's coordination table as a Prefect flow.

    B1 PASSED → Test Planner → TestSpec → Test Builder → precheck PASSED → B2 PASSED → merge and archive
    B1 or B2 FAILED/ERRORED → Verifier → Regression

Each transition is an event ``mendflow.<stage>.<outcome>`` on the repo and commit. Finished stages are kept
in the artefact store, so re-running the flow for a commit reuses them instead of redoing them.
"""

from __future__ import annotations

from typing import Any, cast
from uuid import UUID

from prefect import flow, get_run_logger
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.events import emit_event
from prefect.states import Completed, Failed, State

from flows.ci import record, run_stage
from mendflow import snapshot
from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    GeneratedTests,
    PipelineOutcome,
    PipelineResult,
    Regression,
    TestSpec,
)
from mendflow.errors import ContractError
from mendflow.render import coverage_comparison_rows, generated_tests_markdown, pipeline_markdown
from mendflow.settings import get_settings
from rag_indexer.api import CodeIndex, open_index
from tasks.build import SourceRef, snapshot_source
from tasks.builder import build_tests_task
from tasks.index import index_commit
from tasks.merge import merge_tested_branch
from tasks.planner import plan_tests_task
from tasks.stage_cache import reuse_or_run
from tasks.verifier import verify

COVERAGE_DROP_ALERT_PCT = 5.0  # seed 000 §7: coverage_drop > 5 % between B1 and B2
# The name of the run's final state says the outcome in the UI and to `mendflow run --deployment`, which reads
# it back: only the state travels from a worker to a CI job, the returned PipelineResult stays with the worker.
STATE_NAMES = {
    PipelineOutcome.MERGED: "Merged",
    PipelineOutcome.READY: "Ready",
    PipelineOutcome.NOTHING_TO_ADD: "Nothing to add",
    PipelineOutcome.NO_TESTS_KEPT: "No tests kept",
    PipelineOutcome.REGRESSION: "Regression",
}


def transition(source: SourceRef, step: str, outcome: str, **payload: Any) -> None:
    emit_event(
        event=f"mendflow.{step}.{outcome.lower()}",
        resource={"prefect.resource.id": f"mendflow.repo.{source.repo}", "mendflow.commit": source.commit_sha},
        payload=payload,
    )


def build(source: SourceRef, stage: str) -> BuildReport:
    report = run_stage(source, stage, reuse=True)
    record(report)
    transition(source, stage.lower(), report.status.value, attempt=report.attempt, url=report.artefact_url)
    return report


def regression(source: SourceRef, report: BuildReport) -> Regression:
    found = verify(report)
    transition(source, "verifier", "regression", id=found.id, stage=report.stage)
    return found


def plan_tests(
    source: SourceRef, b1: BuildReport, repo: str, change: dict[str, Any] | None, index: CodeIndex
) -> TestSpec:
    spec = reuse_or_run(
        f"{source.repo}/{source.commit_sha}/testplanner/testspec.json",
        TestSpec,
        lambda: plan_tests_task(b1, repo, change, index),
    )
    transition(source, "testplanner", "planned", spec_id=spec.id, cases=len(spec.cases))
    create_table_artifact(
        table=[{"case": c.name, "kind": c.kind.value, "target": c.target_path, "goal": c.goal} for c in spec.cases],
        key="testspec-cases",
        description=f"TestSpec {spec.id}",
    )
    return spec


def generate_tests(source: SourceRef, spec: TestSpec, repo: str, index: CodeIndex) -> GeneratedTests:
    generated = reuse_or_run(
        f"{source.repo}/{source.commit_sha}/testbuilder/{spec.id}.json",
        GeneratedTests,
        lambda: build_tests_task(spec, repo, index),
        valid=lambda g: g.precheck is not BuildStatus.ERRORED,
    )
    if generated.commit_sha:
        files = snapshot.read_files(repo, generated.commit_sha, generated.files)
        create_markdown_artifact(
            markdown=generated_tests_markdown(generated, files),
            key="generated-tests",
            description=f"Tests generated for {spec.id}",
        )
    transition(
        source, "testbuilder", generated.precheck.value, kept=len(generated.kept), dropped=len(generated.dropped)
    )
    return generated


def coverage_delta(b1: BuildReport, b2: BuildReport, source: SourceRef) -> float | None:
    if b1.coverage is None or b2.coverage is None:
        return None
    create_table_artifact(
        table=coverage_comparison_rows(b1, b2), key="coverage-b1-b2", description="Line coverage by file, B1 → B2"
    )
    delta = round(b2.coverage.line_pct - b1.coverage.line_pct, 2)
    if delta < -COVERAGE_DROP_ALERT_PCT:
        transition(source, "coverage", "drop", b1=b1.coverage.line_pct, b2=b2.coverage.line_pct, delta=delta)
    return delta


def finish(result: PipelineResult, progress: UUID) -> State[PipelineResult]:
    """The run's final state: Failed for a regression (a CI job gating on the run must fail), else Completed."""
    update_progress_artifact(progress, 100.0)
    create_markdown_artifact(markdown=pipeline_markdown(result), key="pipeline-result", description="Pipeline result")
    get_run_logger().info("pipeline %s: %s", result.commit_sha[:12], result.outcome.value)
    name = STATE_NAMES[result.outcome]
    if result.regression is not None:
        reason = result.regression.error_reason or result.regression.fail_reason or "build failed"
        return Failed(name=name, message=f"regression {result.regression.id}: {reason}", data=result)
    return Completed(name=name, message=pipeline_summary(result), data=result)


def pipeline_summary(result: PipelineResult) -> str:
    kept = f"{len(result.generated.kept)} tests kept" if result.generated else "no tests generated"
    delta = "" if result.coverage_delta_pct is None else f", coverage {result.coverage_delta_pct:+.1f} points"
    merged = f", merged as {result.merged_sha[:12]}" if result.merged_sha else ""
    return f"{result.outcome.value}: {kept}{delta}{merged}"


def pipeline_result(state: State[Any]) -> PipelineResult:
    """The PipelineResult of a finished run (``return_state=True``), a regression's included; a crash re-raises."""
    data = state.result(raise_on_failure=False)
    if isinstance(data, PipelineResult):
        return data
    if isinstance(data, BaseException):
        raise data
    raise ContractError(f"pipeline run ended {state.name} without a PipelineResult: {data!r}")


@flow(name="self-healing-pipeline", log_prints=True)
def self_healing_pipeline(
    repo: str, commit: str | None = None, branch: str | None = None, plan: dict[str, Any] | None = None
) -> State[PipelineResult]:
    """Build, plan and write the missing tests, build again, then merge — or file a Regression.

    The run ends Completed (named after the outcome: Merged, Ready, Nothing to add, No tests kept) or, for a
    regression, Failed named Regression; the state carries the PipelineResult (see ``pipeline_result``).

    Args:
        repo: path of a local git repository or a clone URL.
        commit: sha, tag or branch pushed; default the branch head or HEAD.
        branch: the branch the commit belongs to (the merge target).
        plan: the change's plan (seed 002 ``Plan{steps, rationale, affected_paths}``) for the planner's
            CHANGE SUMMARY; optional.
    """
    # Prefect's sync_compatible signature says "or a coroutine"; called from a sync flow it is the id.
    progress = cast(UUID, create_progress_artifact(progress=0.0, description="B1 → plan → generate → B2 → merge"))
    source = snapshot_source(repo, commit, branch)
    result = PipelineResult(
        repo=source.repo, commit_sha=source.commit_sha, branch_name=source.branch,
        outcome=PipelineOutcome.REGRESSION, b1=build(source, "B1"),
    )  # fmt: skip
    update_progress_artifact(progress, 25.0)
    if result.b1.status is not BuildStatus.PASSED:
        return finish(result.model_copy(update={"regression": regression(source, result.b1)}), progress)
    with open_index(get_settings(), repo=index_commit(repo, source.commit_sha), ref=source.commit_sha) as index:
        result.spec = plan_tests(source, result.b1, repo, plan, index)
        update_progress_artifact(progress, 35.0)
        if not result.spec.targets:
            return finish(result.model_copy(update={"outcome": PipelineOutcome.NOTHING_TO_ADD}), progress)
        result.generated = generate_tests(source, result.spec, repo, index)
    update_progress_artifact(progress, 75.0)
    if result.generated.precheck is not BuildStatus.PASSED:
        return finish(result.model_copy(update={"outcome": PipelineOutcome.NO_TESTS_KEPT}), progress)
    tested = snapshot_source(repo, result.generated.commit_sha, result.generated.branch_name)
    result.b2 = build(tested, "B2")
    update_progress_artifact(progress, 95.0)
    result.coverage_delta_pct = coverage_delta(result.b1, result.b2, source)
    if result.b2.status is not BuildStatus.PASSED:
        return finish(result.model_copy(update={"regression": regression(tested, result.b2)}), progress)
    result.merged_sha = merge_tested_branch(repo, result.generated, source.branch) if source.branch else ""
    result.outcome = PipelineOutcome.MERGED if result.merged_sha else PipelineOutcome.READY
    if get_settings().merge_mode == "merge" and result.merged_sha:
        index_commit(repo, source.branch)  # the merged branch's index, fresh for the next push
    transition(source, "merge", result.outcome.value, sha=result.merged_sha, mode=get_settings().merge_mode)
    return finish(result, progress)
