"""Flow ``ci_build``: the Build/CI Runner stage (seed 003) as a Prefect flow."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.events import emit_event

from mendflow.contracts import BuildReport, BuildStatus
from mendflow.render import build_markdown, coverage_rows
from mendflow.settings import get_settings
from tasks.build import (
    BuildErrored,
    SourceRef,
    finished_report,
    metrics_payload,
    retrying_build_attempt,
    snapshot_source,
)


def run_stage(source: SourceRef, stage: str, reuse: bool = False) -> BuildReport:
    """One build stage with retries for ERRORED only; returns the last attempt's report either way.

    With ``reuse``, a result an earlier run published for the same commit and stage is returned instead.
    """
    if reuse and (done := finished_report(source, stage)) is not None:
        get_run_logger().info("reusing %s of %s from %s", stage, source.commit_sha[:12], done.artefact_url)
        return done
    state = retrying_build_attempt(get_settings())(source, stage, return_state=True)
    try:
        return state.result()
    except BuildErrored as exc:
        return exc.report


def record(report: BuildReport) -> None:
    """Artifacts in the Prefect UI and the seed's metrics as an event."""
    key = f"build-{report.repo}-{report.stage}".lower().replace("_", "-").replace(".", "-")
    create_markdown_artifact(markdown=build_markdown(report), key=key, description="BuildReport")
    rows = coverage_rows(report)
    if rows:
        create_table_artifact(table=rows, key=f"{key}-coverage", description="Coverage by file")
    emit_event(
        event=f"mendflow.build.{report.status.value.lower()}",
        resource={
            "prefect.resource.id": f"mendflow.repo.{report.repo}",
            "mendflow.commit": report.commit_sha,
        },
        payload={"stage": report.stage, "attempt": report.attempt, **metrics_payload(report)},
    )


@flow(name="ci-build", log_prints=True)
def ci_build(repo: str, commit: str | None = None, branch: str | None = None, stage: str = "build") -> BuildReport:
    """Build ``commit`` of ``repo`` (a path or git URL) in a sandbox and publish its BuildReport.

    Args:
        repo: path of a local git repository or a clone URL.
        commit: sha, tag or branch to build; default the branch head or HEAD.
        branch: branch name recorded on the report (and built when no commit is given).
        stage: label in artefact keys and reports, e.g. 'B1', 'B2'.
    """
    source = snapshot_source(repo, commit, branch)
    report = run_stage(source, stage)
    record(report)
    logger = get_run_logger()
    log = logger.info if report.status is BuildStatus.PASSED else logger.warning
    log(
        "build %s: %s%s",
        report.stage,
        report.status.value,
        f" ({report.error_reason})" if report.error_reason else "",
    )
    return report
