"""A gate's flake check (``--runs``): the tests again, as the first run ran them, in the same job.

A test builder keeps a generated test only if it passes several runs. Running them here costs one test run each;
a job per run cost the whole job (unpack, dependencies, build, lint) every time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .config import JobConfig
from .report import Report


def repeat(cfg: JobConfig, rep: Report, run_again: Callable[[], None]) -> None:
    """Runs 2 to ``cfg.runs`` while the report says PASSED; ``run_again`` runs and judges the tests (coverage stays
    the first run's). The report then describes the last run made, and ``rep.runs`` says which that was."""
    if cfg.runs == 1:
        return
    started = time.monotonic()
    for n in range(2, cfg.runs + 1):
        if rep.status != "PASSED":
            break
        rep.runs = n
        run_again()
    rep.durations["reruns"] = time.monotonic() - started
