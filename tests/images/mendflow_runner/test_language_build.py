"""The order of steps every non-Python runner shares (``LanguageBuild.run``), on a language of the test's own whose
lint and tests each wait for the other to have started: they meet only when they run side by side."""

from __future__ import annotations

import os
import tarfile
import threading
import time
from pathlib import Path

import pytest
from mendflow_runner import proc, progress
from mendflow_runner.config import JobConfig, parse_args
from mendflow_runner.language_build import LanguageBuild
from mendflow_runner.proc import Log
from mendflow_runner.report import Report

LINT_SEC = 0.3  # how long the lint step goes on once the two met
ALONE = "meeting.toy:1:1 toy-alone the tests never ran beside the lint step"


@pytest.fixture(autouse=True)
def _phases_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` has the runner's progress announce a compiled language's phases: the next test in this process
    expects Python's."""
    monkeypatch.setattr(progress, "_phases", progress._phases)


class Meeting(LanguageBuild[bool]):
    """Lint and tests each mark that they started, then wait for the other's mark."""

    meeting_sec = 10.0

    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        super().__init__(cfg, rep, log)
        self.lint_nice: int | None = None

    def _meet(self, me: str, other: str) -> bool:
        (self.cfg.workspace / me).touch()
        deadline = time.monotonic() + self.meeting_sec
        while not (self.cfg.workspace / other).exists():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def _use_job_caches(self) -> None:
        pass

    @property
    def handoff_dirs(self) -> list[Path]:
        return [self.src]

    @property
    def dependency_dirs(self) -> list[Path]:
        return []

    def _read_project(self) -> bool:
        return True

    def _download(self) -> bool:
        return True

    def _compile(self) -> bool:
        return True

    def _lint(self) -> list[str]:
        self.lint_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        met = self._meet("linting", "testing")
        time.sleep(LINT_SEC)
        return [] if met else [ALONE]

    def _tests(self) -> bool:
        return self._meet("testing", "linting")

    def _coverage(self) -> None:
        pass

    def _judge(self, tests: bool) -> None:
        if self.rep.lint_errors or not tests:
            self.rep.failed("lint" if self.rep.lint_errors else "tests")


class LintFirst(Meeting):
    lint_beside_tests = False
    meeting_sec = 1.0  # they never meet: side by side, the tests would have started within it


def _build(kind: type[Meeting], tmp_path: Path) -> Meeting:
    source = tmp_path / "source.tar"
    with tarfile.open(source, "w"):
        pass
    cfg = parse_args(["--source", str(source), "--out", str(tmp_path / "out"), "--timeout", "60"])
    cfg.out.mkdir(parents=True)
    build = kind(cfg, Report(cfg), Log(cfg.out / "runner.log"))
    build.run()
    return build


def test_the_lint_step_runs_beside_the_tests(tmp_path: Path) -> None:
    build = _build(Meeting, tmp_path)
    assert (build.rep.status, build.rep.lint_errors) == ("PASSED", [])


def test_the_lint_step_beside_the_tests_runs_at_a_lower_cpu_priority(tmp_path: Path) -> None:
    build = _build(Meeting, tmp_path)
    assert build.lint_nice == os.getpriority(os.PRIO_PROCESS, 0) + proc.BESIDE_NICE


def test_a_language_that_lints_before_its_tests_finishes_the_lint_step_first(tmp_path: Path) -> None:
    build = _build(LintFirst, tmp_path)
    assert build.rep.lint_errors == [ALONE]


def test_the_lint_step_beside_the_tests_keeps_its_own_duration(tmp_path: Path) -> None:
    assert _build(Meeting, tmp_path).rep.durations["lint"] >= LINT_SEC
