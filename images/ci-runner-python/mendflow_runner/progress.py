"""Progress lines on the job's stdout (stdlib only, like the rest of the job).

``MENDFLOW_PROGRESS {"done": 1, "total": 5, "item": "dependencies"}`` as each phase starts (``done`` phases are
over); while the tests run, ``{"done": 3, "total": 5, "item": "tests", "tests_done": 12, "tests_total": 40}``.
The trusted side (``mendflow.ci.job.PHASES``, ``mendflow.progress.parse_phase``) knows the phases and their
names; it reads only the numbers, and only from a line whose total is the number of phases it expects.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "MENDFLOW_PROGRESS "
PHASES = ("unpack", "dependencies", "lint", "tests", "coverage")
# A compiled language's runner (Go's) has a build step before lint: it calls ``use(COMPILED_PHASES)`` first.
COMPILED_PHASES = ("unpack", "dependencies", "build", "lint", "tests", "coverage")
_phases = PHASES


def use(phases: tuple[str, ...]) -> None:
    """The phases this runner announces (the trusted side expects its language's list: mendflow.ci.job)."""
    global _phases
    _phases = phases


POLL_SEC = 1.0  # at most one count line a second: a suite of 10 000 tests must not flood the job's output


def _print(fields: dict[str, object]) -> None:
    print(PREFIX + json.dumps(fields), flush=True)  # flushed: the launcher tails a file, not a terminal


def phase_started(name: str) -> None:
    _print({"done": _phases.index(name), "total": len(_phases), "item": name})


@contextmanager
def timed(durations: dict[str, float], name: str) -> Iterator[None]:
    """Announce phase ``name`` and record how long it took in ``durations`` (the report's)."""
    phase_started(name)
    start = time.monotonic()
    try:
        yield
    finally:
        durations[name] = time.monotonic() - start


def tests_counted(done: int, total: int) -> None:
    fields = {"done": _phases.index("tests"), "total": len(_phases), "item": "tests"}
    _print({**fields, "tests_done": done, "tests_total": total})


class JournalCount:
    """``(tests through, tests collected)`` from the pytest plugin's journal, read on from where it stopped.

    A test is through when its call phase reports, or when its setup fails or skips (no call follows).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.collected: int | None = None
        self.through: set[str] = set()

    def read(self) -> tuple[int, int] | None:
        """The count so far; None before collection is over."""
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return None
        complete = data[: data.rfind(b"\n") + 1]  # a line being written is read next time
        self.offset += len(complete)
        for line in complete.decode("utf-8", "replace").splitlines():
            self._take(line)
        if self.collected is None:
            return None
        return min(len(self.through), self.collected), self.collected

    def _take(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event.get("event") == "collected" and isinstance(event.get("count"), int):
            self.collected = event["count"]
        elif event.get("event") == "report" and _ends_test(event):
            self.through.add(str(event.get("nodeid")))


def _ends_test(event: dict[str, object]) -> bool:
    return event.get("when") == "call" or (event.get("when") == "setup" and event.get("outcome") != "passed")


class TestCounter:
    """While the suite runs, a thread reads the plugin's journal and prints the count when it moves."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, journal: Path, poll_sec: float = POLL_SEC) -> None:
        self.journal, self.poll_sec = JournalCount(journal), poll_sec
        self.last: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="test-counter", daemon=True)

    def __enter__(self) -> TestCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.tick()  # the final count, once the suite is over

    def tick(self) -> None:
        counted = self.journal.read()
        if counted is not None and counted != self.last:
            self.last = counted
            tests_counted(*counted)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_sec):
            self.tick()
