"""How a pipeline run ends: its final state (named after the outcome), the summary a person reads first, the
coverage comparison and the run's last event. The flow decides *which* outcome; this module records it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from prefect import Flow, get_client, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.client.schemas.objects import FlowRun
from prefect.context import FlowRunContext
from prefect.exceptions import MissingResult
from prefect.results import ResultRecord
from prefect.runtime import flow_run
from prefect.states import Cancelled, Completed, Failed, State
from prefect.utilities.asyncutils import run_coro_as_sync
from pydantic import BaseModel, Field

from mendflow import events
from mendflow.alerts import COVERAGE_DROP_MAX_POINTS
from mendflow.contracts import PipelineOutcome, PipelineResult, Regression
from mendflow.errors import ContractError
from mendflow.render import coverage_comparison_rows, pipeline_markdown
from mendflow.source import Source
from tasks.runs import Progress

# The name of the run's final state says the outcome in the UI and to `mendflow run --deployment`, which reads
# it back: only the state travels from a worker to a CI job, the returned PipelineResult stays with the worker.
STATE_NAMES = {
    PipelineOutcome.MERGED: "Merged",
    PipelineOutcome.READY: "Ready",
    PipelineOutcome.NOTHING_TO_ADD: "Nothing to add",
    PipelineOutcome.NO_COVERAGE: "No coverage",
    PipelineOutcome.NO_TESTS_KEPT: "No tests kept",
    PipelineOutcome.REGRESSION: "Regression",
    PipelineOutcome.HEALED: "Healed",
    PipelineOutcome.AWAITING_APPROVAL: "Awaiting approval",
}


# What Prefect's crash message says for a SIGINT (KeyboardInterrupt) or SIGTERM (TerminationSignal).
_SIGNAL_WORDS = ("interrupt signal", "termination signal")


class ChangePlan(BaseModel):
    """Seed 002's ``Plan``: what the change meant to do, for the planner's CHANGE SUMMARY."""

    steps: list[str] = Field(default_factory=list)
    rationale: str = ""
    affected_paths: list[str] = Field(default_factory=list)
    target_branch: str | None = None


def flow_run_name() -> str:
    """The name a run starts with, before its source is resolved: ``<repo>@<commit or branch>``."""
    params = flow_run.parameters
    repo = str(params.get("repo_id") or params.get("repo") or "repo").rstrip("/").rsplit("/", 1)[-1]
    return f"{repo}@{(params.get('commit') or params.get('branch') or 'HEAD')[:12]}"


@dataclass
class Run:
    """One pipeline run: its source, the result it builds up, its progress artifact and clock."""

    source: Source
    result: PipelineResult
    progress: Progress = field(default_factory=lambda: Progress("B1 → plan → generate → B2 → merge"))
    started: float = field(default_factory=time.monotonic)


def finish(
    run: Run, outcome: PipelineOutcome = PipelineOutcome.REGRESSION, regression: Regression | None = None
) -> State[PipelineResult]:
    """The run's final state: Failed for a regression (a CI job gating on the run must fail), else Completed."""
    result = run.result.model_copy(update={"outcome": outcome, "regression": regression})
    result.coverage_delta_pct = coverage_delta(run.source, result)
    run.progress.set(100)
    create_markdown_artifact(markdown=pipeline_markdown(result), key="pipeline-result", description="Pipeline result")
    events.emit(
        run.source.repo_id, run.source.commit_sha, "pipeline", outcome.value,
        outcome=outcome.value, coverage_delta_pct=result.coverage_delta_pct,
        duration_sec=round(time.monotonic() - run.started, 1),
    )  # fmt: skip
    get_run_logger().info("pipeline %s: %s", run.source.label, outcome.value)
    name = STATE_NAMES[outcome]
    if regression is not None:
        reason = regression.error_reason or regression.fail_reason or "build failed"
        return Failed(name=name, message=f"regression {regression.id}: {reason}", data=persisted(result))
    return Completed(name=name, message=pipeline_summary(result), data=persisted(result))


def persisted(result: PipelineResult) -> PipelineResult | ResultRecord[PipelineResult]:
    """``result`` written to the run's Prefect result storage, so that the final state the API holds points to it.

    A client whose request to set the final state timed out retries it; the server, which took the first,
    answers the retry with its own copy of the state (Prefect's duplicate-transition rule), and that copy carries
    the result only where it was persisted. A loaded server (one CI run took 63 s to answer) then left a merged
    run whose caller read ``MissingResult``. Only this result is persisted: the flow's ``persist_result`` would
    make every task of the run persist its own as well. Storage that cannot be written leaves the result in
    memory, as before, with a warning.
    """
    context = FlowRunContext.get()
    if context is None:
        return result
    record = context.result_store.create_result_record(result)
    try:  # the async write: the sync one fails on the flow's metadata storage (NullFileSystem takes no `_sync`)
        run_coro_as_sync(context.result_store.apersist_result_record(record))
    except Exception as exc:  # any storage block's error, as Prefect's own write of a returned state warns on
        get_run_logger().warning("the pipeline's result was not persisted (%s): only this process can read it", exc)
    return record


def coverage_delta(source: Source, result: PipelineResult) -> float | None:
    """B2 (B3 when failed generated tests were dropped) minus B1 line coverage in points, as a table artifact;
    a drop past the seed's limit is an event."""
    b1, b2 = result.b1, result.b3 or result.b2
    if b2 is None or b1.coverage is None or b2.coverage is None:
        return None
    create_table_artifact(
        table=coverage_comparison_rows(b1, b2), key="coverage-b1-b2", description="Line coverage by file, B1 → B2"
    )
    delta = round(b2.coverage.line_pct - b1.coverage.line_pct, 2)
    if delta < -COVERAGE_DROP_MAX_POINTS:
        events.emit(
            source.repo_id, source.commit_sha, "coverage", "drop",
            b1=b1.coverage.line_pct, b2=b2.coverage.line_pct, delta=delta,
        )  # fmt: skip
    return delta


def pipeline_summary(result: PipelineResult) -> str:
    kept = f"{len(result.generated.kept)} tests kept" if result.generated else "no tests generated"
    delta = "" if result.coverage_delta_pct is None else f", coverage {result.coverage_delta_pct:+.1f} points"
    merged = f", merged as {result.merged_sha[:12]}" if result.merged_sha else ""
    return f"{result.outcome.value}: {kept}{delta}{merged}"


def cancel_when_interrupted(flow: Flow[..., Any], flow_run: FlowRun, state: State[Any]) -> None:
    """``on_crashed`` hook: a run stopped by SIGINT/SIGTERM was cancelled by its user, not crashed.

    Prefect calls a signal a crash; the launcher has already stopped the run's jobs on the way out (its
    ``finally``), so the run is recorded Cancelled, which is what the person who pressed Ctrl-C did.
    """
    if not any(word in (state.message or "") for word in _SIGNAL_WORDS):
        return
    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run.id, Cancelled(message=state.message), force=True)


def pipeline_result(state: State[Any]) -> PipelineResult:
    """The PipelineResult of a finished run (``return_state=True``), a regression's included; a crash re-raises."""
    try:
        data = state.result(raise_on_failure=False)
    except MissingResult as exc:  # its storage could not be written (warned) nor read here
        raise ContractError(f"pipeline run ended {state.name} but its result cannot be read here: {exc}") from exc
    if isinstance(data, PipelineResult):
        return data
    if isinstance(data, BaseException):
        raise data
    raise ContractError(f"pipeline run ended {state.name} without a PipelineResult: {data!r}")
