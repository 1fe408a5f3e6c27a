"""Build/CI Runner stage (seed 003): snapshot → launch a sandboxed job → collect → publish.

The tasks here are trusted: they hold the store credentials and hand the job only URLs.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from prefect import Task, task
from prefect.context import TaskRunContext
from pydantic import BaseModel, ValidationError

from mendflow import snapshot
from mendflow.contracts import BuildMetrics, BuildReport, BuildStatus, FailReason
from mendflow.errors import MendflowError
from mendflow.launcher import get_launcher
from mendflow.launcher.base import JobResult, JobSpec, JobState
from mendflow.settings import Settings, get_settings
from mendflow.store import open_store
from mendflow.store.base import ArtefactStore, artefact_prefix

# Published in this order; report.json goes last and is the commit marker of an attempt.
ARTEFACTS = ("coverage.json", "junit.xml", "runner.log")
REPORT = "report.json"


class SourceRef(BaseModel):
    """A commit frozen as a tarball in the store: the only way source reaches a job."""

    location: str
    repo: str
    commit_sha: str
    branch: str
    archive_key: str


class BuildErrored(MendflowError):
    """Raised by an attempt that ERRORED so Prefect retries it with the seed's back-off."""

    def __init__(self, report: BuildReport) -> None:
        super().__init__(report.error_reason or "build errored")
        self.report = report

    def __reduce__(self) -> tuple[type[BuildErrored], tuple[BuildReport]]:
        # Prefect may pickle a task's exception; rebuild it from the report, not from the message.
        return (BuildErrored, (self.report,))


@task(name="snapshot-source")
def snapshot_source(location: str, commit: str | None = None, branch: str | None = None) -> SourceRef:
    settings = get_settings()
    repo = snapshot.resolve_repo(location)
    sha, resolved_branch = snapshot.resolve_commit(repo, commit or branch)
    name = snapshot.repo_name(repo)
    key = f"{name}/{sha}/source.tar.gz"
    store = open_store(settings.resolved_store_url(), settings)
    store.check()
    if not store.exists(key):  # content-addressed by commit: a retry or re-run reuses it
        store.put_bytes(key, snapshot.archive(repo, sha))
    return SourceRef(location=location, repo=name, commit_sha=sha, branch=branch or resolved_branch, archive_key=key)


def job_spec(
    source: SourceRef, stage: str, attempt: int, staging: str, store: ArtefactStore, settings: Settings
) -> JobSpec:
    env = {
        "MENDFLOW_JOB_REPO": source.repo,
        "MENDFLOW_JOB_COMMIT": source.commit_sha,
        "MENDFLOW_JOB_BRANCH": source.branch,
        "MENDFLOW_JOB_STAGE": stage,
        "MENDFLOW_JOB_ATTEMPT": str(attempt),
        "MENDFLOW_JOB_TEST_MARKER": settings.test_marker,
        "MENDFLOW_JOB_TIMEOUT_SEC": str(settings.build_timeout_sec),
    }
    return JobSpec(
        name=f"build-{stage.lower()}-{source.commit_sha[:8]}-{attempt}",
        image="ci-runner-python",
        command=[
            "python",
            "-m",
            "mendflow_runner",
            "--source",
            "{workspace}/in/source.tar.gz",
            "--out",
            "{workspace}/out",
        ],
        env=env,
        cpu_limit=settings.sandbox.cpu_limit,
        memory_limit_mb=settings.sandbox.memory_limit_mb,
        timeout_sec=settings.build_timeout_sec,
        inputs={"source.tar.gz": store.download_url(source.archive_key)},
        outputs={name: store.upload_url(f"{staging}/{name}") for name in (*ARTEFACTS, REPORT)},
        labels={"repo": source.repo, "commit": source.commit_sha, "stage": stage, "attempt": str(attempt)},
    )


_JOB_FAILURES = {
    JobState.TIMED_OUT: FailReason.TIMEOUT,
    JobState.OOM_KILLED: FailReason.OOM,
    JobState.ERROR: FailReason.INFRASTRUCTURE,
    JobState.FAILED: FailReason.RUNNER_CRASH,
    JobState.SUCCEEDED: FailReason.RUNNER_CRASH,
}


def errored_report(
    source: SourceRef, stage: str, attempt: int, reason: FailReason, why: str, duration: float
) -> BuildReport:
    return BuildReport(
        repo=source.repo,
        commit_sha=source.commit_sha,
        branch_name=source.branch,
        stage=stage,
        attempt=attempt,
        status=BuildStatus.ERRORED,
        fail_reason=reason,
        error_reason=why,
        durations={"job": duration},
        metrics=BuildMetrics(
            ci_build_duration=duration,
            ci_tests_passed_total=0,
            ci_coverage_line_pct=None,
            ci_fail_reason=reason,
        ),
        finished_at=datetime.now(UTC),
    )


def collect_report(
    store: ArtefactStore, staging: str, result: JobResult, source: SourceRef, stage: str, attempt: int
) -> BuildReport:
    """The job's own report when it wrote a valid one, else an ERRORED report that says why."""
    key = f"{staging}/{REPORT}"
    if result.state in (JobState.TIMED_OUT, JobState.OOM_KILLED, JobState.ERROR) or not store.exists(key):
        why = result.reason or f"the job ended ({result.state}) without writing {REPORT}"
        if result.state not in (JobState.TIMED_OUT, JobState.OOM_KILLED, JobState.ERROR) and result.log_tail:
            why = f"{why}; last output: {result.log_tail.strip().splitlines()[-1][:300]}"
        return errored_report(source, stage, attempt, _JOB_FAILURES[result.state], why, result.duration_sec)
    try:
        report = BuildReport.model_validate_json(store.get_bytes(key))
    except ValidationError as exc:
        why = f"the job's {REPORT} breaks the BuildReport contract: {exc.errors()[0]['msg']}"
        return errored_report(source, stage, attempt, FailReason.RUNNER_CRASH, why, result.duration_sec)
    if report.commit_sha != source.commit_sha:
        why = f"the job reported commit {report.commit_sha[:12]}, expected {source.commit_sha[:12]}"
        return errored_report(source, stage, attempt, FailReason.RUNNER_CRASH, why, result.duration_sec)
    return report.model_copy(update={"stage": stage, "attempt": attempt, "branch_name": source.branch})


def publish(store: ArtefactStore, staging: str, prefix: str, report: BuildReport) -> BuildReport:
    """Move the staged artefacts to their final keys; the report is written last, as the commit."""
    for name in ARTEFACTS:
        if store.exists(f"{staging}/{name}"):
            store.put_bytes(f"{prefix}/{name}", store.get_bytes(f"{staging}/{name}"))
    report = report.model_copy(update={"artefact_url": store.url_for(prefix)})
    store.put_bytes(f"{prefix}/{REPORT}", report.model_dump_json(indent=2).encode())
    store.delete_prefix(staging)
    return report


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


@task(name="build-attempt", retry_condition_fn=_retry_only_errored)
def build_attempt(source: SourceRef, stage: str) -> BuildReport:
    settings = get_settings()
    attempt = _attempt_number()
    store = open_store(settings.resolved_store_url(), settings)
    prefix = artefact_prefix(source.repo, source.commit_sha, stage, attempt)
    staging = f"{prefix}/.staging/{uuid.uuid4().hex}"
    spec = job_spec(source, stage, attempt, staging, store, settings)
    result = get_launcher(settings).run(spec)
    report = publish(store, staging, prefix, collect_report(store, staging, result, source, stage, attempt))
    # Bad input fails the same way every time, so only other ERRORED reports are worth a retry.
    if report.status is BuildStatus.ERRORED and report.fail_reason is not FailReason.BAD_INPUT:
        raise BuildErrored(report)
    return report


def retrying_build_attempt(settings: Settings) -> Task[[SourceRef, str], BuildReport]:
    """The attempt task with the configured back-off: attempt 1 immediate, then the seed's +90 s, +5 min."""
    delays = [float(d) for d in settings.retry_delays_sec[1:]]
    return build_attempt.with_options(retries=len(delays), retry_delay_seconds=delays or 0)


def metrics_payload(report: BuildReport) -> dict[str, object]:
    return json.loads(report.metrics.model_dump_json()) if report.metrics else {}


def finished_report(source: SourceRef, stage: str) -> BuildReport | None:
    """An earlier run's published report for this commit and stage, if it reached a result (not ERRORED)."""
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    keys = [k for k in store.list(f"{source.repo}/{source.commit_sha}/{stage}") if k.endswith(f"/{REPORT}")]
    if not keys:
        return None
    latest = max(keys, key=lambda k: int(k.split("/")[-2]) if k.split("/")[-2].isdigit() else 0)
    report = BuildReport.model_validate_json(store.get_bytes(latest))
    return None if report.status is BuildStatus.ERRORED else report
