"""What a run's tasks share, all Prefect plumbing: the run's id and name, its LLM client (one token budget per
run), its progress artifact, and the lock that keeps two runs from merging into one branch at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import cast
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.context import FlowRunContext, TaskRunContext
from prefect.exceptions import ObjectAlreadyExists

from mendflow import progress
from mendflow.llm import LLMClient, ledger_for_run
from mendflow.render import artifact_key
from mendflow.settings import Settings
from mendflow.source import Source


def run_id() -> str:
    flow_ctx = FlowRunContext.get()
    if flow_ctx and flow_ctx.flow_run:
        return str(flow_ctx.flow_run.id)
    task_ctx = TaskRunContext.get()
    return str(task_ctx.task_run.id) if task_ctx else "no-run"


def run_llm(settings: Settings) -> LLMClient | None:
    """The LLM client of this flow run, charged to the run's ledger; None when mendflow runs offline."""
    if not settings.llm.enabled:
        return None
    return LLMClient(settings.llm, ledger_for_run(run_id(), settings.llm.token_budget_per_run))


def name_run(source: Source) -> None:
    """Rename the flow run ``owner/name@abc1234`` once the source is resolved (the parameters only hold a path)."""
    ctx = FlowRunContext.get()
    if ctx and ctx.flow_run:
        with get_client(sync_client=True) as client:
            client.update_flow_run(ctx.flow_run.id, name=source.label)


# What the pipeline runs once its progress has reached a percentage (flows/pipeline.py sets these marks).
PIPELINE_STAGES = ((0.0, "B1: build"), (25.0, "plan"), (35.0, "tests: generate"), (75.0, "B2: build"), (95.0, "merge"))


class Progress:
    """The run's progress artifact (0 to 100 %), moved by each stage and, during generation, per module.

    Each move is also reported to ``mendflow.progress``, where the CLI running the flow in-process listens.
    """

    def __init__(self, description: str, stages: tuple[tuple[float, str], ...] = PIPELINE_STAGES) -> None:
        self.stages = stages
        # Prefect's sync_compatible signature says "or a coroutine"; called from a sync flow it is the id.
        self.id = cast(UUID, create_progress_artifact(progress=0.0, description=description))

    def set(self, percent: float, stage: str | None = None, detail: str = "") -> None:
        percent = max(0.0, min(100.0, percent))
        update_progress_artifact(self.id, percent)
        progress.report(stage or self.stage_at(percent), percent, 100.0, detail)

    def span(self, start: float, end: float) -> Callable[[int, int], None]:
        """A ``(done, total)`` modules callback that moves the artifact from ``start`` to ``end`` percent.

        It may be called from a launcher's output thread while the job runs.
        """
        stage = self.stage_at(start)

        def report(done: int, total: int) -> None:
            self.set(start + (end - start) * (done / total if total else 1.0), stage, f"{done}/{total} modules")

        return report

    def stage_at(self, percent: float) -> str:
        """The stage running once ``percent`` is reached; "done" at 100."""
        if percent >= 100.0:
            return "done"
        return next((name for mark, name in reversed(self.stages) if mark <= percent), "")


@contextmanager
def branch_lock(source: Source) -> Iterator[None]:
    """One run at a time may merge into ``source.branch`` of ``source.repo_id`` (a Prefect global limit of 1)."""
    name = artifact_key("mendflow-merge", source.repo_id, source.branch or "detached")
    with get_client(sync_client=True) as client, suppress(ObjectAlreadyExists):  # a concurrent run made it
        client.upsert_global_concurrency_limit_by_name(name, limit=1)
    with concurrency(name, occupy=1, strict=True):
        yield
