"""Token accounting: what each stage spent, and a per-run cap that stops the next call before it is sent."""

from __future__ import annotations

import threading
from collections import defaultdict

from mendflow.errors import BudgetExceededError


def estimate_tokens(text: str) -> int:
    """~4 characters per token: the usual rule of thumb, good enough to refuse an oversized prompt early."""
    return max(1, len(text) // 4)


class TokenLedger:
    """Tokens spent in one run, by stage. Share one ledger between the stages of a run to cap the run."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._by_stage: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        with self._lock:
            return sum(self._by_stage.values())

    @property
    def by_stage(self) -> dict[str, int]:
        with self._lock:
            return dict(self._by_stage)

    def remaining(self) -> int:
        return max(0, self.budget - self.spent)

    def check(self, stage: str, upcoming: int = 0) -> None:
        """Refuse a call whose prompt alone would cross the cap."""
        spent = self.spent
        if spent + upcoming > self.budget:
            raise BudgetExceededError(
                f"LLM token budget exhausted in stage {stage!r}: {spent} spent, next prompt ~{upcoming}, "
                f"cap {self.budget}",
                hint="raise MENDFLOW_LLM__TOKEN_BUDGET_PER_RUN or run offline (no MENDFLOW_LLM__BASE_URL)",
            )

    def add(self, stage: str, tokens: int) -> None:
        """Record what a call cost; raises once the run has gone over its cap (the answer is not used)."""
        with self._lock:
            self._by_stage[stage] += tokens
            spent = sum(self._by_stage.values())
        if spent > self.budget:
            raise BudgetExceededError(
                f"LLM token budget exceeded in stage {stage!r}: {spent} spent of {self.budget}",
                hint="raise MENDFLOW_LLM__TOKEN_BUDGET_PER_RUN or run offline (no MENDFLOW_LLM__BASE_URL)",
            )


_RUN_LEDGERS: dict[str, TokenLedger] = {}
_RUN_LOCK = threading.Lock()
_MAX_RUNS = 256


def ledger_for_run(run_id: str, budget: int) -> TokenLedger:
    """The one ledger of a (flow) run: planner and builder tasks of the same run share its cap."""
    with _RUN_LOCK:
        if run_id not in _RUN_LEDGERS:
            if len(_RUN_LEDGERS) >= _MAX_RUNS:  # a long-lived worker: forget the oldest run
                del _RUN_LEDGERS[next(iter(_RUN_LEDGERS))]
            _RUN_LEDGERS[run_id] = TokenLedger(budget)
        return _RUN_LEDGERS[run_id]
