"""Test Planner stage as a Prefect task: BuildReport (+ plan) → TestSpec, with an offline fallback."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from mendflow.contracts import BuildReport, TestSpec
from mendflow.errors import LLMError
from mendflow.planner import plan_tests
from mendflow.planner.snippets import SnippetSource
from mendflow.settings import get_settings
from tasks.llm_run import run_llm


@task(name="plan-tests", cache_policy=NO_CACHE)
def plan_tests_task(
    report: BuildReport,
    repo: str | Path,
    plan: dict[str, Any] | None = None,
    index: SnippetSource | None = None,
) -> TestSpec:
    """Plan with the run's LLM when configured; when it fails or the budget is spent, plan offline instead."""
    settings = get_settings()
    logger = get_run_logger()
    started = time.perf_counter()
    llm = run_llm(settings)
    try:
        spec = plan_tests(report, repo, plan, settings, index, llm=llm, use_llm=llm is not None)
    except LLMError as exc:  # includes BudgetExceededError: offline planning costs no tokens
        logger.warning("LLM planning failed (%s); planning offline", exc.one_line())
        spec = plan_tests(report, repo, plan, settings, index, use_llm=False)
        spec = spec.model_copy(update={"rationale_md": spec.rationale_md + f"\nLLM unavailable: {exc}\n"})
    latency_ms = round(1000 * (time.perf_counter() - started))
    emit_event(
        event="mendflow.testplanner.planned",
        resource={
            "prefect.resource.id": f"mendflow.repo.{report.repo}",
            "mendflow.commit": report.commit_sha,
        },
        payload={
            "spec_id": spec.id,
            "testplanner_cases_total": len(spec.cases),
            "tp_latency_ms": latency_ms,
            "tp_llm_tokens": spec.llm_tokens,
            "planner": spec.planner,
            "targets": len(spec.targets),
        },
    )
    logger.info(
        "TestSpec %s: %d case(s), %d target(s), %s, %d ms",
        spec.id,
        len(spec.cases),
        len(spec.targets),
        spec.planner,
        latency_ms,
    )
    return spec
