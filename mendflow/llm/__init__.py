"""OpenAI-compatible LLM access: one client wrapper, structured JSON answers, token accounting per run."""

from mendflow.llm.budget import TokenLedger, ledger_for_run
from mendflow.llm.client import LLMClient, client_from_settings

__all__ = ["LLMClient", "TokenLedger", "client_from_settings", "ledger_for_run"]
