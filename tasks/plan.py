"""Test Planner stage as a Prefect task: BuildReport (+ plan) → TestSpec, with an offline fallback."""

from __future__ import annotations

import time
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE

from mendflow import __version__, events
from mendflow.contracts import BuildReport, TestSpec
from mendflow.errors import LLMError
from mendflow.keys import fingerprint
from mendflow.plan import plan_tests
from mendflow.settings import Settings, get_settings
from mendflow.snippets import SnippetSource
from mendflow.source import Source
from mendflow.store import open_store
from mendflow.store.reuse import reuse_or_run
from tasks.runs import run_llm


def plan_fingerprint(report: BuildReport, plan: dict[str, Any] | None, settings: Settings) -> str:
    """Everything that shapes a TestSpec: the build it reads, the change plan, the planning settings (the
    coverage threshold; the LLM endpoint, model and token budget when there is one; mendflow's version for the
    rest, constants such as the target cap)."""
    llm = (
        (settings.llm.base_url, settings.llm.model, settings.llm.token_budget_per_run) if settings.llm.enabled else None
    )
    return fingerprint(__version__, report.artefact_url, report.attempt, plan, settings.min_line_cov, llm)


@task(name="plan-tests", cache_policy=NO_CACHE)
def plan_tests_task(
    source: Source, report: BuildReport, plan: dict[str, Any] | None = None, index: SnippetSource | None = None
) -> TestSpec:
    """The commit's TestSpec (reused when planned before with the same inputs and settings), one event."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    started = time.perf_counter()
    key = source.artefacts.plan(source.commit_sha, plan_fingerprint(report, plan, settings))
    spec = reuse_or_run(store, key, TestSpec, lambda: _plan(source, report, plan, index, settings))
    latency_ms = round(1000 * (time.perf_counter() - started))
    events.emit(
        source.repo_id, source.commit_sha, "testplanner", "planned",
        spec_id=spec.id, testplanner_cases_total=len(spec.cases), tp_latency_ms=latency_ms,
        tp_llm_tokens=spec.llm_tokens, planner=spec.planner, targets=len(spec.targets),
    )  # fmt: skip
    create_table_artifact(
        table=[{"case": c.name, "kind": c.kind.value, "target": c.target_path, "goal": c.goal} for c in spec.cases],
        key="testspec-cases",
        description=f"TestSpec {spec.id}",
    )
    get_run_logger().info(
        "TestSpec %s: %d case(s), %d target(s), %s, %d ms",
        spec.id, len(spec.cases), len(spec.targets), spec.planner, latency_ms,
    )  # fmt: skip
    return spec


def _plan(
    source: Source, report: BuildReport, plan: dict[str, Any] | None, index: SnippetSource | None, settings: Settings
) -> TestSpec:
    """Plan with the run's LLM when configured; when it fails or the budget is spent, plan offline instead."""
    llm = run_llm(settings)
    try:
        return plan_tests(report, source.path, plan, settings, index, llm=llm, use_llm=llm is not None)
    except LLMError as exc:  # includes BudgetExceededError: offline planning costs no tokens
        get_run_logger().warning("LLM planning failed (%s); planning offline", exc.one_line())
        spec = plan_tests(report, source.path, plan, settings, index, use_llm=False)
        return spec.model_copy(update={"rationale_md": spec.rationale_md + f"\nLLM unavailable: {exc}\n"})
