"""Build/CI Runner stage as Prefect tasks: resolve the source once, then one sandboxed build per stage.

Retries are Prefect's: an ERRORED attempt (infrastructure, timeout, OOM) raises ``BuildErrored`` and is
retried with the seed's back-off; FAILED is a result, and bad input fails the same way every time.
"""

from __future__ import annotations

import uuid

from prefect import Task, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import TaskRunContext

from mendflow import events
from mendflow import source as sources
from mendflow.ci import combine, lint_baseline
from mendflow.ci.job import (
    BuildErrored,
    collect_report,
    job_spec,
    latest_report,
    metrics_payload,
    phase_progress,
    publish,
)
from mendflow.contracts import BuildReport, BuildStatus, FailReason, Language, LanguageSection
from mendflow.launcher import get_launcher
from mendflow.render import artifact_key, build_markdown, coverage_rows
from mendflow.settings import Settings, get_settings
from mendflow.source import Source
from mendflow.store import open_store
from mendflow.store.base import ArtefactStore


@task(name="resolve-source", cache_policy=NO_CACHE)
def resolve_source(repo: str, commit: str | None, branch: str | None, repo_id: str | None = None) -> Source:
    """The run's one resolution of its repository and commit (one fetch for a URL)."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    store.check()
    return sources.resolve(repo, commit, branch, store, settings, repo_id)


@task(name="source-at", cache_policy=NO_CACHE)
def source_at(source: Source, sha: str, branch: str) -> Source:
    """Another commit of the run's repository (the generated tests' commit), from the local repository."""
    settings = get_settings()
    return sources.at(source, sha, branch, open_store(settings.resolved_store_url(), settings), settings)


def _attempt_number() -> int:
    ctx = TaskRunContext.get()
    return ctx.task_run.run_count if ctx and ctx.task_run.run_count else 1


def _retry_only_errored(task: object, task_run: object, state: object) -> bool:
    """Prefect retry_condition_fn: FAILED builds are results, only ERRORED ones are worth a retry."""
    try:
        state.result()  # type: ignore[attr-defined]
    except BuildErrored:
        return True
    except Exception:
        return False
    return False


@task(name="build-attempt", retry_condition_fn=_retry_only_errored, cache_policy=NO_CACHE)
def build_attempt(source: Source, stage: str, select: list[str] | None = None) -> BuildReport:
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    report = run_build_job(source, stage, _attempt_number(), store, settings, select)
    # Only what may pass when tried again is retried (seed 003's back-off); a deterministic failure ends at once.
    if (
        report.status is BuildStatus.ERRORED
        and report.fail_reason is not FailReason.BAD_INPUT
        and report.transient is not False
    ):
        raise BuildErrored(report)
    return report


def run_build_job(
    source: Source,
    stage: str,
    attempt: int,
    store: ArtefactStore,
    settings: Settings,
    select: list[str] | None = None,
    lint_only: bool = False,
    runs: int = 1,
) -> BuildReport:
    """One build job, its report vetted, its lint judged against the parent's, and published."""
    prefix = source.artefacts.build(source.commit_sha, stage, attempt)
    staging = source.artefacts.staging(source.commit_sha, stage, attempt, uuid.uuid4().hex)
    spec = job_spec(source, stage, attempt, staging, store, settings, select, lint_only, runs)
    result = get_launcher(settings).run(spec, phase_progress(stage, source.language))
    max_bytes = settings.limits.job_output_mb * 1024 * 1024
    collected = collect_report(store, staging, result, source, stage, attempt, max_bytes, select, runs)
    if collected.lint_errors and not lint_only:
        collected = judge_lint(source, collected, store, settings)
    collected = collected.model_copy(update={"sections": [combine.section_of(collected)]})
    return publish(store, staging, prefix, collected, settings.limits)


def judge_lint(source: Source, report: BuildReport, store: ArtefactStore, settings: Settings) -> BuildReport:
    """``report`` with only the findings its commit brought in ``lint_errors`` (see ``lint_baseline``)."""
    parent = sources.parent(source, store, settings)
    if parent is not None and source.language is not parent.language:
        if source.language not in parent.languages:  # the commit brought the language: all its findings are new
            return lint_baseline.judged(report, [], "")
        parent = sources.as_language(parent, source.language)
    if parent is None:
        if sources.is_root(source):
            return lint_baseline.judged(report, report.lint_errors, lint_baseline.FIRST_ANALYSIS)
        return lint_baseline.judged(report, [], "")  # a parent this clone lacks: nothing shows a finding is old
    done = lint_baseline.published_lint(store, parent.artefacts, parent.commit_sha)
    if done is not None and not _linted(done, parent.language):
        done = None  # another language's build of the parent: it says nothing of this language's findings
    if done is None:
        stage = lint_baseline.LINT_ONLY_STAGE
        if len(parent.languages) > 1 and parent.language is not parent.languages[0]:
            stage = f"{stage}-{parent.language}"
        done = run_build_job(parent, stage, 1, store, settings, lint_only=True)
    if done.status is BuildStatus.ERRORED:
        get_run_logger().warning(
            "no lint baseline: linting %s errored (%s); every finding counts as new", parent.label, done.error_reason
        )
        return lint_baseline.judged(report, [], "")
    return lint_baseline.judged(report, lint_baseline.every_finding(done), f"{parent.commit_sha} ({done.stage})")


def _linted(report: BuildReport, language: Language) -> bool:
    """Whether ``report`` (a single language's, or a combined one) linted ``language``."""
    if report.language is language and not report.sections:
        return True
    return any(s.language is language and s.status is not None for s in report.sections)


def retrying_build_attempt(settings: Settings) -> Task[[Source, str, list[str] | None], BuildReport]:
    """The attempt task with the configured back-off: attempt 1 immediate, then the seed's +90 s, +5 min."""
    delays = [float(d) for d in settings.retry_delays_sec[1:]]
    return build_attempt.with_options(
        retries=len(delays), retry_delay_seconds=delays or 0, timeout_seconds=settings.build_timeout_sec + 300
    )


def build(source: Source, stage: str, reuse: bool = False, select: list[str] | None = None) -> BuildReport:
    """One build stage, retried for ERRORED only; the last attempt's report either way, recorded once.

    With ``reuse``, a result an earlier run published for the same commit and stage is returned instead
    (the published report is the cache: see docs/architecture.md, "Reuse of finished stages"); never for a
    run of selected tests, and a selected run is never reused for the whole suite.
    With ``select`` (pytest node ids), the job runs exactly those tests, no marker, and still lints; the
    report's ``selected`` is ``select`` and its failed tests are only those the selection can produce.
    """
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    if reuse and not select and (done := latest_report(store, source, stage)) is not None:
        get_run_logger().info("reusing %s of %s from %s", stage, source.label, done.artefact_url)
        return done
    jobs, skipped = language_plan(source, select)
    if len(jobs) == 1:
        only, share = jobs[0]
        report = combine.combine([_attempted(only, stage, share, settings)], skipped)
    else:
        # Several languages: one job each, one after the other (docs/architecture.md, "Several languages"),
        # each under its own stage label; the combination is published as the stage's report.
        parts = [_attempted(one, f"{stage}-{one.language}", share, settings) for one, share in jobs]
        joined = combine.combine(parts, skipped).model_copy(update={"stage": stage})
        prefix = source.artefacts.build(source.commit_sha, stage, joined.attempt)
        staging = source.artefacts.staging(source.commit_sha, stage, joined.attempt, uuid.uuid4().hex)
        report = publish(store, staging, prefix, joined, settings.limits)
    record(source, report)
    return report


def _attempted(source: Source, stage: str, select: list[str] | None, settings: Settings) -> BuildReport:
    state = retrying_build_attempt(settings)(source, stage, select or None, return_state=True)
    try:
        report: BuildReport = state.result()
    except BuildErrored as exc:
        report = exc.report
    return report


def language_plan(
    source: Source, select: list[str] | None = None
) -> tuple[list[tuple[Source, list[str] | None]], list[LanguageSection]]:
    """The jobs a build runs (``source`` as each of its languages, with its share of ``select``) and the sections
    of the languages it does not build (none of their tests selected)."""
    if len(source.languages) <= 1:
        return [(source, select)], []
    if not select:
        return [(sources.as_language(source, lang), None) for lang in source.languages], []
    shares = combine.split_selection(select, source.languages)
    skipped = [combine.not_selected(lang) for lang in source.languages if lang not in shares]
    return [(sources.as_language(source, lang), share) for lang, share in shares.items()], skipped


def record(source: Source, report: BuildReport) -> None:
    """The report as artifacts in the Prefect UI, and the stage's one event with the seed's metrics."""
    key = artifact_key("build", source.repo_id, report.stage)
    create_markdown_artifact(markdown=build_markdown(report), key=key, description="BuildReport")
    if rows := coverage_rows(report):
        create_table_artifact(table=rows, key=f"{key}-coverage", description="Coverage by file")
    events.emit(
        source.repo_id, source.commit_sha, "build", report.status.value,
        stage=report.stage, attempt=report.attempt, url=report.artefact_url, **metrics_payload(report),
    )  # fmt: skip
    logger = get_run_logger()
    log = logger.info if report.status is BuildStatus.PASSED else logger.warning
    reason = f" ({report.error_reason})" if report.error_reason else ""
    log("%s %s of %s: %s%s", report.stage, report.attempt, source.label, report.status.value, reason)
