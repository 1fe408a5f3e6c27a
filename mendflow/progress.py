"""Process-local progress: stages and jobs report here, whoever shows progress listens (the CLI's display).

The flow runs in the CLI's process (``mendflow run`` / ``mendflow build``), so a registry of callbacks is the
whole transport: ``tasks/runs.py:Progress`` reports the pipeline's stage and percentage, the launchers report
each line a job prints. Nothing is kept; with no listener a report costs a lock and an empty loop.

Listeners are called on the reporting thread, which is often a launcher's output thread, not the main one.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeGuard

log = logging.getLogger(__name__)

# The in-job test builder prints ``MENDFLOW_PROGRESS {"done": 2, "total": 5, "item": "calc.core"}`` when a
# module is done; images/ci-runner-python/mendflow_testgen/progress.py spells the same prefix (stdlib only).
LINE_PREFIX = "MENDFLOW_PROGRESS "
DETAIL_CHARS = 300
MAX_PROGRESS_LINE = 1024  # a real progress line is under 300 characters; a longer one is not read at all
MAX_COUNT = 1_000_000  # more tests than this in one suite is a claim, not a count


class Kind(StrEnum):
    STAGE = "stage"  # a stage's measured progress: done of total (the pipeline: percent)
    PHASE = "phase"  # a build job's phase began: ``done`` phases of ``total`` are over, ``detail`` its name
    COUNT = "count"  # items within the current phase: ``done`` tests of ``total`` ran, ``detail`` the phase
    OUTPUT = "output"  # a line a job printed: no measure, the job's latest words


@dataclass(frozen=True)
class Update:
    kind: Kind
    stage: str  # "tests: generate", or a job's stage label ("B1", "testbuilder")
    done: float = 0.0
    total: float = 0.0
    detail: str = ""  # "3/5 modules", or the job's line (printable, cut to DETAIL_CHARS)


Listener = Callable[[Update], None]

_lock = threading.Lock()
_listeners: list[Listener] = []


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` with every update from now on; returns the function that stops it."""
    with _lock:
        _listeners.append(listener)

    def stop() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return stop


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    stop = listen(listener)
    try:
        yield
    finally:
        stop()


def report(stage: str, done: float, total: float, detail: str = "") -> None:
    """A stage moved: ``done`` of ``total`` (the pipeline reports percent, done of 100)."""
    _publish(Update(Kind.STAGE, stage, done, total, detail))


def phase(stage: str, done: int, total: int, name: str) -> None:
    """A job's phase ``name`` began, ``done`` of its ``total`` phases being over."""
    _publish(Update(Kind.PHASE, stage, done, total, name))


def count(stage: str, done: int, total: int, phase_name: str) -> None:
    """``done`` of ``total`` items (tests) of the running phase are through."""
    _publish(Update(Kind.COUNT, stage, done, total, phase_name))


def job_output(stage: str, line: str) -> None:
    """A job printed ``line`` (untrusted: control characters are dropped before any listener sees it)."""
    if _listeners:  # read without the lock: a listener added this instant may miss one line, no harm
        _publish(Update(Kind.OUTPUT, stage, detail=printable(line)))


def printable(text: str) -> str:
    """``text`` without control or format characters (escape sequences, bidi overrides), cut for display."""
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in text[: DETAIL_CHARS * 2])
    return kept.strip()[:DETAIL_CHARS]


def _publish(update: Update) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(update)
        except Exception:  # a display's bug must not fail the stage that reported
            log.warning("progress listener %r failed", listener, exc_info=True)


OnProgress = Callable[[int, int], None]  # (units done, in all): moves a progress display


def progress_fields(line: str) -> dict[str, object] | None:
    """The JSON object of a job's progress line; None unless the line is one (and short enough to be one)."""
    if not line.startswith(LINE_PREFIX) or len(line) > MAX_PROGRESS_LINE:
        return None
    try:
        fields = json.loads(line[len(LINE_PREFIX) :])
    except (ValueError, RecursionError):  # RecursionError: 4 KiB of "[" nest deeper than the parser goes
        return None
    return fields if isinstance(fields, dict) else None


def parse_progress(line: str, total: int) -> int | None:
    """``done`` from a job's progress line, clamped to [0, total]; None unless it is one, for ``total`` units.

    The line is the job's, so anything may be in it: a claim about another total, or a line that is not
    JSON, not an object, or holds no integers, says nothing.
    """
    if (fields := progress_fields(line)) is None:
        return None
    done, claimed = fields.get("done"), fields.get("total")
    if not _is_int(done) or not _is_int(claimed) or claimed != total:
        return None
    return max(0, min(total, done))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class ProgressReader:
    """A launcher ``on_output`` that calls ``on_progress(done, total)`` for each progress line moving forward."""

    def __init__(self, total: int, on_progress: OnProgress) -> None:
        self.total, self.on_progress = total, on_progress
        self.done = 0

    def __call__(self, line: str) -> None:
        done = parse_progress(line, self.total)
        if done is not None and done > self.done:  # a repeated or backward claim would only jerk the bar
            self.done = done
            self.on_progress(done, self.total)


@dataclass(frozen=True)
class PhaseClaim:
    """What a build job's progress line may say: which phase began (an index into the trusted side's list of
    phases), and within the tests phase how many tests of how many are through."""

    done: int
    count: tuple[int, int] | None = None


def parse_phase(line: str, phases: tuple[str, ...]) -> PhaseClaim | None:
    """The claim of a runner's phase line, read strictly; None for anything else.

    Accepted: ``{"done": i, "total": len(phases), "item": ...}`` with ``0 <= i < len(phases)``, plus
    ``"tests_done"``/``"tests_total"`` (``0 <= tests_done <= tests_total <= MAX_COUNT``) only while the
    "tests" phase runs. ``item`` is never read: the phase's name is ``phases[i]``, the trusted side's word.
    """
    if (fields := progress_fields(line)) is None:
        return None
    done, total = fields.get("done"), fields.get("total")
    if not _is_int(done) or total != len(phases) or not _is_int(total) or not 0 <= done < total:
        return None
    if "tests_done" not in fields and "tests_total" not in fields:
        return PhaseClaim(done)
    ran, of = fields.get("tests_done"), fields.get("tests_total")
    if phases[done] != "tests" or not _is_int(ran) or not _is_int(of) or not 0 <= ran <= of <= MAX_COUNT:
        return None
    return PhaseClaim(done, (ran, of))
