"""The CI job: its spec (the source tarball in, report and artefacts out) and how its outputs are read back.

Everything the job uploads is untrusted: the report is parsed with its contract and checked against what the
trusted side asked for (commit, the selected node ids: ``vet_report``), and a job that wrote nothing usable
becomes an ERRORED report saying why.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import PurePosixPath

from pydantic import ValidationError

from mendflow import progress
from mendflow.contracts import BuildMetrics, BuildReport, BuildStatus, FailReason, Language, TestFailure
from mendflow.errors import MendflowError, TooLargeError
from mendflow.gitversion import SCM_VERSION
from mendflow.jobcode import RUNNER_IMAGES, runner_command
from mendflow.keys import HANDOFF, REPORT
from mendflow.launcher.base import Handoff, JobResult, JobSpec, JobState, OnOutput
from mendflow.settings import LimitsSettings, Settings
from mendflow.source import Source
from mendflow.store.base import ArtefactStore

log = logging.getLogger(__name__)
MIB = 1024 * 1024

# Published in this order; report.json goes last and is the commit marker of an attempt.
ARTEFACTS = ("coverage.json", "junit.xml", "runner.log")
# The runner's phases in order (images/ci-runner-python/mendflow_runner/progress.py prints as each starts,
# and during "tests" how many tests of how many collected are through).
PHASES = ("unpack", "dependencies", "lint", "tests", "coverage")
# A compiled language's runner has a build step before lint (mendflow_runner.progress.COMPILED_PHASES).
COMPILED_PHASES = ("unpack", "dependencies", "build", "lint", "tests", "coverage")


def phases_of(language: Language) -> tuple[str, ...]:
    return PHASES if language is Language.PYTHON else COMPILED_PHASES


OUT = "{workspace}/out"
MAX_FAILURES = 200  # failures detailed in a report (the runner's cap; failed_tests stays complete)
TRACEBACK_MAX = 4096  # bytes of one failure's traceback text

_JOB_FAILURES = {
    JobState.TIMED_OUT: FailReason.TIMEOUT,
    JobState.OOM_KILLED: FailReason.OOM,
    JobState.ERROR: FailReason.INFRASTRUCTURE,
    JobState.FAILED: FailReason.RUNNER_CRASH,
    JobState.SUCCEEDED: FailReason.RUNNER_CRASH,
}
_ENDED_BY_LAUNCHER = (JobState.TIMED_OUT, JobState.OOM_KILLED, JobState.ERROR)


class BuildErrored(MendflowError):
    """Raised by an attempt that ERRORED so Prefect retries it with the seed's back-off."""

    def __init__(self, report: BuildReport) -> None:
        super().__init__(report.error_reason or "build errored")
        self.report = report

    def __reduce__(self) -> tuple[type[BuildErrored], tuple[BuildReport]]:
        # Prefect may pickle a task's exception; rebuild it from the report, not from the message.
        return (BuildErrored, (self.report,))


def job_spec(
    source: Source,
    stage: str,
    attempt: int,
    staging: str,
    store: ArtefactStore,
    settings: Settings,
    select: list[str] | None = None,
    lint_only: bool = False,
    runs: int = 1,
) -> JobSpec:
    """The build job of ``source``; with ``select``, it runs exactly those pytest node ids (and still lints);
    with ``lint_only``, it installs and lints and runs no test (a parent commit's lint baseline); with ``runs``,
    it runs the tests that many times, stopping at the first run that does not pass."""
    env = {
        "MENDFLOW_JOB_REPO": source.repo_id,
        "MENDFLOW_JOB_COMMIT": source.commit_sha,
        "MENDFLOW_JOB_BRANCH": source.branch,
        "MENDFLOW_JOB_STAGE": stage,
        "MENDFLOW_JOB_ATTEMPT": str(attempt),
        "MENDFLOW_JOB_TEST_MARKER": settings.test_marker,
        "MENDFLOW_JOB_TIMEOUT_SEC": str(settings.build_timeout_sec),
    }
    if source.version:
        env[SCM_VERSION] = source.version
    if select:
        env["MENDFLOW_JOB_SELECT"] = json.dumps(select)
    if lint_only:
        env["MENDFLOW_JOB_LINT_ONLY"] = "1"
    if runs > 1:
        env["MENDFLOW_JOB_RUNS"] = str(runs)
    image = RUNNER_IMAGES[source.language]
    env.update(settings.languages.job_env(source.language))
    return JobSpec(
        name=f"build-{stage.lower()}-{source.commit_sha[:8]}-{attempt}",
        image=image,
        command=runner_command(image),
        env=env,
        cpu_limit=settings.sandbox.cpu_limit,
        memory_limit_mb=settings.sandbox.memory_limit_mb,
        timeout_sec=settings.build_timeout_sec,
        inputs={"source.tar.gz": store.download_url(source.archive_key)},
        outputs={name: store.upload_url(f"{staging}/{name}") for name in (*ARTEFACTS, REPORT)},
        labels={"repo": source.repo_id, "commit": source.commit_sha, "stage": stage, "attempt": str(attempt)},
        cache_scope=source.repo_id,
        handoff=Handoff.at(store, f"{staging}/{HANDOFF}"),  # deleted with the staging prefix
    )


def errored_report(
    source: Source, stage: str, attempt: int, reason: FailReason, why: str, duration: float
) -> BuildReport:
    return BuildReport(
        repo=source.repo_id,
        commit_sha=source.commit_sha,
        branch_name=source.branch,
        stage=stage,
        attempt=attempt,
        language=source.language,
        status=BuildStatus.ERRORED,
        fail_reason=reason,
        error_reason=why,
        durations={"job": duration},
        metrics=BuildMetrics(
            ci_build_duration=duration, ci_tests_passed_total=0, ci_coverage_line_pct=None, ci_fail_reason=reason
        ),
        finished_at=datetime.now(UTC),
    )


def collect_report(
    store: ArtefactStore,
    staging: str,
    result: JobResult,
    source: Source,
    stage: str,
    attempt: int,
    max_bytes: int,
    select: list[str] | None = None,
    runs: int = 1,
) -> BuildReport:
    """The job's own report when it wrote a valid one (vetted: ``vet_report``), else an ERRORED report that
    says why."""
    key = f"{staging}/{REPORT}"
    if result.state in _ENDED_BY_LAUNCHER or not store.exists(key):
        why = result.reason or f"the job ended ({result.state}) without writing {REPORT}"
        if result.state not in _ENDED_BY_LAUNCHER and result.log_tail:
            why = f"{why}; last output: {result.log_tail.strip().splitlines()[-1][:300]}"
        return errored_report(source, stage, attempt, _JOB_FAILURES[result.state], why, result.duration_sec)
    try:
        report = BuildReport.model_validate_json(store.get_capped(key, max_bytes))
    except TooLargeError as exc:  # the repository's doing: a retry would write it again
        return errored_report(source, stage, attempt, FailReason.BAD_INPUT, exc.one_line(), result.duration_sec)
    except ValidationError as exc:
        why = f"the job's {REPORT} breaks the BuildReport contract: {exc.errors()[0]['msg']}"
        return errored_report(source, stage, attempt, FailReason.RUNNER_CRASH, why, result.duration_sec)
    if report.commit_sha != source.commit_sha:
        why = f"the job reported commit {report.commit_sha[:12]}, expected {source.commit_sha[:12]}"
        return errored_report(source, stage, attempt, FailReason.RUNNER_CRASH, why, result.duration_sec)
    if report.status is BuildStatus.PASSED and report.runs != runs:
        why = f"the job reported {report.runs} passing test run(s), {runs} were asked for"
        return errored_report(source, stage, attempt, FailReason.RUNNER_CRASH, why, result.duration_sec)
    # What the trusted side knows wins over what the job says about it.
    report = report.model_copy(
        update={
            "repo": source.repo_id,
            "stage": stage,
            "attempt": attempt,
            "branch_name": source.branch,
            "language": source.language,
        }
    )
    return vet_report(report, select)


def in_selection(node_id: str, select: list[str]) -> bool:
    """Whether a failed ``node_id`` can come from running ``select``: a selected id itself, a test under a
    selected file, class or parametrized function, or a collection error on the way to a selected test (its
    file, a package above it, a ``conftest.py`` of a directory above it)."""
    for chosen in select:
        if node_id == chosen or node_id.startswith((f"{chosen}::", f"{chosen}[")):
            return True
        if "::" not in node_id and _collected_on_the_way(node_id, chosen.split("::", 1)[0]):
            return True
    return False


def _collected_on_the_way(path: str, chosen: str) -> bool:
    node, target = PurePosixPath(path), PurePosixPath(chosen)
    if node == target or (node != PurePosixPath(".") and target.is_relative_to(node)):
        return True
    return node.name == "conftest.py" and target.is_relative_to(node.parent)


def vet_report(report: BuildReport, select: list[str] | None = None) -> BuildReport:
    """The job's failures as far as the trusted side can check them.

    With a selection, a failed test the job was not asked to run is dropped, and ``selected`` is what was
    asked for. Failure details are kept only for failed tests, once each, in their order, at most
    ``MAX_FAILURES`` with tracebacks cut to ``TRACEBACK_MAX`` bytes.
    """
    failed = list(dict.fromkeys(report.failed_tests))
    if select:
        failed = [t for t in failed if in_selection(t, select)]
    by_node: dict[str, TestFailure] = {}
    for f in report.failures:
        by_node.setdefault(f.node_id, f)
    failures = [_capped(by_node[t]) for t in failed if t in by_node][:MAX_FAILURES]
    if dropped := len(report.failed_tests) - len(failed):
        log.warning("dropped %d failed test(s) the job reported outside what it was asked to run", dropped)
    return report.model_copy(update={"failed_tests": failed, "failures": failures, "selected": list(select or [])})


def _capped(failure: TestFailure) -> TestFailure:
    data = failure.traceback.encode()
    if len(data) <= TRACEBACK_MAX:
        return failure
    return failure.model_copy(update={"traceback": data[-TRACEBACK_MAX:].decode("utf-8", "ignore")})


def publish(
    store: ArtefactStore, staging: str, prefix: str, report: BuildReport, limits: LimitsSettings
) -> BuildReport:
    """Move the staged artefacts to their final keys; the report is written last, as the commit.

    An artefact over its limit (a job may write anything) is not kept, and a log over its limit keeps its tail;
    the run's log says which and why.
    """
    for name in ARTEFACTS:
        staged = f"{staging}/{name}"
        if not store.exists(staged):
            continue
        max_mb = limits.job_log_mb if name.endswith(".log") else limits.job_output_mb
        if (size := store.size(staged)) <= max_mb * MIB:
            store.copy(staged, f"{prefix}/{name}")
        elif name.endswith(".log"):
            log.warning("keeping the tail of %s: %d bytes, over the %d MiB a log may take", name, size, max_mb)
            store.put_bytes(f"{prefix}/{name}", _log_tail(store, staged, size, max_mb * MIB))
        else:
            log.warning("not keeping %s: %d bytes, over the %d MiB a job may return", name, size, max_mb)
    url = store.url_for(prefix)
    # A section built in this job (a one-language report's own) shares its artefacts; a combined report's
    # sections keep their own jobs' URLs.
    sections = [
        s if s.artefact_url or s.status is None else s.model_copy(update={"artefact_url": url}) for s in report.sections
    ]
    report = report.model_copy(update={"artefact_url": url, "sections": sections})
    store.put_bytes(f"{prefix}/{REPORT}", report.model_dump_json(indent=2).encode())
    store.delete_prefix(staging)
    return report


def _log_tail(store: ArtefactStore, key: str, size: int, limit: int) -> bytes:
    """A log's last bytes within ``limit``, after a line saying how much was left out: a suite's verbose output
    (cockroachdb/apd 3.2.3's `go test -json`, 74 MB) ends with what went wrong, which the tail keeps."""
    tail = store.get_tail(key, limit - _NOTE_ROOM)
    said = f"[mendflow: the first {size - len(tail)} of {size} bytes left out: a log may take {limit // MIB} MiB]\n"
    return said.encode() + tail


_NOTE_ROOM = 128  # bytes of a log's limit left for the line saying what of it was left out


def metrics_payload(report: BuildReport) -> dict[str, object]:
    return report.metrics.model_dump(mode="json") if report.metrics else {}


def latest_report(store: ArtefactStore, source: Source, stage: str) -> BuildReport | None:
    """An earlier run's published report for this commit and stage, if it reached a result (not ERRORED) of
    the whole suite (a run of selected tests only says nothing about the others)."""
    sha, keys = source.commit_sha, source.artefacts
    found = ((keys.report_attempt(k, sha), k) for k in store.list(keys.builds(sha, stage)))
    attempts = {at[1]: k for at, k in found if at is not None and at[0] == stage}
    if not attempts:
        return None
    report = BuildReport.model_validate_json(store.get_bytes(attempts[max(attempts)]))
    return None if report.status is BuildStatus.ERRORED or report.selected else report


class PhaseProgress:
    """A launcher ``on_output`` turning the runner's phase lines into ``mendflow.progress`` phases and counts.

    The job's output is untrusted: a line is read only through ``progress.parse_phase`` (the phase's name is
    ours, the numbers are bounded), a phase never moves backward and a count only within the tests phase.
    """

    def __init__(self, stage: str, phases: tuple[str, ...] = PHASES) -> None:
        self.stage, self.phases = stage, phases
        self.phase = 0  # the runner starts in "unpack": the bar starts there without a move
        self.counted: tuple[int, int] | None = None

    def __call__(self, line: str) -> None:
        claim = progress.parse_phase(line, self.phases)
        if claim is None or claim.done < self.phase:
            return
        if claim.done > self.phase:
            self.phase, self.counted = claim.done, None
            progress.phase(self.stage, claim.done, len(self.phases), self.phases[claim.done])
        if claim.count is not None and claim.count != self.counted:
            self.counted = claim.count
            progress.count(self.stage, *claim.count, self.phases[claim.done])


def phase_progress(stage: str, language: Language = Language.PYTHON) -> OnOutput:
    """The ``on_output`` of a build job of ``stage`` (B1, B2, build) in ``language``'s image: its phases as progress."""
    return PhaseProgress(stage, phases_of(language))
