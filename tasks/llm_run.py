"""What the planner and builder tasks share: the run's LLM client (one token budget per flow run)."""

from __future__ import annotations

from prefect.context import FlowRunContext, TaskRunContext

from mendflow.llm import LLMClient, ledger_for_run
from mendflow.settings import Settings


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
