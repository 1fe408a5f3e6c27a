"""The shape every non-Python runner shares: one order of steps, one way to split at the dependency phase, one
confinement per phase. A language fills in its steps (``LanguageBuild``'s abstract methods); the Python runner
(``__main__.Build``) predates this and keeps its own, richer dependency step.

Steps: unpack → dependencies (the only networked step, confined to the job's own directories with the package
index as the only way out; a split job packs ``handoff_dirs`` here, its offline pod restores them) → build →
lint beside tests → coverage → what the build checks beside them → judge (→ the tests again, ``--runs``).
Everything after the dependency phase runs offline in the sandbox.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tarfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future
from functools import cached_property
from pathlib import Path
from typing import Generic, TypeVar

from . import handoff, proc, progress, reruns, unpack
from .config import JobConfig
from .deps import REFUSALS, DependencyError, cause, refused_hosts
from .proc import Log, StepResult
from .report import Report

TestOutcome = TypeVar("TestOutcome")


class LanguageBuild(ABC, Generic[TestOutcome]):
    # Whether every command sees the workspace at one path for all jobs (``proc.StableRoot``): for toolchains
    # whose caches name the directory they compiled in (Go's build cache, a kept cargo build); others keep the real
    # path, which their output names.
    one_path_for_every_job = False
    # Whether the lint step runs beside the tests (``proc.beside``: at a lower CPU priority, so what the linter
    # costs hides in what the tests leave idle): not where the linter and the tests build in one directory that
    # one of them locks.
    lint_beside_tests = True

    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        self.cfg, self.rep, self.log = cfg, rep, log
        self.src = cfg.workspace / "src"
        self.phase = handoff.WHOLE
        self.remaining: Callable[[], float] = cfg.remaining
        self.installed_sec = 0.0  # the dependency phase's own time, when another pod ran it
        self.env = self._environment()

    # -- what a language says ------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        return dict(os.environ)

    @property
    def cache(self) -> Path:
        """The repository's dependency cache (both launchers set ``MENDFLOW_JOB_CACHE``)."""
        return Path(os.environ.get("MENDFLOW_JOB_CACHE") or self.cfg.workspace / "cache")

    @abstractmethod
    def _use_job_caches(self) -> None:
        """A split job's caches live in its workspace: they travel to the offline pod in the handoff archive."""

    @property
    @abstractmethod
    def handoff_dirs(self) -> list[Path]:
        """What the dependency phase leaves for the offline steps (the source tree as it left it, its caches)."""

    @property
    @abstractmethod
    def dependency_dirs(self) -> list[Path]:
        """What the dependency phase may write besides the workspace."""

    @abstractmethod
    def _read_project(self) -> bool:
        """After unpacking: find the projects and check ``--select``; ``False`` (having said why) ends the job."""

    @abstractmethod
    def _download(self) -> bool:
        """Fetch the dependencies under ``self._confined()``; ``False`` (having said why) ends the job."""

    def _after_download(self) -> None:
        """Still in the dependency phase, with its network: whatever makes the offline steps faster."""

    @abstractmethod
    def _compile(self) -> bool:
        """The build step; ``False`` (FAILED ``build`` or ERRORED, having said why) ends the job."""

    def _build_checked(self) -> bool:
        """What the build step started beside the tests (Node's type check), once they are done: ``False`` (having
        failed the build, or errored, and said why) ends the job as a failed build step does, with no test's
        result."""
        return True

    @abstractmethod
    def _lint(self) -> list[str]:
        """Findings as ``path:line:col CODE message``, repository-relative."""

    @abstractmethod
    def _tests(self) -> TestOutcome: ...

    @abstractmethod
    def _coverage(self) -> None:
        """The Coverage contract into ``rep.coverage`` and ``coverage.json``."""

    @abstractmethod
    def _judge(self, tests: TestOutcome) -> None: ...

    # -- the order of steps ----------------------------------------------------------------------------------

    @property
    def handed_over(self) -> bool:
        return self.phase == handoff.DEPENDENCIES and self.rep.status == "PASSED"

    def run(self) -> None:
        progress.use(progress.COMPILED_PHASES)
        self.rep.selected = list(self.cfg.select)
        try:
            self.phase = handoff.phase()
        except handoff.HandoffError as exc:
            self.rep.errored("infrastructure", str(exc))
            return
        if self.phase != handoff.WHOLE:
            self._use_job_caches()
        with progress.timed(self.rep.durations, "unpack"):
            if not self._unpack() or not self._read_project():
                return
        with progress.timed(self.rep.durations, "dependencies"):
            if not self._dependencies() or self.phase == handoff.DEPENDENCIES:
                return
        self.rep.durations["dependencies"] += self.installed_sec
        with progress.timed(self.rep.durations, "build"):
            if not self._compile():
                return
        if self.cfg.lint_only:
            with progress.timed(self.rep.durations, "lint"):
                self.rep.lint_errors = self._lint()
            if self._build_checked() and self.rep.lint_errors:
                self.rep.failed("lint")
            return
        linting = self._lint_beside_tests()
        with progress.timed(self.rep.durations, "tests"):
            tests = self._tests()
        with progress.timed(self.rep.durations, "coverage"):
            self._coverage()
        self.rep.lint_errors = linting.result()
        if not self._build_checked():
            self.rep.tests_dropped()
            return
        self._judge(tests)
        reruns.repeat(self.cfg, self.rep, self._run_again)

    def _lint_beside_tests(self) -> Future[list[str]]:
        """The lint step, beside the tests and their coverage where the language's lint and tests do not share a
        build directory (``lint_beside_tests``), else before them; its duration is its own."""
        progress.phase_started("lint")  # announced before the tests, whichever starts first
        started = time.monotonic()

        def lint() -> list[str]:
            try:
                return self._lint()
            finally:
                self.rep.durations["lint"] = time.monotonic() - started

        if self.lint_beside_tests:
            return proc.beside(lint)
        done: Future[list[str]] = Future()
        done.set_result(lint())
        return done

    def _run_again(self) -> None:
        """One more run of the tests, judged (``--runs``)."""
        self._judge(self._tests())

    def _unpack(self) -> bool:
        shutil.rmtree(self.src, ignore_errors=True)
        self.tmp.mkdir(parents=True, exist_ok=True)
        try:
            unpack.unpack(unpack.fetch(self.cfg.source, self.cfg.workspace), self.src)
        except (unpack.UnsafeArchiveError, FileNotFoundError, tarfile.TarError) as exc:
            self.rep.errored("bad_input", f"cannot unpack the source snapshot: {exc}")
            return False
        except OSError as exc:
            self.rep.errored("infrastructure", f"cannot fetch the source snapshot: {exc}")
            return False
        return True

    def _dependencies(self) -> bool:
        dirs = self.handoff_dirs
        try:
            if self.phase == handoff.OFFLINE:
                meta = handoff.restore(self.cfg.workspace, dirs)
                self.cfg.started -= handoff.spent(meta, self.cfg.timeout_sec)
                self.installed_sec = float(meta.get("installed_sec", 0.0))
                return True
            started = time.monotonic()
            if not self._download():
                return False
            self._after_download()
            if self.phase == handoff.DEPENDENCIES:
                handoff.pack(self.cfg.workspace, dirs, handoff.measures(self.cfg.started, started))
        except handoff.HandoffError as exc:
            self.rep.errored("infrastructure", str(exc))
            return False
        return True

    # -- how commands run ------------------------------------------------------------------------------------

    @property
    def tmp(self) -> Path:
        """The offline steps' temp dir: they may write only the workspace."""
        return self.cfg.workspace / "tmp"

    @property
    def refusals(self) -> Path:
        """Where relay.py notes a host the egress proxy refused: the dependency phase's temp dir."""
        return Path(self.env.get("TMPDIR") or "/tmp") / REFUSALS

    def _confined(self) -> proc.Wrap:
        """The dependency phase's confinement: the job's own directories and caches writable, the package index the
        only way out (where the launcher serves one)."""
        own = [self.cfg.workspace, *self.dependency_dirs, self.refusals.parent]
        if home := self.env.get("HOME"):
            own.append(Path(home))
        for path in own:
            path.mkdir(parents=True, exist_ok=True)
        return proc.confined(tuple(own), self.refusals)

    @cached_property
    def stable_root(self) -> proc.StableRoot:
        """The workspace at the one path all jobs share, as the offline sandbox's commands see it."""
        return proc.StableRoot(proc.sandbox(self.cfg.workspace), self.cfg.workspace)

    def _run(
        self, wrap: proc.Wrap, argv: list[str], cwd: Path, env: dict[str, str], over: proc.Mounts = ()
    ) -> StepResult:
        """Every command: in ``wrap`` (and at the one path all jobs share, where ``one_path_for_every_job``, with
        ``over`` shown there: ``StableRoot.command``)."""
        command = wrap(argv)
        if self.one_path_for_every_job:
            command, env = proc.StableRoot(wrap, self.cfg.workspace).command(argv, cwd, env, over)
        step = proc.run(command, cwd=cwd, env=env, timeout=self.remaining(), log=self.log)
        return dataclasses.replace(step, argv=argv)  # the log and the report say what ran, as the repo's CI would

    def _fetch(self, argv: list[str], cwd: Path) -> bool:
        """One dependency command, confined; a failure ERRORED with its cause and whether a retry could help (a
        host the egress proxy refused never could)."""
        self.refusals.unlink(missing_ok=True)
        step = self._run(self._confined(), argv, cwd, self.env)
        return step.ok or self._fetch_failed(step, argv, cwd)

    def _fetch_failed(self, step: StepResult, argv: list[str], cwd: Path) -> bool:
        """ERRORED with the failed dependency command's cause; False."""
        refused = self._refused(step)
        transient = False if refused else DependencyError(step).transient
        how = "" if transient else " (deterministic: not retried)"
        reason = "timeout" if step.timed_out else "dependencies"
        said = refused or self._cause(step)
        self.rep.errored(reason, f"`{' '.join(argv)}` in {self.where(cwd)} failed{how}: {said}", transient)
        return False

    def _refused(self, step: StepResult) -> str | None:
        """Why ``step`` failed when the egress proxy refused it a host (``deps.refused_hosts``), else None."""
        return refused_hosts(self.refusals)

    def _cause(self, step: StepResult) -> str:
        """Why a dependency command failed, in the tool's words."""
        return cause(step)

    def _selection_ok(self, check: Callable[[list[str]], object]) -> bool:
        """``--select`` read by the language's ``check``, whose ``ValueError`` makes it bad input."""
        try:
            check(self.cfg.select)
        except ValueError as exc:
            self.rep.errored("bad_input", f"--select: {exc}")
            return False
        return True

    def where(self, path: Path) -> str:
        return path.relative_to(self.src).as_posix()

    def in_repo(self, words: str) -> str:
        """A tool's ``words`` with the repository's paths, not the job's (tsd: ``does not exist in `/…/ws/work/src```;
        checkstyle: ``Unable to find suppressions file at location: /…/ws/work/src/../src/conf/…``)."""
        return words.replace(f"{self.src}/", "").replace(str(self.src), ".")
