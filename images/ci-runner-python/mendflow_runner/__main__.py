"""mendflow's in-job CI runner.

Usage: ``python -m mendflow_runner --source SNAPSHOT --out DIR [--upload NAME=URL ...]``.
Contract (stdlib only; the job holds no credentials):

* ``--source``: a local path or an http(s) URL (e.g. a presigned GET) of a .tar / .tar.gz snapshot whose
  member names are relative to the repository root (``git archive`` without ``--prefix``).
* ``--out``: receives ``report.json`` (validates against ``mendflow.contracts.BuildReport``),
  ``coverage.json`` (coverage.py's raw JSON), ``junit.xml`` and ``runner.log`` (every
  command, exit code, output). coverage.py's data file lives in ``--out``/coverage-data/ so stray
  ``.coverage.*`` files never get combined into it.
* ``--upload NAME=URL`` (repeatable): after writing, PUT ``--out``/NAME to URL (presigned; only Host and
  Content-Length are sent); ``report.json`` goes last so its arrival means the rest has arrived.
* Each flag below defaults to an environment variable:

  ===============  ==============================  ==================================================
  flag             environment                     meaning (default)
  ===============  ==============================  ==================================================
  --repo           MENDFLOW_JOB_REPO               repository name for the report ("repo")
  --commit         MENDFLOW_JOB_COMMIT             commit sha for the report ("")
  --branch         MENDFLOW_JOB_BRANCH             branch for the report ("")
  --stage          MENDFLOW_JOB_STAGE              'B1', 'B2' or 'build' ("build")
  --attempt        MENDFLOW_JOB_ATTEMPT            attempt number (1)
  --marker         MENDFLOW_JOB_TEST_MARKER        pytest marker, used when the repo declares it ("fast")
  --select         MENDFLOW_JOB_SELECT             JSON list of pytest node ids: run exactly these, no
                                                   marker (empty: the suite); recorded as ``selected``
  --runs           MENDFLOW_JOB_RUNS               run the tests this many times (1), stopping at the
                                                   first run that does not pass; ``runs`` says which
  --timeout        MENDFLOW_JOB_TIMEOUT_SEC        the whole job's budget in seconds (900); each step
                                                   gets what is left, minus a reserve for the report
  --lint-only      MENDFLOW_JOB_LINT_ONLY          "1": install and lint, run no test (a parent
                                                   commit's lint baseline); FAILED "lint" on findings
  --fix            MENDFLOW_JOB_FIX                JSON list of repo-relative .py paths: fix mode (below)
  --python         MENDFLOW_JOB_PYTHON             interpreter for the repo's venv (this interpreter)
  --workspace      MENDFLOW_JOB_WORKSPACE          scratch dir for source and venv (``--out``/../work)
  ===============  ==============================  ==================================================

  ``uv`` and ``ruff`` come from PATH; ``UV_CACHE_DIR`` (set by the launcher) is the shared cache.

Steps: unpack (safe) → dependencies (``mendflow_runner.deps``: the project with its test and development
extras and groups, never docs or release ones; uv.lock synced frozen, a poetry or pdm lock as exact pins; the
test requirement files and tox's deps; then pytest and coverage when the repo lacks them, and ruff and mypy at
the versions the repo pins; the interpreter its ``.python-version``/``requires-python`` asks for; a
deterministic failure says so in the report's ``transient``) → lint (ruff check, ruff format --check, mypy when
configured; a repo that configures no ruff gets ruff's bug-level findings as ``lint_advisory``, never fatal;
offline, like the tests: the repo's config and mypy plugins are its code) → tests (``coverage run --branch
-m pytest [-m MARKER | NODE_ID ...]`` with a plugin that journals collection, each test's start and
outcome, and each failure's exception, first line and location; pytest-cov is not used; ``--source`` the
repo's packages when its coverage config names no files) → coverage combine (``parallel = true``) and JSON →
report (``failed_tests`` complete, collection errors included as the file's path; ``failures`` details the
first 200).

Split at the dependency phase (``mendflow_runner.handoff``, how the Kubernetes launcher gives only that phase a
way to the package index): with ``MENDFLOW_PHASE=dependencies`` the runner stops after installing and writes
the environments' archive to ``MENDFLOW_HANDOFF`` instead of a report (a report still says why when installing
failed); with ``MENDFLOW_PHASE=offline`` it restores that archive instead of installing, and goes on.

Fix mode (``--fix``, ``mendflow_runner.fix``): unpack, then the repo's ``ruff check --fix`` (safe fixes) and,
when it configures ruff, ``ruff format`` on exactly those paths, offline; writes ``fixes.json``
(``mendflow.contracts.LintFixes``) and ``runner.log`` instead of the build's files, ``fixes.json`` uploaded last.

Exit code: 0 whenever report.json (fixes.json) was written and every upload succeeded, whatever the build's status
(the status is in the report); 3 when an upload failed; 2 for bad command-line arguments.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import signal
import sys
import tarfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Protocol

from . import (
    coverage_report,
    deps,
    discovery,
    fix,
    handoff,
    lint,
    proc,
    progress,
    repo_config,
    report,
    reruns,
    scmversion,
    testing,
    unpack,
)
from .config import JobConfig, parse_args
from .proc import Log

OUT_FILES = ("report.json", "coverage.json", "junit.xml", "runner.log")


class Terminated(Exception):
    """The launcher sent SIGTERM (its timeout): stop and still write a report."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated("the job was terminated (SIGTERM), most likely by the launcher's timeout")


class Build:
    def __init__(self, cfg: JobConfig, rep: report.Report, log: Log) -> None:
        self.cfg, self.rep, self.log = cfg, rep, log
        self.env = dict(os.environ)
        self.src = cfg.workspace / "src"
        self.venv = cfg.workspace / "venv"
        self.installed = [self.src, self.venv, deps.wheelhouse(self.venv)]  # what the dependency phase leaves
        self.remaining: Callable[[], float] = cfg.remaining
        self.phase = handoff.WHOLE
        self.installed_sec = 0.0  # the dependency phase's own install time, when another pod ran it

    def run(self) -> None:
        self.rep.selected = list(self.cfg.select)
        try:
            self.phase = handoff.phase()
        except handoff.HandoffError as exc:
            self.rep.errored("infrastructure", str(exc))
            return
        with progress.timed(self.rep.durations, "unpack"):
            if not self._unpack() or not self._check_selection():
                return
        with progress.timed(self.rep.durations, "dependencies"):
            if not self._dependencies():
                return
        self.rep.durations["dependencies"] += self.installed_sec
        if self.phase == handoff.DEPENDENCIES:
            return
        with progress.timed(self.rep.durations, "lint"):
            self._lint()
        if self.cfg.lint_only:
            if self.rep.lint_errors:
                self.rep.failed("lint")
            return
        with progress.timed(self.rep.durations, "tests"):
            run = self._tests()
        with progress.timed(self.rep.durations, "coverage"):
            self._coverage(run)
        self._judge(run)
        reruns.repeat(self.cfg, self.rep, lambda: self._judge(self._tests()))

    def _unpack(self) -> bool:
        for stale in self.installed:  # a re-run in the same workspace starts clean
            shutil.rmtree(stale, ignore_errors=True)
        self.cfg.workspace.mkdir(parents=True, exist_ok=True)
        try:
            archive = unpack.fetch(self.cfg.source, self.cfg.workspace)
            unpack.unpack(archive, self.src)
            repo_config.pyproject(self.src)  # fail here, clearly, rather than half-honour a broken config
            self.env.update(scmversion.overrides(self.src, self.env))
        except repo_config.RepoConfigError as exc:
            self.rep.errored("bad_input", str(exc))
            return False
        except (unpack.UnsafeArchiveError, FileNotFoundError, tarfile.TarError) as exc:
            self.rep.errored("bad_input", f"cannot unpack the source snapshot: {exc}")
            return False
        except OSError as exc:  # network errors fetching a presigned URL
            self.rep.errored("infrastructure", f"cannot fetch the source snapshot: {exc}")
            return False
        return True

    def _check_selection(self) -> bool:
        try:
            testing.check_selection(self.src, self.cfg.select)
        except testing.SelectionError as exc:
            self.rep.errored("bad_input", f"--select: {exc}")
            return False
        return True

    @property
    def handed_over(self) -> bool:
        """The dependency phase of a split job ended well: its archive, not a report, is the output."""
        return self.phase == handoff.DEPENDENCIES and self.rep.status == "PASSED"

    def _dependencies(self) -> bool:
        """Install (and, as a split job's first pod, pack what was installed), or restore what that pod packed."""
        try:
            if self.phase == handoff.OFFLINE:
                meta = handoff.restore(self.cfg.workspace, self.installed)
                # The first pod's time counts against this job's budget; its install time, against this step.
                self.cfg.started -= handoff.spent(meta, self.cfg.timeout_sec)
                self.installed_sec = float(meta.get("installed_sec", 0.0))
                return True
            started = time.monotonic()
            if not self._install():
                return False
            if self.phase == handoff.DEPENDENCIES:
                handoff.pack(self.cfg.workspace, self.installed, handoff.measures(self.cfg.started, started))
        except handoff.HandoffError as exc:
            self.rep.errored("infrastructure", str(exc))
            return False
        return True

    def _install(self) -> bool:
        try:
            deps.Installer(self.src, self.venv, self.cfg.python, self.env, self.log).install(self.remaining)
        except repo_config.RepoConfigError as exc:  # a lockfile it cannot read: never retried
            self.rep.errored("bad_input", str(exc))
            return False
        except deps.DependencyError as exc:
            reason = "timeout" if exc.step.timed_out else "dependencies"
            how = "" if exc.transient else " (deterministic: not retried)"
            self.rep.errored(reason, f"installing dependencies failed{how}: {exc}", exc.transient)
            return False
        return True

    def _lint(self) -> None:
        errors: list[str] = []
        wrap = proc.sandbox(self.cfg.workspace)  # a repo's mypy plugins and ruff config are its code
        python, ruff = str(self.venv / "bin/python"), lint.ruff_for(self.venv)
        checks: list[tuple[str, Callable[[], list[str]]]] = [
            ("ruff check", lambda: lint.ruff_check(self.src, self.env, self.remaining(), self.log, None, wrap, ruff)),
            ("ruff format", lambda: lint.ruff_format(self.src, self.env, self.remaining(), self.log, None, wrap, ruff)),
            ("mypy", lambda: lint.mypy(self.src, python, self.env, self.remaining, self.log, wrap=wrap)),
        ]
        advisory = not repo_config.configures_ruff(self.src)
        for name, check in checks:
            try:
                found = check()
            except lint.LintToolError as exc:
                # A linter that cannot run on this repo (bad config, crash): a lint failure to fix.
                found = [f".:0:0 {name.replace(' ', '-')}-error {exc}"]
            if advisory and name == "ruff check":  # the repo never chose ruff: mendflow's rules only advise
                self.rep.lint_advisory = found
            else:
                errors += found
        self.rep.lint_errors = errors

    def _tests(self) -> testing.TestRun:
        out = self.cfg.out
        paths = testing.Paths(
            root=self.src,
            venv_python=str(self.venv / "bin/python"),
            junit=out / "junit.xml",
            coverage_file=out / "coverage-data" / ".coverage",
            events=self.cfg.workspace / "pytest-events.jsonl",
        )
        env = {
            **self.env,
            "VIRTUAL_ENV": str(self.venv),
            "PATH": f"{self.venv / 'bin'}:{self.env.get('PATH', '')}",
            **deps.offline_pip_env(self.venv),
        }
        self.test_paths, self.test_env = paths, env  # the repository's own script runs alike (_own_script_passes)
        run = testing.run_tests(paths, self.cfg.marker, env, self.remaining(), self.log, self.cfg.select)
        self.rep.test_command = run.command
        self.rep.counts = run.counts
        self.rep.failed_tests = run.failed
        self.rep.failures = run.failures
        return run

    def _coverage(self, run: testing.TestRun) -> None:
        data = self.cfg.out / "coverage-data" / ".coverage"
        target = self.cfg.out / "coverage.json"
        python = str(self.venv / "bin/python")
        wrap = proc.sandbox(Path(os.path.commonpath([self.src, self.cfg.out])))
        if coverage_report.parallel_files(data):
            coverage_report.combine(self.src, python, data, self.env, self.remaining(), self.log, wrap)
        if not data.exists():
            return

        def report(*args: str) -> proc.StepResult:
            return coverage_report.command(
                self.src, python, list(args), data, self.env, self.remaining(), self.log, wrap
            )

        step = report("json", "-o", str(target))
        if not coverage_report.wrote(step) and (skipped := coverage_report.unreportable(step, self.src)):
            said = f"code with no Python source to report, left out: {', '.join(skipped[:5])}"
            self.rep.lint_advisory.append(f".:0:0 coverage {said}")
            step = report("json", "-o", str(target), "--ignore-errors")
        if coverage_report.wrote(step):
            self.rep.coverage = coverage_report.load(target, self.src)
        elif coverage_report.no_json(step):
            xml = data.parent / "coverage.xml"
            self._coverage_from_xml(report("xml", "-o", str(xml)), xml, target)

    def _coverage_from_xml(self, step: proc.StepResult, xml: Path, target: Path) -> None:
        """coverage.py before 5.0: its Cobertura XML, read into the contract (``coverage.json`` holds that)."""
        if coverage_report.wrote(step) and (found := coverage_report.load_xml(xml, self.src)) is not None:
            self.rep.coverage = found
            target.write_text(json.dumps(found), encoding="utf-8")
            self.rep.lint_advisory.append(".:0:0 coverage this coverage.py has no `coverage json` (5.0+): read its XML")

    def _judge(self, run: testing.TestRun) -> None:
        step, rep = run.step, self.rep
        sig = testing.killed_by(step)
        where = f" while running {run.running}" if run.running else ""
        if step.timed_out:
            rep.errored("timeout", f"the test suite ran out of the job's time budget{where}")
        elif run.memory_errors:
            rep.errored("oom", f"test ran out of memory (MemoryError): {', '.join(run.memory_errors)}")
        elif sig == signal.SIGKILL:
            rep.errored("oom", f"the test suite was killed (SIGKILL, most likely out of memory){where}")
        elif sig is not None:
            rep.errored("runner_crash", f"the test suite died of signal {sig}{where}")
        elif step.returncode == 5:
            what = "of the selected node ids" if self.cfg.select else "at all"
            what = f"marked '{run.marker_used}'" if run.marker_used else what
            rep.failed("no_tests", f"pytest collected no tests {what}; add tests or check the test paths")
        elif step.returncode == testing.PYTEST_TESTS_FAILED and self._only_the_tracer_failed():
            if rep.lint_errors:
                rep.failed("lint")
        elif step.returncode != 0:
            # A crash (an INTERNALERROR) stops the run whatever failed before it: it is the reason to give.
            if not rep.failed_tests or step.returncode == testing.PYTEST_INTERNAL_ERROR:
                rep.error_reason = f"pytest exited {step.returncode}: {testing.why_stopped(step, self.src)}"
            if not self._own_script_passes():
                rep.failed("tests")
            elif rep.lint_errors:
                rep.failed("lint")
        elif rep.lint_errors:
            rep.failed("lint")

    def _only_the_tracer_failed(self) -> bool:
        """Whether every failed test failed only because coverage.py's tracer was on
        (``testing.failed_under_the_tracer``): they run again unmeasured, and each that passes there counts as
        passed, with an advisory; the coverage stays the first run's. One that fails again keeps that failure."""
        traced = testing.failed_under_the_tracer(self.rep.failures)
        if not traced:
            return False
        workspace = self.cfg.workspace
        paths = dataclasses.replace(
            self.test_paths, junit=workspace / "unmeasured.xml", events=workspace / "unmeasured-events.jsonl"
        )
        again = testing.run_tests(paths, "", self.test_env, self.remaining(), self.log, traced, measured=False)
        if again.step.returncode not in (0, testing.PYTEST_TESTS_FAILED):
            return False
        passed = {node for node in traced if node not in again.failed}
        self.rep.passed_after_all(passed)
        unmeasured = {f["node_id"]: f for f in again.failures}  # why one still fails, in words without the tracer
        self.rep.failures = [unmeasured.get(f["node_id"], f) for f in self.rep.failures]
        said = f"{len(passed)} test{'s' * (len(passed) != 1)} failed only under coverage.py's tracer and passed"
        self.rep.lint_advisory.append(f".:0:0 tests {said} without it: counted as passed, their lines unmeasured")
        return not self.rep.failed_tests

    def _own_script_passes(self) -> bool:
        """Whether the repository's own test script passes where pytest failed tests: a suite written to run one
        file per process (dill's), whose files pytest's one process cannot hold together. That command is the
        authority on the whole suite: the build is judged by it, and an advisory says how many tests pytest failed."""
        script = discovery.own_script(self.src) if self.rep.failed_tests and not self.cfg.select else None
        if script is None:
            return False
        step = testing.run_own_script(self.test_paths, script, self.test_env, self.remaining(), self.log)
        if not step.ok:
            return False
        own = f"`python {shlex.join(script)}`"
        failed = len(self.rep.failed_tests)
        said = f"pytest failed {failed} test{'s' * (failed != 1)} that the repository's own {own} passes"
        self.rep.lint_advisory.append(f".:0:0 tests {said}: judged by that command")
        self.rep.failed_tests, self.rep.failures, self.rep.error_reason = [], [], None
        # the tests pytest failed pass under the authority; a PASSED build counting failures would contradict it
        counts = self.rep.counts
        passed = counts.get("passed", 0) + counts.get("failed", 0) + counts.get("errors", 0)
        self.rep.counts = {**counts, "passed": passed, "failed": 0, "errors": 0}
        return True


def fix_mode(cfg: JobConfig, log: Log) -> int:
    """``--fix``: the repo's fixers on the asked files, ``fixes.json`` instead of a build's report."""
    try:
        fixes = fix.run_fix(cfg, log)
    except Terminated as exc:
        fixes = fix.result(error=str(exc))
    except Exception as exc:  # the runner's own bug: still say so in fixes.json
        log.write(traceback.format_exc())
        fixes = fix.result(error=f"runner crash: {type(exc).__name__}: {exc}")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    report.write_json_atomic(cfg.out / fix.OUT_NAME, fixes)
    log.write(f"fix: {len(fixes['files'])} file(s), error={fixes['error']!r}")
    return 3 if report.upload_all(cfg.out, cfg.uploads, log) else 0


class Builder(Protocol):
    """What a language's build is to ``main``: it runs, filling the report, and says whether it handed over."""

    @property
    def handed_over(self) -> bool: ...

    def run(self) -> None: ...


def main(
    argv: list[str] | None = None, builder: Callable[[JobConfig, report.Report, Log], Builder] | None = None
) -> int:
    """The entry of every language's runner: ``builder`` makes its build (default: Python's)."""
    cfg = parse_args(argv)
    cfg.out.mkdir(parents=True, exist_ok=True)
    log = Log(cfg.out / "runner.log")
    signal.signal(signal.SIGTERM, _on_sigterm)
    if cfg.fix is not None:
        return fix_mode(cfg, log)
    rep = report.Report(cfg)
    build = (builder or Build)(cfg, rep, log)
    try:
        build.run()
    except Terminated as exc:
        rep.errored("timeout", str(exc))
    except Exception as exc:  # the runner's own bug: still say so in a report
        log.write(traceback.format_exc())
        rep.errored("runner_crash", f"{type(exc).__name__}: {exc}")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if build.handed_over:  # the offline pod writes the report; one from here could be taken for its
        log.write(f"dependencies packed for the offline phase in {rep.durations.get('dependencies', 0):.1f}s")
        return 3 if report.upload_all(cfg.out, cfg.uploads, log) else 0
    report.write_json_atomic(cfg.out / "report.json", rep.to_dict())
    log.write(f"status {rep.status} fail_reason={rep.fail_reason} error_reason={rep.error_reason}")
    failed = report.upload_all(cfg.out, cfg.uploads, log)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
