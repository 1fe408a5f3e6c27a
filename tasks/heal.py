"""Heal stage as Prefect tasks: a failed build → repaired tests on ``agt/healer/<id>``, judged by re-runs.

flaky check (re-run the failed tests as they are) → rounds of repair (trusted) and incremental re-run (a CI
job running only the still-failing tests) → B3, the full build of the heal commit → healed, awaiting
approval or not healed. Every decision is in the audit trail; the checklist and the learned choices are
artifacts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput

from mendflow import events, gitops
from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    Checklist,
    CheckStatus,
    ErrorCategory,
    FailReason,
    FailureKind,
    GeneratedTests,
    HealOutcome,
    HealResult,
    Regeneration,
    SourceFixProposal,
    TestFailure,
    is_generated_test_file,
    is_test_file,
)
from mendflow.errors import HealError
from mendflow.heal import checklist as checks
from mendflow.heal.audit import AuditTrail
from mendflow.heal.changes import CommitChanges, commit_changes
from mendflow.heal.drop import drop_failed
from mendflow.heal.healer import Files, Healer
from mendflow.heal.knowledge import KnowledgeBase
from mendflow.heal.lintfix import fix_lint, judge_fix, lint_checklist, lint_fixable
from mendflow.heal.proposal import propose_fix, source_paths
from mendflow.heal.report import branch_for, commit_message, heal_markdown, outcome_of, proposal_branch
from mendflow.heal.stale import attempts, drop_message, drop_stale, stale_tests
from mendflow.heal.symbols import index_moves, lost_names, with_moves
from mendflow.launcher import get_launcher
from mendflow.render import artifact_key
from mendflow.settings import Settings, get_settings
from mendflow.source import Source
from mendflow.store import open_store
from rag_indexer.api import open_index
from tasks.ci import build, source_at
from tasks.runs import run_llm


class Approval(RunInput):
    """A human's answer to a heal that needs one (the Prefect UI shows it as a form)."""

    approve: bool
    approver: str = ""
    comment: str = ""


def healable(report: BuildReport, may_touch: Callable[[str], bool] = is_test_file) -> bool:
    """Tests failed, or lint failed in files healing may touch (not dependencies or the infrastructure)."""
    if not get_settings().heal.enabled:
        return False
    if report.fail_reason is FailReason.LINT:
        return bool(lint_fixable(report, may_touch))
    return report.fail_reason is FailReason.TESTS and bool(report.failed_tests)


def heal(source: Source, report: BuildReport, may_touch: Callable[[str], bool] = is_test_file) -> HealResult:
    """Repair what broke ``report`` in test code only; B3 decides. ``may_touch``: the files healing may edit."""
    if report.fail_reason is FailReason.LINT:
        return heal_lint(source, report, may_touch)
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    checklist = checks.checklist_from(report)
    audit = AuditTrail(store, source.artefacts, source.commit_sha, report.stage)
    if settings.heal.check_flaky:
        quarantine_flaky(source, checklist, audit)
    healer = Healer(
        Files(source.open(), source.commit_sha, may_touch), changes_of(source), KnowledgeBase(store), audit,
        source.repo_id, run_llm(settings), settings.heal.llm_attempts,
    )  # fmt: skip
    tested = repair_rounds(source, checklist, healer, report, settings)
    b3 = build(tested, "B3") if tested is not None and not checks.still_failing(checklist) else None
    if b3 is not None and b3.status is BuildStatus.PASSED:
        passed_with_the_repairs(checklist, audit)
    proposal = None
    if healer.llm is not None and settings.heal.propose_source_fixes:
        proposal = propose_source_fix(source, checklist, report, healer, audit)
    needs_approval = bool(healer.approvals) or any(
        a.category not in settings.heal.auto_approve for e in checklist.entries for a in e.history if a.success
    )
    result = heal_result(source, report, checklist, tested, b3, needs_approval, proposal)
    return publish(source, result, audit, KnowledgeBase(store))


def heal_result(
    source: Source,
    report: BuildReport,
    checklist: Checklist,
    tested: Source | None,
    b3: BuildReport | None,
    needs_approval: bool,
    proposal: SourceFixProposal | None = None,
) -> HealResult:
    return HealResult(
        repo=source.repo_id, commit_sha=source.commit_sha, stage=report.stage,
        outcome=outcome_of(checklist, report, b3, needs_approval), checklist=checklist, b3=b3,
        branch_name=tested.branch if tested else "", heal_commit_sha=tested.commit_sha if tested else "",
        diff=gitops.diff(source.open(), source.commit_sha, tested.commit_sha) if tested else "", proposal=proposal,
    )  # fmt: skip


def propose_source_fix(
    source: Source, checklist: Checklist, report: BuildReport, healer: Healer, audit: AuditTrail
) -> SourceFixProposal | None:
    """For the real regressions: a fix to the code the commit changed, on its own branch, checked by a CI job
    running those tests there. Proposed for review only — nothing here is ever merged."""
    regressions = [e for e in checklist.entries if e.status is CheckStatus.REGRESSION]
    paths = source_paths(list(healer.changes.changed_lines))
    first = regressions[0] if regressions else None
    if first is None or first.assessment is None or not paths or healer.llm is None:
        return None
    failure = next((f for f in report.failures if f.node_id == first.test_id), None) or TestFailure(
        node_id=first.test_id, kind=FailureKind.FAILED, message=first.last_error
    )
    code = Files(source.open(), source.commit_sha, set(paths).__contains__)
    try:
        texts = {path: code.read(path) for path in paths}
    except HealError as exc:  # a link, a huge file: nothing to show the LLM safely
        audit.record("proposal", test=first.test_id, proposed=False, reason=exc.one_line())
        return None
    diff = gitops.diff(source.open(), healer.changes.parent, source.commit_sha)
    attempts = get_settings().heal.llm_attempts
    proposed = propose_fix(healer.llm, failure, first.assessment, texts, diff, attempts)
    if proposed is None:
        audit.record("proposal", test=first.test_id, proposed=False)
        return None
    branch = proposal_branch(source.commit_sha, checklist.stage)
    message = f"mendflow proposal: fix the code for {first.test_id} (for review)\n\n{proposed.reasoning}\n"
    sha = gitops.commit_files(source.open(), source.commit_sha, branch, proposed.files, message)
    ids = [e.test_id for e in regressions]
    rerun = build(source_at(source, sha, branch), f"{checklist.stage}-P", select=ids)
    failing = set(rerun.failed_tests) if rerun.status is not BuildStatus.ERRORED else set(ids)
    proposal = SourceFixProposal(
        branch_name=branch, commit_sha=sha, files=sorted(proposed.files), reasoning=proposed.reasoning,
        diff=gitops.diff(source.open(), source.commit_sha, sha), tokens=proposed.tokens,
        passes=[t for t in ids if t not in failing], still_failing=[t for t in ids if t in failing],
    )  # fmt: skip
    audit.record("proposal", **proposal.model_dump(mode="json"))
    return proposal


def heal_lint(source: Source, report: BuildReport, may_touch: Callable[[str], bool]) -> HealResult:
    """The repo's own fixers on the files its lint findings are in (a sandboxed job), then B3 decides."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    paths = lint_fixable(report, may_touch)
    checklist = lint_checklist(report, paths)
    audit = AuditTrail(store, source.artefacts, source.commit_sha, report.stage)
    fix = fix_lint(source, paths, report.stage, store=store, launcher=get_launcher(settings), settings=settings)
    audit.record(
        "lint-fix", fixed=sorted(fix.fixed), refused=fix.refused, remaining=fix.remaining, error=fix.error,
        artefacts=fix.artefacts,
    )  # fmt: skip
    tested, b3 = None, None
    if fix.fixed:
        branch = branch_for(source.commit_sha, report.stage)
        message = f"mendflow heal: the repo's lint fixers on {len(fix.fixed)} file(s) of {source.commit_sha[:12]}\n"
        tested = source_at(
            source, gitops.commit_files(source.open(), source.commit_sha, branch, fix.fixed, message), branch
        )
        b3 = build(tested, "B3")
    kb = KnowledgeBase(store)
    for attempt in judge_fix(checklist, fix, b3):
        kb.record(attempt)
        audit.record("repair", **attempt.model_dump(mode="json"))
    approval = bool(fix.fixed) and ErrorCategory.LINT not in settings.heal.auto_approve
    return publish(source, heal_result(source, report, checklist, tested, b3, approval), audit, kb)


def drop_failed_generated(
    tested: Source, generated: GeneratedTests, report: BuildReport
) -> tuple[GeneratedTests, Source, BuildReport] | None:
    """The generated tests that failed B2 dropped in a commit on their branch, and B3 of what is left; None when
    nothing can be (a failure outside them, or no test left)."""
    files = Files(tested.open(), tested.commit_sha, set(generated.files).__contains__)
    drop = drop_failed(generated, report, files.read)
    if drop is None:
        return None
    gone = drop.generated.dropped[len(generated.dropped) :]
    message = f"tests: drop {len(gone)} generated test(s) that failed {report.stage}\n\n" + "".join(
        f"- {d.node_id}: {d.detail}\n" for d in gone
    )
    sha = gitops.commit_files(tested.open(), tested.commit_sha, tested.branch, drop.files, message)
    settings = get_settings()
    AuditTrail(
        open_store(settings.resolved_store_url(), settings), tested.artefacts, tested.commit_sha, report.stage
    ).record("drop", tests=[d.node_id for d in gone], files=sorted(drop.files), sha=sha)
    kept = source_at(tested, sha, tested.branch)
    return drop.generated.model_copy(update={"commit_sha": sha}), kept, build(kept, "B3")


@dataclass(frozen=True)
class StaleDrop:
    """Stale generated tests dropped in a commit on the heal branch (``source``), and B3, its full build."""

    tests: list[str]
    files: dict[str, str | None]
    source: Source
    b3: BuildReport


def drop_stale_generated(source: Source, result: HealResult) -> StaleDrop | None:
    """The stale generated tests of a heal that did not heal (every test still failing is a regression in a
    generated test file) dropped in a commit on the heal branch, after the repairs so far, and B3 of it; None
    when there are none, or regenerating them is turned off."""
    if result.outcome is not HealOutcome.NOT_HEALED or not get_settings().heal.regenerate_stale:
        return None
    tests = stale_tests(result.checklist)
    if not tests:
        return None
    audit = _audit(source, result.stage)
    base = result.heal_commit_sha or source.commit_sha
    try:
        files = drop_stale(tests, Files(source.open(), base, is_generated_test_file).read)
    except (HealError, SyntaxError) as exc:
        audit.record("drop-stale", tests=tests, dropped=False, reason=str(exc).splitlines()[0])
        return None
    branch = branch_for(source.commit_sha, result.stage)
    sha = gitops.commit_files(source.open(), base, branch, files, drop_message(tests, result.stage, files))
    dropped = source_at(source, sha, branch)
    b3 = build(dropped, "B3")
    audit.record("drop-stale", tests=tests, files=sorted(files), sha=sha, b3=b3.status.value)
    return StaleDrop(tests, files, dropped, b3)


def regenerated_result(
    source: Source, result: HealResult, drop: StaleDrop, spec_id: str, generated: GeneratedTests | None,
    b2: BuildReport | None,
) -> HealResult:  # fmt: skip
    """The heal once stale generated tests were dropped and generated again (``generated`` None: nothing left to
    generate for). The drop's B3 passed and, when tests were generated, their B2 too: awaiting approval — always,
    it changes what the tests expect — with the heal branch at the regenerated tests. Else not healed, and the
    heal branch back where the repairs left it. The regression entries stay: the regression is still reported."""
    failed = (
        f"B3 of the drop {drop.b3.status.value}" if drop.b3.status is not BuildStatus.PASSED
        else "" if generated is None
        else f"no tests generated: {'; '.join(generated.notes)[:300]}" if generated.precheck is not BuildStatus.PASSED
        else f"B2 of the regenerated tests {b2.status.value}" if b2 is not None and b2.status is not BuildStatus.PASSED
        else "" if b2 is not None else "the regenerated tests were not built"
    )  # fmt: skip
    repo, branch = source.open(), branch_for(source.commit_sha, result.stage)
    head = (generated.commit_sha if generated is not None else drop.source.commit_sha) if not failed else ""
    _point_branch(repo, branch, head or result.heal_commit_sha)
    diff = gitops.diff(repo, source.commit_sha, head) if head else ""
    settings = get_settings()
    kb, audit = KnowledgeBase(open_store(settings.resolved_store_url(), settings)), _audit(source, result.stage)
    checklist = result.checklist.model_copy(deep=True)
    for attempt in attempts(source.repo_id, source.commit_sha, drop.tests, not failed, diff, failed):
        checks.mark(checklist, attempt.test_id, CheckStatus.REGRESSION, attempt=attempt)
        kb.record(attempt)
    regenerated = Regeneration(
        dropped=drop.tests, files=sorted(drop.files), drop_commit_sha=drop.source.commit_sha, drop_build=drop.b3,
        spec_id=spec_id, generated=generated, build=b2, passed=not failed,
    )  # fmt: skip
    audit.record(
        "regenerate", passed=not failed, reason=failed, spec=spec_id, sha=head,
        files=generated.files if generated else [], kept=[k.node_id for k in generated.kept] if generated else [],
    )  # fmt: skip
    update: dict[str, object] = {"checklist": checklist, "regenerated": regenerated}
    if not failed:
        update |= {
            "outcome": HealOutcome.AWAITING_APPROVAL, "branch_name": branch, "heal_commit_sha": head,
            "b3": b2 or drop.b3, "diff": diff,
        }  # fmt: skip
    return publish(source, result.model_copy(update=update), audit, kb)


def _point_branch(repo: pygit2.Repository, branch: str, sha: str) -> None:
    """``branch`` at ``sha`` (it only ever moves along the heal's own commits); deleted when ``sha`` is ''."""
    ref = f"refs/heads/{branch}"
    if sha:
        repo.references.create(ref, pygit2.Oid(hex=sha), force=True)
    elif ref in repo.references:
        repo.references.delete(ref)


def _audit(source: Source, stage: str) -> AuditTrail:
    settings = get_settings()
    return AuditTrail(open_store(settings.resolved_store_url(), settings), source.artefacts, source.commit_sha, stage)


def passed_with_the_repairs(checklist: Checklist, audit: AuditTrail) -> None:
    """Tests B3 passes without a repair of their own failed because of the ones repaired (a locale a broken
    test left active, a fixture it never tore down): they are healed too. B3 runs the whole suite on a commit
    whose only changes are gated test repairs, so a behaviour change still fails it."""
    for entry in checklist.entries:
        if entry.status in (CheckStatus.REGRESSION, CheckStatus.GAVE_UP):
            checks.mark(checklist, entry.test_id, CheckStatus.HEALED)
            audit.record("collateral", test=entry.test_id, reason="passed in B3 once the repaired tests ran")


def quarantine_flaky(source: Source, checklist: Checklist, audit: AuditTrail) -> None:
    """Re-run the failed tests on the same commit: one that passes now is flaky — quarantined, never healed."""
    failing = checks.still_failing(checklist)
    if not failing:
        return
    rerun = build(source, f"{checklist.stage}-rerun", select=failing)
    if rerun.status is BuildStatus.ERRORED:
        return
    for test_id in failing:
        if test_id not in rerun.failed_tests:
            checks.mark(checklist, test_id, CheckStatus.QUARANTINED, error="failed, then passed on the same commit")
            audit.record("quarantine", test=test_id, reason="flaky: failed, then passed on the same commit")


def changes_of(source: Source) -> CommitChanges:
    """What the failing commit changed against its first parent (a root commit changed nothing to heal by), with
    the new homes of names it took away found through the code index (indexed at the commit only when needed)."""
    repo = source.open()
    commit = repo.revparse_single(source.commit_sha).peel(pygit2.Commit)
    parent = str(commit.parent_ids[0]) if commit.parent_ids else source.commit_sha
    changes = commit_changes(Path(source.path), parent, source.commit_sha)
    lost = lost_names(repo, changes)
    if not lost:
        return changes
    with open_index(get_settings(), repo=source.repo_id, ref=source.commit_sha) as index:
        index.index(source.path, source.commit_sha, repo_id=source.repo_id)
        return with_moves(changes, index_moves(repo, lost, index.definitions_of))


def repair_rounds(
    source: Source, checklist: Checklist, healer: Healer, report: BuildReport, settings: Settings
) -> Source | None:
    """Repair, commit, re-run only what still fails; until all pass, nothing is left to try, or rounds run out."""
    failures = {f.node_id: f for f in report.failures}
    branch = branch_for(source.commit_sha, checklist.stage)
    tested: Source | None = None
    for round_no in range(1, settings.heal.max_rounds + 1):
        repairs = healer.repair(checklist, failures)
        if not repairs:
            break
        message = commit_message(checklist, [r.attempt for r in repairs])
        sha = gitops.commit_files(source.open(), source.commit_sha, branch, healer.files.changed, message)
        tested = source_at(source, sha, branch)
        rerun = build(tested, f"{checklist.stage}-H{round_no}", select=checks.still_failing(checklist))
        healer.judge(checklist, repairs, rerun)
        failures.update({f.node_id: f for f in rerun.failures})
        checks.save(open_store(settings.resolved_store_url(), settings), source.artefacts, checklist)
        if not checks.still_failing(checklist):
            break
    for test_id in checks.still_failing(checklist):
        checks.mark(checklist, test_id, CheckStatus.GAVE_UP)
    return tested


def publish(source: Source, result: HealResult, audit: AuditTrail, kb: KnowledgeBase) -> HealResult:
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    result = save_result(source, result)
    checks.save(store, source.artefacts, result.checklist)
    audit.record("outcome", outcome=result.outcome.value, branch=result.branch_name, sha=result.heal_commit_sha)
    create_markdown_artifact(
        markdown=audit.markdown(), key=artifact_key("heal-audit", result.stage), description="Audit trail"
    )
    create_markdown_artifact(markdown=kb.learned_markdown(), key="heal-learned", description="Learned repair methods")
    healed = sum(e.status is CheckStatus.HEALED for e in result.checklist.entries)
    events.emit(
        source.repo_id, source.commit_sha, "heal", result.outcome.value, stage=result.stage,
        healed=healed, tests=len(result.checklist.entries), branch=result.branch_name,
    )  # fmt: skip
    get_run_logger().info("heal %s of %s: %s (%d healed)", result.stage, source.label, result.outcome.value, healed)
    return result


def save_result(source: Source, result: HealResult) -> HealResult:
    """The result with its summary, stored (``…/heal/<stage>/result.json``) and shown as the heal artifact."""
    settings = get_settings()
    result = result.model_copy(update={"summary_md": heal_markdown(result)})
    open_store(settings.resolved_store_url(), settings).put_bytes(
        source.artefacts.heal_result(source.commit_sha, result.stage), result.model_dump_json(indent=2).encode()
    )
    create_markdown_artifact(markdown=result.summary_md, key=artifact_key("heal", result.stage), description="Heal")
    return result


def await_approval(source: Source, result: HealResult) -> HealResult:
    """Pause the run for a human's yes or no (the diff is the heal artifact); no answer keeps it awaiting."""
    settings = get_settings()
    if result.outcome is not HealOutcome.AWAITING_APPROVAL or settings.heal.approval_wait_sec <= 0:
        return result
    try:
        answer = pause_flow_run(
            wait_for_input=Approval, timeout=settings.heal.approval_wait_sec, key=f"heal-{result.commit_sha[:12]}"
        )
    except FlowPauseTimeout:
        return result  # nobody answered in time: the branch waits for review, the run says so
    if answer is None:
        return result
    outcome = HealOutcome.HEALED if answer.approve else HealOutcome.REJECTED
    store = open_store(settings.resolved_store_url(), settings)
    AuditTrail(store, source.artefacts, source.commit_sha, result.stage).record(
        "approval", approve=answer.approve, approver=answer.approver, comment=answer.comment
    )
    return save_result(source, result.model_copy(update={"outcome": outcome, "approver": answer.approver}))
