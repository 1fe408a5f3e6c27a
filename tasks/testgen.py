"""Test Builder stage as a Prefect task: TestSpec → GeneratedTests (tests committed on agt/testbuilder/<id>)."""

from __future__ import annotations

import time
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from mendflow import __version__, events, snapshot
from mendflow.contracts import BuildStatus, GeneratedTests, TestSpec
from mendflow.errors import LLMError
from mendflow.keys import fingerprint
from mendflow.render import generated_tests_markdown
from mendflow.settings import Settings, get_settings
from mendflow.snippets import SnippetSource
from mendflow.source import Source
from mendflow.store import open_store
from mendflow.store.reuse import reuse_or_run
from mendflow.testgen import OnProgress, build_tests
from tasks.runs import run_llm


def testgen_fingerprint(settings: Settings) -> str:
    """The generation settings that shape GeneratedTests (the spec id covers the targets)."""
    llm = settings.llm.model if settings.llm.enabled else None
    return fingerprint(__version__, llm, settings.pynguin.model_dump(), settings.test_marker)


@task(name="build-tests", cache_policy=NO_CACHE)
def build_tests_task(
    source: Source, spec: TestSpec, index: SnippetSource | None = None, progress: OnProgress | None = None
) -> GeneratedTests:
    """Tests for ``spec`` (reused when generated before with the same settings and not ERRORED), one event."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    key = source.artefacts.generated(source.commit_sha, spec.id, testgen_fingerprint(settings))
    started = time.perf_counter()
    result = reuse_or_run(
        store, key, GeneratedTests, lambda: _generate(source, spec, index, settings, progress),
        valid=lambda g: g.precheck is not BuildStatus.ERRORED,
    )  # fmt: skip
    if result.commit_sha:
        files = snapshot.read_files(source.path, result.commit_sha, result.files)
        create_markdown_artifact(
            markdown=generated_tests_markdown(result, files),
            key="generated-tests",
            description=f"Tests generated for {spec.id}",
        )
    events.emit(
        source.repo_id, source.commit_sha, "testbuilder", result.precheck.value,
        spec_id=spec.id, testbuilder_new_tests=len(result.kept), tb_llm_tokens=result.llm_tokens,
        tb_dropped=len(result.dropped), testbuilder_selfcheck_failures=result.repair_rounds,
        generator=result.generator, branch=result.branch_name, commit_sha=result.commit_sha,
        tb_duration_sec=round(time.perf_counter() - started, 1),
    )  # fmt: skip
    get_run_logger().info(
        "GeneratedTests for %s: %s, %d kept, %d dropped (%s)",
        spec.id, result.precheck.value, len(result.kept), len(result.dropped), result.generator,
    )  # fmt: skip
    return result


def _generate(
    source: Source, spec: TestSpec, index: SnippetSource | None, settings: Settings, progress: OnProgress | None
) -> GeneratedTests:
    """LLM generation when configured (Pynguin offline otherwise, or when the LLM fails / the budget is spent)."""
    llm = run_llm(settings)
    common: dict[str, Any] = {"repo_id": source.repo_id, "on_progress": progress, "language": source.language}
    try:
        return build_tests(spec, source.path, settings, index, llm=llm, use_llm=llm is not None, **common)
    except LLMError as exc:
        get_run_logger().warning("LLM test generation failed (%s); generating with Pynguin", exc.one_line())
        result = build_tests(spec, source.path, settings, index, use_llm=False, **common)
        return result.model_copy(update={"notes": [f"LLM unavailable: {exc.one_line()}", *result.notes]})
