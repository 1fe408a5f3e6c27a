"""Test Builder stage as a Prefect task: TestSpec → GeneratedTests (tests committed on agt/testbuilder/<id>)."""

from __future__ import annotations

from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from mendflow.builder import build_tests
from mendflow.contracts import GeneratedTests, TestSpec
from mendflow.errors import LLMError
from mendflow.planner.snippets import SnippetSource
from mendflow.settings import get_settings
from tasks.llm_run import run_llm


@task(name="build-tests", cache_policy=NO_CACHE)
def build_tests_task(spec: TestSpec, repo: str | Path, index: SnippetSource | None = None) -> GeneratedTests:
    """LLM generation when configured (Pynguin offline otherwise, or when the LLM fails / the budget is spent)."""
    settings = get_settings()
    logger = get_run_logger()
    llm = run_llm(settings)
    try:
        result = build_tests(spec, repo, settings, index, llm=llm, use_llm=llm is not None)
    except LLMError as exc:
        logger.warning("LLM test generation failed (%s); generating with Pynguin", exc.one_line())
        result = build_tests(spec, repo, settings, index, use_llm=False)
        result = result.model_copy(update={"notes": [f"LLM unavailable: {exc.one_line()}", *result.notes]})
    emit_event(
        event=f"mendflow.testbuilder.{result.precheck.value.lower()}",
        resource={
            "prefect.resource.id": f"mendflow.repo.{spec.repo or 'repo'}",
            "mendflow.commit": spec.parent_commit_sha,
        },
        payload={
            "spec_id": spec.id,
            "testbuilder_new_tests": len(result.kept),
            "tb_llm_tokens": result.llm_tokens,
            "tb_dropped": len(result.dropped),
            "generator": result.generator,
            "branch": result.branch_name,
            "commit_sha": result.commit_sha,
        },
    )
    logger.info(
        "GeneratedTests for %s: %s, %d kept, %d dropped (%s)",
        spec.id,
        result.precheck.value,
        len(result.kept),
        len(result.dropped),
        result.generator,
    )
    return result
