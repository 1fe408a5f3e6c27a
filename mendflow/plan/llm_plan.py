"""The LLM half of the planner: seed 000 §3's prompt, JSON mode, answers validated against TestCase."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mendflow.contracts import CaseKind, CoverageTarget, TestCase
from mendflow.llm import LLMClient
from mendflow.plan.cases import MAX_CASES_PER_TARGET
from mendflow.plan.diff import ChangeSet

STAGE = "planner"

SYSTEM = f"""You are Test-Planner v1. You design unit tests that close coverage gaps in a Python repository.
For every target you get, enumerate at most {MAX_CASES_PER_TARGET} test cases, chosen among: the success path,
edge cases, the failure path (each exception the code raises, with the condition that triggers it),
concurrency (only when the code shares state across threads or tasks) and security (only when input reaches a
shell, SQL, eval, pickle, a file path or a template). Aim each case at lines that are never run.
Return ONE JSON object and nothing else:
{{"cases": [{{"name": "test_<function>_<what_it_checks>",
  "goal": "<one sentence: behaviour and expected result>",
  "kind": "success|edge|failure|concurrency|security", "target_path": "<a target ref exactly as given>",
  "steps": ["arrange: ...", "act: ...", "assert: ..."]}}],
 "rationale_md": "<short markdown: why these cases, which risks>"}}"""


class PlanDraft(BaseModel):
    """What the LLM must return; its cases are the TestSpec's own TestCase model (unknown keys refused)."""

    model_config = ConfigDict(extra="forbid")
    cases: list[TestCase] = Field(default_factory=list)
    rationale_md: str = ""


def _change_summary(plan: dict[str, Any] | None, change_set: ChangeSet) -> str:
    lines: list[str] = []
    for step in (plan or {}).get("steps", []) or []:
        if isinstance(step, dict):
            step = step.get("description") or step.get("title") or step.get("summary") or str(step)
        lines.append(f"- {step}")
    for key in ("summary", "goal", "title"):
        if isinstance((plan or {}).get(key), str):
            lines.insert(0, f"{key}: {plan[key]}")  # type: ignore[index]
    files = [f"{c.status} {c.path} (+{len(c.added_lines)} lines)" for c in change_set.files.values()]
    if files:
        lines.append(f"diff against {change_set.how} {(change_set.base_sha or '')[:12]}:")
        lines += [f"  {f}" for f in files[:30]]
    return "\n".join(lines) or "(no plan and no diff available)"


def _gaps(targets: list[CoverageTarget]) -> str:
    out = []
    for t in targets:
        missing = ", ".join(map(str, t.missing_lines[:40]))
        if t.missing_branches:
            missing += "; branches never taken: " + ", ".join(f"{a}->{b}" for a, b in t.missing_branches[:20])
        out.append(
            f"- {t.ref} (lines {t.start_line}-{t.end_line}, {t.line_pct:.1f}% covered, "
            f"priority {t.priority.value}): never run: {missing}; why: {'; '.join(t.reasons)}"
        )
    return "\n".join(out)


def build_messages(
    targets: list[CoverageTarget],
    snippets: dict[str, str],
    failed_tests: list[str],
    plan: dict[str, Any] | None,
    change_set: ChangeSet,
) -> list[dict[str, str]]:
    code = "\n\n".join(f"# {ref}\n{text}" for ref, text in snippets.items())
    failed = "\n".join(f"- {t}" for t in failed_tests[:30]) or "(none)"
    user = (
        f"CHANGE SUMMARY\n{_change_summary(plan, change_set)}\n\nCOVERAGE GAPS\n{_gaps(targets)}\n\n"
        f"FAILED TESTS\n{failed}\n\nCODE SNIPPETS\n{code}\n\nReturn JSON matching the schema."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def llm_cases(
    client: LLMClient, messages: list[dict[str, str]], targets: list[CoverageTarget]
) -> tuple[dict[str, list[TestCase]], str, list[str]]:
    """Cases by target ref (capped, deduplicated), the LLM's rationale, and notes on what was discarded."""
    draft = client.complete_json(STAGE, messages, PlanDraft)
    refs = {t.ref for t in targets}
    by_target: dict[str, list[TestCase]] = {ref: [] for ref in refs}
    notes: list[str] = []
    names: set[str] = set()
    for case in draft.cases:
        if case.target_path not in refs:
            notes.append(f"discarded LLM case {case.name!r}: unknown target {case.target_path!r}")
        elif len(by_target[case.target_path]) >= MAX_CASES_PER_TARGET:
            notes.append(f"discarded LLM case {case.name!r}: more than {MAX_CASES_PER_TARGET} for its target")
        elif case.name in names:
            notes.append(f"discarded LLM case {case.name!r}: duplicate name")
        else:
            by_target[case.target_path].append(
                case
                if case.steps
                else case.model_copy(update={"steps": [f"act: {case.goal}"], "kind": case.kind or CaseKind.SUCCESS})
            )
            names.add(case.name)
    return by_target, draft.rationale_md, notes
