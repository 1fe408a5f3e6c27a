"""Flow ``self_healing_pipeline``: seed 000 §5's coordination table, composed from the stage tasks.

B1 PASSED → Test Planner → TestSpec → Test Builder → precheck PASSED → B2 PASSED → merge (Regression when B2
  measured less than B1); so does a B1 that FAILED only for having no tests (every line is a gap)
B1 FAILED/ERRORED → Verifier → Regression → heal (tests only) → B3 → merge, or awaiting approval
  not healed, stale generated tests only → drop them → B3 → Test Planner → Test Builder → B2 → awaiting approval
B2 FAILED → Verifier → heal the generated tests, else drop the failing ones → B3 → merge, or no tests kept
"""

# No `from __future__ import annotations`: see flows/reindex.py (served runs resolve string annotations without
# this module's namespace).

from collections.abc import Callable
from typing import Annotated

from prefect import flow
from prefect.states import State
from pydantic import Field

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    FailReason,
    GeneratedTests,
    HealOutcome,
    HealResult,
    PipelineOutcome,
    PipelineResult,
    Regression,
    is_test_file,
)
from mendflow.heal.stale import covered_by
from mendflow.settings import get_settings
from mendflow.source import Source
from rag_indexer.api import open_index
from tasks.ci import build, resolve_source, source_at
from tasks.heal import (
    await_approval,
    drop_failed_generated,
    drop_stale_generated,
    heal,
    healable,
    regenerated_result,
)
from tasks.index import index_commit
from tasks.merge import merge_tested_branch
from tasks.outcome import ChangePlan, Run, cancel_when_interrupted, finish, flow_run_name
from tasks.plan import plan_tests_task
from tasks.runs import branch_lock, name_run
from tasks.testgen import build_tests_task
from tasks.verify import verify, verify_coverage

PIPELINE_TIMEOUT_SEC = 4 * 3600  # the longest stage (generation) is bounded by its jobs' own deadlines


@flow(
    name="self-healing-pipeline",
    flow_run_name=flow_run_name,
    on_crashed=[cancel_when_interrupted],
    timeout_seconds=PIPELINE_TIMEOUT_SEC,
)
def self_healing_pipeline(
    repo: Annotated[str, Field(description="Clone URL or path of the repository (the push's event.payload.repo).")],
    commit: Annotated[str | None, Field(description="The pushed sha; default the branch head or HEAD.")] = None,
    branch: Annotated[str | None, Field(description="The branch the commit belongs to: the merge target.")] = None,
    repo_id: Annotated[str | None, Field(description="owner/name; default from the repository's remote.")] = None,
    plan: Annotated[ChangePlan | None, Field(description="The change's plan, for the planner.")] = None,
) -> State[PipelineResult]:
    """Build, plan and write the missing tests, build again, then merge — or file a Regression."""
    source = resolve_source(repo, commit, branch, repo_id)
    name_run(source)
    run = Run(source, PipelineResult(
        repo=source.repo_id, commit_sha=source.commit_sha, branch_name=source.branch,
        outcome=PipelineOutcome.REGRESSION, b1=build(source, "B1", reuse=True),
    ))  # fmt: skip
    if run.result.b1.status is not BuildStatus.PASSED and not untested(run.result.b1):
        return heal_or_report(run, source, run.result.b1)
    run.progress.set(25)
    if run.result.b1.coverage is None:  # nothing to plan from: said, not a crash (its runner.log tells why)
        return finish(run, PipelineOutcome.NO_COVERAGE)
    index_commit(source)
    with open_index(get_settings(), repo=source.repo_id, ref=source.commit_sha) as index:
        run.result.spec = plan_tests_task(source, run.result.b1, plan.model_dump() if plan else None, index)
        run.progress.set(35)
        if not run.result.spec.targets:
            return finish(run, PipelineOutcome.NOTHING_TO_ADD)
        run.result.generated = build_tests_task(source, run.result.spec, index, run.progress.span(35, 75))
    run.progress.set(75)
    if run.result.generated.precheck is not BuildStatus.PASSED:
        return finish(run, PipelineOutcome.NO_TESTS_KEPT)
    tested = source_at(source, run.result.generated.commit_sha, run.result.generated.branch_name)
    run.result.b2 = build(tested, "B2", reuse=True)
    run.progress.set(95)
    if run.result.b2.status is not BuildStatus.PASSED:
        return heal_or_drop(run, source, tested)
    return merge_tests(run, source, tested)


def untested(report: BuildReport) -> bool:
    """A build that failed only because the repository has no tests (a library published without them): nothing
    for the Verifier or the healer, everything for the planner."""
    return report.status is BuildStatus.FAILED and report.fail_reason is FailReason.NO_TESTS and not report.lint_errors


def merge_tests(run: Run, source: Source, tested: Source) -> State[PipelineResult]:
    """Merge the tested branch, unless its last build (B2, or B3 after a drop) measured less than B1."""
    assert run.result.generated is not None
    last = run.result.b3 or run.result.b2
    assert last is not None
    if (regression := verify_coverage(tested, run.result.b1, last)) is not None:
        return finish(run, regression=regression)
    with branch_lock(source):
        run.result.merged_sha = merge_tested_branch(
            source, tested.branch, tested.commit_sha, f"tests for {run.result.generated.spec_id}"
        )
    return finish(run, PipelineOutcome.MERGED if run.result.merged_sha else PipelineOutcome.READY)


def heal_or_report(run: Run, source: Source, report: BuildReport) -> State[PipelineResult]:
    """Seed 000 §5: a failed build goes to the Verifier; seed 004: then to the healer (test code only)."""
    regression = verify(source, report)
    if healable(report) and (ended := healed(run, source, report, is_test_file, source)) is not None:
        return ended
    heal = run.result.heal
    if heal is not None and (ended := regenerated(run, source, heal, regression)) is not None:
        return ended
    return finish(run, regression=regression)


def regenerated(run: Run, source: Source, heal: HealResult, regression: Regression) -> State[PipelineResult] | None:
    """Generated tests that pinned behaviour the commit changed (stale) dropped on the heal branch, B3 of that,
    then tests generated again from the current code for what they covered (planner and builder on the drop
    commit, as after a passing B1) and their B2: for a human's approval, the regression still reported."""
    drop = drop_stale_generated(source, heal)
    if drop is None:
        return None
    spec_id, generated, b2 = "", None, None
    if drop.b3.status is BuildStatus.PASSED:
        index_commit(source)  # the drop changes only tests: the failing commit's code is what tests are made for
        with open_index(get_settings(), repo=source.repo_id, ref=source.commit_sha) as index:
            spec = covered_by(plan_tests_task(drop.source, drop.b3, None, index), sorted(drop.files))
            spec_id, generated = spec.id, build_tests_task(drop.source, spec, index) if spec.targets else None
        b2 = built(drop.source, generated)
    return settled(run, source, regenerated_result(source, heal, drop, spec_id, generated, b2), source, regression)


def built(at: Source, generated: GeneratedTests | None) -> BuildReport | None:
    """B2 of generated tests that passed their precheck."""
    if generated is None or generated.precheck is not BuildStatus.PASSED:
        return None
    return build(source_at(at, generated.commit_sha, generated.branch_name), "B2", reuse=True)


def heal_or_drop(run: Run, source: Source, tested: Source) -> State[PipelineResult]:
    """B2 failed on code B1 passed: the generated tests are at fault, never the user's commit. They are healed
    (only they); what cannot be is dropped, and B3 builds what is left."""
    assert run.result.generated is not None and run.result.b2 is not None
    b2, ours = run.result.b2, set(run.result.generated.files).__contains__
    regression = verify(tested, b2)
    if b2.status is BuildStatus.ERRORED:
        return finish(run, regression=regression)
    if healable(b2, ours) and (ended := healed(run, tested, b2, ours, source)) is not None:
        return ended
    dropped = drop_failed_generated(tested, run.result.generated, b2)
    if dropped is None:
        return finish(run, PipelineOutcome.NO_TESTS_KEPT)
    run.result.generated, kept, run.result.b3 = dropped
    if run.result.b3.status is not BuildStatus.PASSED:
        return finish(run, PipelineOutcome.NO_TESTS_KEPT)
    return merge_tests(run, source, kept)


def healed(
    run: Run, failed: Source, report: BuildReport, may_touch: Callable[[str], bool], target: Source
) -> State[PipelineResult] | None:
    """Heal ``report`` touching only ``may_touch``; the run's end when healed (merged into ``target``) or awaiting
    approval, None when not healed."""
    return settled(run, failed, heal(failed, report, may_touch), target)


def settled(
    run: Run, failed: Source, result: HealResult, target: Source, regression: Regression | None = None
) -> State[PipelineResult] | None:
    """The run's end for a heal: awaiting approval (with ``regression`` still reported, when given), or merged
    into ``target`` once healed (approved); None when not healed or rejected."""
    run.result.heal = await_approval(failed, result)
    if run.result.heal.outcome is HealOutcome.AWAITING_APPROVAL:
        return finish(run, PipelineOutcome.AWAITING_APPROVAL, regression)
    if run.result.heal.outcome is not HealOutcome.HEALED:
        return None
    with branch_lock(target):
        run.result.merged_sha = merge_tested_branch(
            target, run.result.heal.branch_name, run.result.heal.heal_commit_sha, "healed tests"
        )
    return finish(run, PipelineOutcome.HEALED)
