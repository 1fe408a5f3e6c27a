"""plan_tests: a green build's coverage + the change → a TestSpec (seed 000 §3, issue 6 §2)."""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import Any

from mendflow import snapshot
from mendflow.contracts import BuildReport, CoverageTarget, Priority, TestCase, TestSpec
from mendflow.errors import InputError
from mendflow.llm import LLMClient
from mendflow.plan import cases as offline
from mendflow.plan.analysis import FunctionInfo, functions_in
from mendflow.plan.diff import ChangeSet, changes, read_at
from mendflow.plan.llm_plan import STAGE, build_messages, llm_cases
from mendflow.plan.targets import MAX_TARGETS, find_targets
from mendflow.settings import Settings, get_settings
from mendflow.snippets import SnippetSource, snippet

log = logging.getLogger(__name__)
PLANNER_SNIPPET_RADIUS = 5


def spec_id(commit_sha: str, targets: list[CoverageTarget]) -> str:
    """Stable for the same commit and targets, so re-planning and re-building never duplicate work."""
    digest = hashlib.sha256("\n".join(sorted(t.ref for t in targets)).encode()).hexdigest()[:8]
    return f"ts-{commit_sha[:12]}-{digest}"


def _rationale(
    targets: list[CoverageTarget],
    change_set: ChangeSet,
    report: BuildReport,
    min_cov: float,
    cases: list[TestCase],
    extra: list[str],
) -> str:
    high = sum(t.priority is Priority.HIGH for t in targets)
    base = f"`{change_set.base_sha[:12]}` ({change_set.how})" if change_set.base_sha else change_set.how
    lines = [
        f"## Test plan for `{report.commit_sha[:12]}`",
        f"{len(targets)} target(s) below {min_cov:.0f}% line coverage ({high} high priority), "
        f"{len(cases)} case(s). Diff base: {base}.",
        "",
        "| target | priority | line % | why |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| `{t.ref}` | {t.priority.value} | {t.line_pct:.1f} | {'; '.join(t.reasons)} |" for t in targets]
    if report.failed_tests:
        lines += ["", f"Failed tests in the build: {', '.join(report.failed_tests[:10])}"]
    return "\n".join([*lines, "", *extra]).strip() + "\n"


def _infos(sources: dict[str, str]) -> dict[str, dict[str, FunctionInfo]]:
    return {path: functions_in(text) for path, text in sources.items()}


def plan_tests(
    report: BuildReport,
    repo_path: str | Path,
    plan: dict[str, Any] | None = None,
    settings: Settings | None = None,
    index: SnippetSource | None = None,
    *,
    llm: LLMClient | None = None,
    use_llm: bool | None = None,
    target_branch: str | None = None,
    max_targets: int = MAX_TARGETS,
) -> TestSpec:
    """Plan tests for the gaps of ``report``; uses ``llm`` (or one from settings) when there is one, else ast.

    ``use_llm=False`` forces offline planning; ``target_branch`` (or ``plan["target_branch"]``) picks the diff
    base (merge-base with it), default main/master, else the parent commit.

    Raises InputError when the report has no coverage, CommitNotFoundError when the repository lacks the
    commit, LLMError/BudgetExceededError when the LLM fails (callers may fall back to offline planning).
    """
    started = time.perf_counter()
    settings = settings or get_settings()
    if report.coverage is None:
        raise InputError(
            f"the build report of {report.commit_sha[:12]} has no coverage data",
            hint="plan from a build that ran the tests with coverage (a PASSED B1 report)",
        )
    repo = snapshot.resolve_repo(str(repo_path), settings)
    change_set = changes(repo, report.commit_sha, target_branch or (plan or {}).get("target_branch"))
    sources = {f.path: read_at(repo, report.commit_sha, f.path) for f in report.coverage.files}
    targets = find_targets(report.coverage, sources, change_set, settings.min_line_cov, max_targets)
    infos = _infos({t.path: sources[t.path] for t in targets})
    by_target = {t.ref: offline.offline_cases(infos[t.path].get(t.symbol), t) for t in targets}
    if use_llm is False:
        llm = None
    elif llm is None and settings.llm.enabled:
        llm = LLMClient(settings.llm)
    mode, tokens, extra = "offline", 0, []
    if llm is not None and targets:
        before = llm.ledger.by_stage.get(STAGE, 0)
        snippets = {
            t.ref: snippet(t.path, t.start_line, t.end_line, PLANNER_SNIPPET_RADIUS, sources[t.path], index)
            for t in targets
        }
        messages = build_messages(targets, snippets, report.failed_tests, plan, change_set)
        from_llm, rationale, notes = llm_cases(llm, messages, targets)
        for ref, got in from_llm.items():
            if got:
                by_target[ref] = got
        mode, tokens = "llm", llm.ledger.by_stage.get(STAGE, 0) - before
        extra = ([rationale] if rationale else []) + [f"- {n}" for n in notes]
    all_cases = [c for t in targets for c in by_target[t.ref]]
    spec = TestSpec(
        id=spec_id(report.commit_sha, targets),
        parent_commit_sha=report.commit_sha,
        repo=report.repo,
        cases=all_cases,
        targets=targets,
        min_line_coverage=settings.min_line_cov,
        rationale_md=_rationale(targets, change_set, report, settings.min_line_cov, all_cases, extra),
        estimated_tokens=offline.estimated_tokens(all_cases),
        planner=mode,
        llm_tokens=tokens,
    )
    log.info(
        "planned %d case(s) for %d target(s) in %.2fs (%s)",
        len(all_cases),
        len(targets),
        time.perf_counter() - started,
        mode,
    )
    return spec
