"""Test Builder stage as a Prefect task: TestSpec → GeneratedTests (tests committed on agt/testbuilder/<id>)."""

from __future__ import annotations

import itertools
import time
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from mendflow import __version__, events, snapshot
from mendflow import source as sources
from mendflow.contracts import BuildReport, BuildStatus, GeneratedTests, Language, TestSpec
from mendflow.errors import LLMError
from mendflow.gitops import commit_files
from mendflow.keys import fingerprint
from mendflow.llm import LLMClient
from mendflow.render import generated_tests_markdown
from mendflow.settings import Settings, get_settings
from mendflow.snippets import SnippetSource
from mendflow.source import Source
from mendflow.store import open_store
from mendflow.store.reuse import reuse_or_run
from mendflow.testgen import OnProgress, build_tests, polyglot
from mendflow.testgen.commit import branch_for
from tasks.ci import run_build_job
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
    if source.language is not Language.PYTHON:
        return _other_language(source, spec, settings, llm)
    common: dict[str, Any] = {"repo_id": source.repo_id, "on_progress": progress, "language": source.language}
    try:
        return build_tests(spec, source.path, settings, index, llm=llm, use_llm=llm is not None, **common)
    except LLMError as exc:
        get_run_logger().warning("LLM test generation failed (%s); generating with Pynguin", exc.one_line())
        result = build_tests(spec, source.path, settings, index, use_llm=False, **common)
        return result.model_copy(update={"notes": [f"LLM unavailable: {exc.one_line()}", *result.notes]})


def _other_language(source: Source, spec: TestSpec, settings: Settings, llm: LLMClient | None) -> GeneratedTests:
    """Go, TypeScript/JavaScript, Rust, Java: the LLM writes the tests and the language's own CI runner gates them
    (``mendflow.testgen.polyglot``); without an LLM the outcome says there is no offline generator."""
    if llm is None:
        return build_tests(spec, source.path, settings, language=source.language)
    repo = source.open()
    try:
        return polyglot.build_tests(spec, repo, source.language, llm, gates_for(source, spec, settings))
    except LLMError as exc:
        get_run_logger().warning("LLM test generation failed (%s)", exc.one_line())
        result = build_tests(spec, source.path, settings, language=source.language)
        return result.model_copy(update={"notes": [f"LLM unavailable: {exc.one_line()}", *result.notes]})
    finally:
        scratch = repo.branches.local.get(f"{branch_for(spec.id)}-gates")
        if scratch is not None:
            scratch.delete()  # the gates' commits: what passed is on the spec's own branch


def gates_for(source: Source, spec: TestSpec, settings: Settings) -> polyglot.GateRun:
    """The gates of one candidate set: the files committed on a scratch branch (under ``agt/``), then the
    language's CI runner on that commit with ``--select`` of the new tests, ``runs`` times in one job; the report,
    vetted like a build's."""
    store = open_store(settings.resolved_store_url(), settings)
    branch = f"{branch_for(spec.id)}-gates"
    rounds = itertools.count()  # a gates run per repair round: TG0, TG1

    def run(files: dict[str, str], ids: list[str], runs: int) -> BuildReport:
        sha = commit_files(source.open(), spec.parent_commit_sha, branch, files, f"mendflow: gates of {spec.id}\n")
        tested = sources.at(source, sha, branch, store, settings)
        return run_build_job(tested, f"TG{next(rounds)}", 1, store, settings, select=ids or None, runs=runs)

    return run
