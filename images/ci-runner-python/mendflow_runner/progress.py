"""A progress line on the job's stdout as each build phase starts (stdlib only, like the rest of the job).

``MENDFLOW_PROGRESS {"done": 1, "total": 5, "item": "dependencies"}``: ``done`` phases are over. The trusted
side (``mendflow.ci.job.PHASES``) knows the phases and their names; it reads only the two numbers, and only
from a line whose total is the number of phases it expects.
"""

from __future__ import annotations

import json

PREFIX = "MENDFLOW_PROGRESS "
PHASES = ("unpack", "dependencies", "lint", "tests", "coverage")


def phase_started(name: str) -> None:
    fields = {"done": PHASES.index(name), "total": len(PHASES), "item": name}
    print(PREFIX + json.dumps(fields), flush=True)  # flushed: the launcher tails a file, not a terminal
