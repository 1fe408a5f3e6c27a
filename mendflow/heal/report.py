"""How a healing reads to people: the heal commit's message, the result's summary and its decision."""

from __future__ import annotations

from mendflow.contracts import (
    MENDFLOW_BRANCH_PREFIX,
    BuildReport,
    BuildStatus,
    Checklist,
    CheckStatus,
    Coverage,
    HealAttempt,
    HealOutcome,
    HealResult,
)
from mendflow.heal.checklist import checklist_markdown

COVERAGE_SLACK_POINTS = 0.01  # rounding in the report, not a real loss


def branch_for(commit_sha: str, stage: str) -> str:
    return f"{MENDFLOW_BRANCH_PREFIX}healer/{commit_sha[:12]}-{stage.lower()}"


def proposal_branch(commit_sha: str, stage: str) -> str:
    """Where a source fix waits for review: apart from the heal branch, so merging one never takes the other."""
    return f"{branch_for(commit_sha, stage)}-proposal"


def commit_message(checklist: Checklist, pending: list[HealAttempt]) -> str:
    """Seed 004's audit in the commit itself: each fix in it, the test it is for and the method that made it."""
    lines = [f"mendflow heal: repair tests broken by {checklist.commit_sha[:12]}", ""]
    whys = {e.test_id: e.assessment.change for e in checklist.entries if e.assessment and e.assessment.change}
    for attempt in [a for e in checklist.entries for a in e.history] + pending:
        if attempt.diff and not attempt.gate:  # applied: the commit carries its edit
            why = whys.get(attempt.test_id, attempt.category.value)
            lines.append(f"- {attempt.test_id}: {attempt.healer} ({attempt.method.value}) — {why}")
    return "\n".join(lines) + "\n"


def outcome_of(checklist: Checklist, failed: BuildReport, b3: BuildReport | None, needs_approval: bool) -> HealOutcome:
    """Healed only when every failure was repaired (flaky ones quarantined), the full build B3 passed and
    its coverage is not below the failed build's (a heal never lowers coverage)."""
    statuses = {e.status for e in checklist.entries}
    if statuses - {CheckStatus.HEALED, CheckStatus.QUARANTINED} or b3 is None:
        return HealOutcome.NOT_HEALED
    if b3.status is not BuildStatus.PASSED and not only_quarantined_fail(checklist, b3):
        return HealOutcome.NOT_HEALED
    if lowers_coverage(failed, b3):
        return HealOutcome.NOT_HEALED
    return HealOutcome.AWAITING_APPROVAL if needs_approval else HealOutcome.HEALED


def lowers_coverage(failed: BuildReport, b3: BuildReport) -> bool:
    """Whether B3 covers less of the code the failed build measured. A file only B3 measured (the new home of a
    moved function, never imported while the tests failed) is no loss; a file B3 no longer measures counts as
    wholly missed."""
    before, after = failed.coverage, b3.coverage
    if before is None or after is None:
        return False
    if before.files:
        pairs = [(_pct(before, before, branches), _pct(before, after, branches)) for branches in (False, True)]
    else:
        pairs = [(before.line_pct, after.line_pct), (before.branch_pct, after.branch_pct)]
    return any(old is not None and new is not None and new < old - COVERAGE_SLACK_POINTS for old, new in pairs)


def _pct(base: Coverage, measured: Coverage, branches: bool) -> float | None:
    """Line (or branch) coverage in percent of the files ``base`` measured, as ``measured`` saw them; a file it
    did not measure is all missed."""
    total = covered = 0
    for f0 in base.files:
        f = measured.file(f0.path)
        if f is None:
            total += f0.num_branches if branches else f0.statements
            continue
        total += f.num_branches if branches else f.statements
        covered += (f.num_branches - len(f.missing_branches)) if branches else (f.statements - len(f.missing_lines))
    return round(100 * covered / total, 2) if total else None


def only_quarantined_fail(checklist: Checklist, b3: BuildReport) -> bool:
    """A flaky test that failed again in B3 does not undo the healing: it is reported as quarantined."""
    quarantined = {e.test_id for e in checklist.entries if e.status is CheckStatus.QUARANTINED}
    return b3.status is BuildStatus.FAILED and bool(b3.failed_tests) and set(b3.failed_tests) <= quarantined


def heal_markdown(result: HealResult) -> str:
    head = f"# Heal {result.stage} of `{result.commit_sha[:12]}`: **{result.outcome.value}**\n\n"
    where = f"Branch `{result.branch_name}` at `{result.heal_commit_sha[:12]}`.\n\n" if result.heal_commit_sha else ""
    b3 = f"B3: {result.b3.status.value}.\n\n" if result.b3 else ""
    verdict = "Rejected" if result.outcome is HealOutcome.REJECTED else "Approved"
    approver = f"{verdict} by {result.approver}.\n\n" if result.approver else ""
    diff = f"\n\n```diff\n{result.diff[:20000]}\n```\n" if result.diff else ""
    body = checklist_markdown(result.checklist) + regeneration_markdown(result) + diff + proposal_markdown(result)
    return head + where + b3 + approver + body


def regeneration_markdown(result: HealResult) -> str:
    """Stale generated tests dropped and generated again: what went, what came, and why a human must say yes."""
    r = result.regenerated
    if r is None:
        return ""
    dropped = "".join(f"- `{t}`\n" for t in r.dropped)
    kept = r.generated.kept if r.generated else []
    fresh = "".join(f"- `{k.node_id}` ({k.target})\n" for k in kept) or "- none: nothing left to generate for\n"
    builds = f"B3 of the drop `{r.drop_commit_sha[:12]}`: {r.drop_build.status.value if r.drop_build else 'not run'}"
    builds += f"; B2 of the regenerated tests: {r.build.status.value}" if r.build else ""
    verdict = (
        "The tests now expect what the code does after this commit: merged only with a human's approval; the "
        "regression stays reported."
        if r.passed
        else "Not regenerated: the builds did not pass, the heal branch is as the repairs left it."
    )
    return (
        f"\n\n## Stale generated tests, generated again from the current code\n\n{verdict}\n\n"
        f"Dropped (they pinned behaviour the commit changed):\n\n{dropped}\nGenerated:\n\n{fresh}\n{builds}.\n"
    )


def proposal_markdown(result: HealResult) -> str:
    p = result.proposal
    if p is None:
        return ""
    tried = len(p.passes) + len(p.still_failing)
    return (
        f"\n\n## A fix to the code, proposed for review (never merged by mendflow)\n\nBranch `{p.branch_name}` at "
        f"`{p.commit_sha[:12]}` edits {', '.join(f'`{f}`' for f in p.files)}: {len(p.passes)} of {tried} "
        f"regression test(s) pass with it. {p.reasoning}\n\n```diff\n{p.diff[:20000]}\n```\n"
    )
