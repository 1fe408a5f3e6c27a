"""A Node project's build, the way its own CI runs one: the lockfile's package manager installs (the only step
with a network: the npm registry), then, offline, ``tsc --noEmit`` when the project type-checks with a tsconfig
and a typescript of its own, eslint when the repository configures it (else xo, standard, semistandard or
ts-standard when a script of its runs one), and the test runner its ``test`` script names, with coverage.

Every tool is the repository's own, from ``node_modules/.bin`` at the version its lockfile pins; the image brings
Node and npm only (``npm exec`` fetches the pnpm or yarn a project uses, in the dependency phase). Coverage comes
from the runner's own provider (jest's, vitest's v8 or istanbul, c8 or else nyc for mocha, Node's own for
``node --test``, without the test files it ran) as LCOV, read into the Coverage contract; where the repository has
no c8 or nyc to measure a script or mocha, from V8's own data, counted as c8 counts it (``v8.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import re
import shlex
import shutil
from collections.abc import Callable
from concurrent.futures import Future
from importlib import resources
from pathlib import Path, PurePosixPath

from mendflow_runner import coverage_formats, handoff, proc
from mendflow_runner.config import JobConfig
from mendflow_runner.language_build import LanguageBuild
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.report import Report

from . import borp, checks, command, engines, installed, results, tap_nyc, v8
from .project import Project, ProjectError

COVERAGE = "coverage.json"
LCOV = "lcov.info"
VITEST_PROVIDERS = ("@vitest/coverage-v8", "@vitest/coverage-istanbul")
MOCHA_REPORTER_OPTIONS = (2, 2)  # the first mocha with --reporter-options (node-dir 0.1.17 pins mocha ~1.13.0)
# mendflow's node:test reporter (`node --test`, borp): each test's end, a JSON line (results.from_node_events).
REPORTER = resources.files(__package__).joinpath("reporter.mjs")
# Where a test script's own tool has V8 write its test processes' coverage, past the NODE_V8_COVERAGE mendflow
# gives the script: c8's default temp directory, and tap 15+'s (@tapjs/coverage).
OWN_V8_DIRS = ("coverage/tmp", ".tap/coverage")
_TOOL_ENV = {
    "CI": "true",  # every runner's non-interactive mode: no watch, no prompts
    # No FORCE_COLOR=0 beside it: supports-color before 4 (chalk 1's) took any FORCE_COLOR for colour, and node-tap
    # 2 then printed its coloured reporter instead of TAP (fs-write-stream-atomic 1.0.10: no test counted).
    "NO_COLOR": "1",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "YARN_ENABLE_TELEMETRY": "0",
}


PNPM_STORE = "npm_config_store_dir"
# Each package manager's cache (pnpm's store, yarn classic's and berry's caches) under the job's dependency cache.
CACHE_VARIABLES = {
    "npm_config_cache": "npm",
    PNPM_STORE: "pnpm-store",
    "YARN_CACHE_FOLDER": "yarn",
    "YARN_GLOBAL_FOLDER": "yarn-berry",
}


def _caches(root: Path) -> dict[str, str]:
    return {name: str(root / sub) for name, sub in CACHE_VARIABLES.items()}


def _node_headers(env: dict[str, str]) -> dict[str, str]:
    """node-gyp's ``nodedir``: the running Node's own headers (``<prefix>/include/node``, which Node's releases and
    Debian's package ship beside ``<prefix>/bin/node``), so a native addon (iconv 3.0.1, a dev dependency of
    iconv-lite 0.7.3) builds offline instead of downloading them from nodejs.org, which no job can reach."""
    if "npm_config_nodedir" in env or not (node := shutil.which("node", path=env.get("PATH"))):
        return {}
    prefix = Path(node).resolve().parents[1]
    return {"npm_config_nodedir": str(prefix)} if (prefix / "include" / "node" / "common.gypi").is_file() else {}


_NPM_CHATTER = re.compile(r"npm warn|npm (?:error|ERR!) A complete log of this run", re.IGNORECASE)
# npm's own words when a script (``npx aud`` in object-inspect's posttest) asks for a package not in its cache
_NOT_CACHED = re.compile(r"^npm (?:error|ERR!) code ENOTCACHED$", re.MULTILINE)
_NPM_ERROR = re.compile(r"npm (?:error|ERR!)(?: (.*))?$")
# The runner's own words when its test paths match no file: a package that ships no tests. vitest and mocha; jest;
# ava (yocto-queue 1.1.1's tarball ships none); mocha before 6 (vary 1.1.2: `mocha test/`, no test/ shipped)
_NO_TEST_FILES = re.compile(
    r"No test files found|No tests found, exiting with code 1|Couldn.t find any files to test"
    r"|cannot resolve path \(or pattern\)"
)
# tap's words when the script names a test file the tarball does not ship (safe-stable-stringify 2.5.0: `tap
# test.js`; a glob that matched nothing reaches tap as itself)
_MISSING_PATH = re.compile(r"ENOENT: no such file or directory, stat '([^']+)'")
# Node's, when the script runs a file the tarball does not ship (json-stringify-safe 5.0.1: `node test.js`)
_MISSING_MODULE = re.compile(r"^Error: Cannot find module '([^']+)'$", re.M)
_GLOB_MAGIC = re.compile(r"[*?[]")  # a word the shell would expand
_PATH_CHAR = re.compile(r"\w")  # a word naming a file has a letter or digit
_SCRIPT_FILE = re.compile(r"\.(?:[cm]?[jt]s|[jt]sx)$")  # a word naming one script (``tape test.js``)
_NODE_BANNER = re.compile(r"Node\.js v\d+\.")
_ERROR_LINE = re.compile(r"[\w.$]*(?:Error|Exception)(?: \[\w+\])?: ")  # TypeError: …, Error [ERR_X]: …


# node:test's spec reporter lists what failed at its end: "✖ failing tests:", then "✖ name (0.3ms)" and the error.
_SPEC_FAILED = re.compile(
    r"^✖ failing tests:\s*\n(?:.*\n)*?✖ (?P<name>.+?)(?: \([\d.]+m?s\))?\s*\n\s*(?P<error>\S.*)$", re.M
)

# @jsumners/line-reporter's: "Failed tests:", a blank line, the file, "\tline: 4, column: 1", "\t\t" and the error.
_LINE_REPORTER_FAILED = re.compile(
    r"^Failed tests:\s*\n\s*\n(?P<file>\S.*)\n\tline: (?P<line>\d+), column: \d+\n\t\t(?P<error>.*)$", re.M
)
# jest's own error of a run whose tests passed, which makes it exit 1: a test that left work running which logged
# after its file was done (cz-customizable 7.5.4's editor child under load: "●  Cannot log after tests are done.").
_JEST_RUN_ERROR = re.compile(r"^\s*●\s+(?!Console\s*$)(?P<said>\S.*)$", re.M)
# vitest's error before any test ran, under its banner, then its stack (devalue 6.0.3's `vitest run --project unit`
# without the vitest config its sdist leaves out: "Error: No projects matched the filter "unit".")
_VITEST_STARTUP_ERROR = re.compile(r"Startup Error\b.*\n\s*(?P<said>\S.*)")
# The runner's words for a total under the repository's coverage threshold (jest's coverageThreshold, vitest's
# coverage.thresholds), which apply because mendflow measures coverage: as coverage.py's fail_under, c8's
# check-coverage and pytest-cov's --cov-fail-under, it is not the tests' failure (mendflow's coverage gate judges
# coverage). Jest: `Jest: "global" coverage threshold for lines (94%) not met: 80%`, `Jest: Uncovered count for
# lines (5) exceeds global threshold (2)`; vitest: `ERROR: Coverage for lines (50%) does not meet global threshold
# (80%)`.
_COVERAGE_THRESHOLD = re.compile(
    r"^(?:Jest: .*(?:coverage threshold for .* not met|exceeds .* threshold)"
    r"|ERROR: Coverage for \w+ \([\d.]+%\) does not meet .*threshold).*$",
    re.M,
)


def _last_words(step: StepResult) -> str:
    """The step's last line on stderr, else stdout, passing over npm's own warnings: what the failing command
    said, not what npm did.
    When Node died of an uncaught error (its output ends with the ``Node.js v20…`` banner), the error's line;
    when node:test's spec reporter listed failing tests (borp), the first one and its error; when
    line-reporter did, the first one's file, line and error."""
    if failed := _SPEC_FAILED.search(step.stdout):
        return f"{failed['name']}: {failed['error'].strip()}"
    if failed := _LINE_REPORTER_FAILED.search(step.stdout):
        return f"{failed['file']}:{failed['line']}: {failed['error'].strip()}"
    if failed := _JEST_RUN_ERROR.search(step.stderr):
        return failed["said"].strip()
    if failed := _VITEST_STARTUP_ERROR.search(step.stderr):
        return failed["said"].strip()
    for text in (step.stderr, step.stdout):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _NPM_CHATTER.match(ln.strip())]
        if lines:
            return _said(lines)
    return step.last_stderr_line()


def _command_line(step: StepResult) -> str:
    """What a step ran: the commands of a script's chain (``sh -c``), else its argv."""
    return step.argv[2] if step.argv[:2] == ["sh", "-c"] else " ".join(step.argv)


def _said(lines: list[str]) -> str:
    """The last of a command's lines, or the error's when Node died of an uncaught error (its banner last)."""
    if len(lines) > 1 and _NODE_BANNER.match(lines[-1]):
        return next((ln for ln in reversed(lines) if _ERROR_LINE.match(ln)), lines[-2])
    return lines[-1]


def _lint_reading(linter: str) -> tuple[list[str], Callable[[StepResult, Path], tuple[list[str], list[str]]]]:
    """The options that make ``linter`` print its findings, and what reads them: eslint's JSON (xo passes its
    reporter to eslint's formatters), else the standard-engine linters' own words, which have no JSON."""
    if linter == "eslint":
        return ["--format", "json", "."], checks.eslint_findings
    if linter == "xo":
        return ["--reporter=json"], checks.eslint_findings
    return ["--verbose"], checks.standard_findings


def _npm_cause(step: StepResult) -> str:
    """npm's own error lines (``code ETARGET; notarget No matching version found for typescript@next.``), without
    its pointer to the debug log, the advice that follows or the job's directory (``path …``); when a script of
    the package failed (ret 0.5.0's `prepare: tsc`), the last line it printed (the error's, where Node died of one:
    fast-deep-equal 3.1.3's `prepublish` runs a build.js its tarball lacks). '' when npm printed none (pnpm,
    yarn)."""
    said: list[str] = []
    printed: list[str] = []  # the script's lines before npm's own (its stderr, else its stdout)
    for line in step.stderr.splitlines():
        found = _NPM_ERROR.match(line.strip())
        text = (found.group(1) or "").strip() if found else ""
        if not found and not said and line.strip() and not _NPM_CHATTER.match(line.strip()):
            printed.append(line.strip())
        if not text or _NPM_CHATTER.match(line.strip()) or text.startswith("path /"):
            continue
        if "In most cases" in text:
            break
        said.append(text)
    if "command failed" in said and (last := _said(printed) if printed else _last_line(step.stdout)):
        said.append(last)
    return "; ".join(said)[:600]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


class NodeBuild(LanguageBuild[tuple[results.TestRun, StepResult | None]]):
    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        self.project: Project | None = None
        self.test = command.TestCommand("none")
        self.linting: Future[StepResult] | None = None  # the repository's linter, beside tsc and the tests
        self.type_check: Future[StepResult] | None = None  # tsc --noEmit, beside the tests
        self.mounts: proc.Mounts = ()  # a kept install, shown at node_modules to the offline steps
        self.chained_tests = False  # whether what the script runs after its runner printed tests of its own
        self.chained_report: Future[str] | None = None  # c8's LCOV of them, made beside what follows them
        self.unmet_engines: Future[list[str]] | None = None  # the Node it asks for, judged beside the install
        super().__init__(cfg, rep, log)

    # -- the environment ------------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = super()._environment()
        env.update(_TOOL_ENV)
        env.update(_caches(self.cache / "node"))
        env.update(_node_headers(env))
        return env

    def _use_job_caches(self) -> None:
        self.env.update(_caches(self.cfg.workspace / "node-cache"))

    @property
    def handoff_dirs(self) -> list[Path]:
        return [self.src]  # node_modules is in it

    @property
    def dependency_dirs(self) -> list[Path]:
        return [Path(self.env[name]) for name in CACHE_VARIABLES if name in self.env]

    @property
    def offline_env(self) -> dict[str, str]:
        """npm's cache and logs go to the workspace (the shared cache is read-only here); nothing is fetched."""
        return {
            **self.env,
            "TMPDIR": str(self.tmp),
            "npm_config_offline": "true",
            "npm_config_cache": str(self.tmp / "npm-cache"),
            # A home the tests may write, as a pod's (HOME=/tmp), wherever the runner runs (a home outside a job's
            # directory is read-only: proc._own_home): nyc before 15 writes its spawn-wrap shims there (nyc 10:
            # minimist, object-inspect; 14: fast-json-stable-stringify)
            "HOME": str(self.tmp),
        }

    @property
    def proj(self) -> Project:
        assert self.project is not None, "read after _read_project"
        return self.project

    # -- the steps -------------------------------------------------------------------------------------------

    def _read_project(self) -> bool:
        try:
            self.project = Project.read(self.src)
        except ProjectError as exc:
            self.rep.errored("bad_input", str(exc))
            return False
        if self.proj.manager != "pnpm":  # npm run and npm exec warn of it, into what the tests print too
            self.env.pop(PNPM_STORE, None)
        self.test = command.read_test(self.proj.scripts)
        if not self._selection_ok(results.selection):
            return False
        project = self.proj
        self.unmet_engines = proc.beside(lambda: engines.unmet(project.root, project.manifest, self.env))
        return True

    def _dependencies(self) -> bool:
        """The install, and the Node the package asks for said where the image's is not it."""
        try:
            return super()._dependencies()
        finally:
            if self.unmet_engines is not None:
                self.rep.lint_advisory.extend(self.unmet_engines.result())

    def _download(self) -> bool:
        """The frozen install, or the one an earlier job of the repository made of the same manifests, lockfile
        (or none) and toolchain (``installed``); a fresh install is kept for the next job, and used from there
        as a later job uses it. Only a whole job keeps one: a split job's caches are its own."""
        node_modules = self.src / "node_modules"
        whole = self.phase == handoff.WHOLE
        kept = installed.KeptInstall.for_project(self.cache / "node", self.proj, self.env) if whole else None
        if kept is None:
            return self._fetch(self.proj.install_argv(), self.src)
        lend = proc.in_bwrap(proc.sandbox(self.cfg.workspace)(["true"]))
        if not self._use_kept(kept, node_modules, lend):
            if not self._install_to_keep():
                return False
            kept.keep(node_modules, move=lend)
            if not node_modules.exists() and not self._use_kept(kept, node_modules, lend):
                return self._fetch(self.proj.install_argv(), self.src)  # the kept tree went meanwhile
        return self._root_scripts_ran() or self._install_again(node_modules)

    def _install_to_keep(self) -> bool:
        """The install a kept tree is made of: without the root package's own install scripts (its code), and
        with those of the packages it installs (``npm rebuild``)."""
        if not installed.root_scripts(self.proj):
            return self._fetch(self.proj.install_argv(), self.src)
        if not self._fetch([*self.proj.install_argv(), "--ignore-scripts"], self.src):
            return False
        skipped = installed.skipped_scripts(self.src / "node_modules")
        return not skipped or self._fetch(["npm", "rebuild", *skipped], self.src)

    def _root_scripts_ran(self) -> bool:
        """The root package's install scripts, in npm's order, on this job's view of the kept tree, offline; False
        at the first that fails. Each alone: ``npm run-script`` would run a script's pre and post ones again."""
        for name in installed.root_scripts(self.proj):
            step = self._node(["npm", "run-script", "--ignore-scripts", name])
            if not step.ok:
                self.log.write(f"node_modules: the root's `{name}` script failed on the kept tree\n")
                return False
        return True

    def _install_again(self, node_modules: Path) -> bool:
        """The install as without a kept tree, for a root whose install scripts cannot run on one (one writes into
        a read-only ``node_modules``, or needs the package index)."""
        self.mounts, self.project = (), dataclasses.replace(self.proj, installed=None)
        shutil.rmtree(node_modules, ignore_errors=True)
        return self._fetch(self.proj.install_argv(), self.src)

    def _use_kept(self, kept: installed.KeptInstall, node_modules: Path, lend: bool) -> bool:
        """The kept tree as this job's ``node_modules``: bound read-only in each offline step's sandbox when
        they run in bubblewrap, else copied."""
        if lend and (mounts := kept.lend(node_modules)) is not None:
            self.mounts, self.project = mounts, dataclasses.replace(self.proj, installed=kept.tree)
            self.log.write(f"node_modules: {kept.tree}, read-only\n")
            return True
        if kept.restore(node_modules):
            self.log.write(f"node_modules: copied from {kept.tree}\n")
            return True
        return False

    def _node(self, argv: list[str], env: dict[str, str] | None = None) -> StepResult:
        """A command offline in the sandbox, which sees this package again (``reporter.mjs``) when the local
        launcher placed it under the host's ``/tmp``, where the sandbox mounts a fresh one."""
        wrap = proc.sandbox(self.cfg.workspace, readable=(Path(__file__).resolve().parent,), mounts=self.mounts)
        return self._run(wrap, argv, self.src, {**self.offline_env, **(env or {})})

    def _compile(self) -> bool:
        """The linter and ``tsc --noEmit`` (the repository's tsconfig and TypeScript, when the project type-checks
        itself) start beside the tests, as all only read the tree: a job's checks cost about what the tests leave
        idle, where running them in turn cost their sum (ts-invoice: tsc 1.2 s, then vitest 1.1 s). The test runners
        transpile without type-checking, so a type error does not stop them; it fails the build once they are done
        (``_build_checked``)."""
        self.linting = self._start_linter()
        if tsc := self._type_checker():
            argv = [str(tsc), "--noEmit", "--pretty", "false", "-p", "tsconfig.json"]
            self.type_check = proc.beside(lambda: self._node(argv))
        return True

    def _type_checker(self) -> Path | None:
        """The repository's tsc, where the project type-checks itself; else None, having said why where it matters."""
        if self.proj.tsconfig is None:
            return None
        if unchecked := self._not_type_checked():
            self.rep.lint_advisory.append(f"tsconfig.json:0:0 tsc {unchecked}: nothing type-checked")
            return None
        if (tsc := self.proj.bin("tsc")) is None:
            self.rep.lint_advisory.append("tsconfig.json:0:0 tsc typescript is not installed: nothing type-checked")
        return tsc

    def _build_checked(self) -> bool:
        """A type error fails the build with tsc's words (TS18003, a published package without its sources, is
        advice)."""
        if self.type_check is None:
            return True
        step = self.type_check.result()
        if step.timed_out:
            self.rep.errored("timeout", "`tsc --noEmit` ran out of the job's time budget")
            return False
        errors = checks.tsc_errors(step, self.src)
        if step.ok or all(f" {checks.NO_INPUTS} " in e for e in errors):
            self.rep.lint_advisory += [e for e in errors if f" {checks.NO_INPUTS} " in e]
            return True
        said = "; ".join(errors[:3]) or step.last_stderr_line()
        self.rep.failed("build", f"`tsc --noEmit` failed: {said}")
        return False

    def _not_type_checked(self) -> str:
        """Why the tsconfig is no build gate ('' when it is). A JavaScript package's tsconfig often only configures
        editors (``checkJs``), with a tsc another package hoisted (fast-uri: typescript 6 of @typescript-eslint):
        a gate the project never runs, at a version it never chose. Its TypeScript sources or a script running tsc
        say the project type-checks itself."""
        if not self.proj.depends_on("typescript"):
            return "typescript is not a dependency of the package"
        if not (self.proj.has_typescript_sources or self.proj.script_runs("tsc")):
            return "no TypeScript sources and no script runs tsc"
        return ""

    def _start_linter(self) -> Future[StepResult] | None:
        """The repository's linter, running beside tsc and then the tests (``proc.beside``); None when it has none
        installed."""
        linter = self.proj.linter
        if linter is None or (tool := self.proj.bin(linter)) is None:
            return None
        argv = [str(tool), *_lint_reading(linter)[0]]
        return proc.beside(lambda: self._node(argv))

    def _lint(self) -> list[str]:
        if (linter := self.proj.linter) is None:
            return []
        if self.linting is None:
            self.rep.lint_advisory.append(f".:0:0 {linter} is configured but not installed: nothing linted")
            return []
        step = self.linting.result()
        read = _lint_reading(linter)[1]
        try:
            errors, warnings = read(step, self.src)
        except checks.LintError as exc:
            return [f".:0:0 {linter}-error {exc}"]
        self.rep.lint_advisory += warnings
        return errors

    # -- tests ----------------------------------------------------------------------------------------------

    @property
    def results_dir(self) -> Path:
        return self.cfg.workspace / "results"

    @property
    def lcov(self) -> Path:
        return self.results_dir / "coverage" / LCOV

    def _tests(self) -> tuple[results.TestRun, StepResult | None]:
        shutil.rmtree(self.results_dir, ignore_errors=True)
        (self.results_dir / "coverage").mkdir(parents=True)
        runner = self.test.runner
        if runner == "none":
            return results.TestRun(), None
        argv = self._test_argv()
        self.rep.test_command = argv
        if before := self._chained(self.test.before, results.TestRun()):
            return results.TestRun(), before
        env = {**self._script_env(), **self.test.env, **self._own_coverage_env()}
        if runner == "borp":
            env |= borp.config_env(self.src, self.results_dir, bool(self.cfg.select))
        step = self._node(argv, env)
        mocha_json = self.results_dir / "mocha.json"
        if runner == "mocha" and not mocha_json.is_file() and (printed := results.mocha_json_from_stdout(step.stdout)):
            mocha_json.write_text(printed, encoding="utf-8")
        try:
            run = self._read_results(runner, step)
        except results.ResultsError as exc:
            self.log.write(f"tests: {exc}")
            run = results.TestRun()
        if step.ok and not run.failed and not self.cfg.select:
            counted = run.counts["total"]
            step = self._chained(self.test.then, run, measured=True) or step
            self.chained_tests = run.counts["total"] > counted
        self.rep.counts, self.rep.failed_tests, self.rep.failures = run.counts, run.failed, run.failures
        return run, step

    def _chained(self, commands: list[list[str]], run: results.TestRun, measured: bool = False) -> StepResult | None:
        """What the test script runs around its runner: before it (``pretest``'s build), or after it, only if the
        tests passed (``node --test && tsd``; not for a selection of tests: these run whatever they run). Each in
        turn, as the script would run it; the first that fails, else None. The tests a chained suite prints as TAP
        (tap's, before jest in process-warning's script) count with the runner's; a ``measured`` suite's
        coverage joins the runner's (``_chained_coverage_env``), its report made beside what the script runs after
        the last of them (process-warning's jest, then tstyche: 1.0 s of c8 beside 2.0 s of type tests)."""
        envs = [self._chained_coverage_env(words) if measured else {} for words in commands]
        last_measured = max((i for i, env in enumerate(envs) if env), default=len(commands))
        for i, (words, env) in enumerate(zip(commands, envs, strict=True)):
            step = self._node(["sh", "-c", command.shell_line(words, self.test.globs)], {**self._script_env(), **env})
            run.add(results.from_tap(step.stdout, self.src))
            if not step.ok:
                return dataclasses.replace(step, argv=words)
            if i == last_measured and i + 1 < len(commands):
                self.chained_report = proc.beside(self._chained_lcov)
        return None

    def _test_argv(self) -> list[str]:
        files, names = results.selection(self.cfg.select) if self.cfg.select else ([], [])
        pattern = results.name_pattern(names) if names else ""
        runner, args, out = self.test.runner, self._expanded(self.test.args), self.results_dir
        if runner == "script" and self.test.script:
            return ["sh", "-c", " && ".join(command.shell_line(words, self.test.globs) for words in self.test.script)]
        if runner == "script":
            return self.proj.script_argv("test", hooks=not self.test.hooks_apart)
        if runner == "node":
            return self._node_test_argv(files or args)
        if runner == "borp":
            kept, own_files, _ = borp.words(args)
            events = f"--reporter={REPORTER}:{out / 'node-events.jsonl'}"
            return [str(self.proj.bin(runner) or runner), *kept, *(files or own_files), "--reporter=spec", events]
        tool = str(self.proj.bin(runner) or runner)
        cover = str(out / "coverage")
        if runner == "jest":
            filters = ["-t", pattern] if pattern else []
            reports = ["--ci", "--json", f"--outputFile={out / 'jest.json'}", "--coverage"]
            return [tool, *args, *files, *filters, *reports, "--coverageReporters=lcov", f"--coverageDirectory={cover}"]
        if runner == "vitest":
            filters = ["-t", pattern] if pattern else []
            reports = ["--reporter=default", "--reporter=json", f"--outputFile.json={out / 'vitest.json'}"]
            coverage = ["--coverage.enabled=true", "--coverage.reportOnFailure=true", "--coverage.reporter=lcov"]
            coverage.append(f"--coverage.reportsDirectory={cover}")
            if not any(self.proj.has_package(p) for p in VITEST_PROVIDERS):
                self.rep.lint_advisory.append(".:0:0 coverage @vitest/coverage-v8 is not installed: no coverage")
                coverage = []
            return [tool, "run", *args, *files, *filters, *reports, *coverage]
        filters = ["--grep", pattern] if pattern else []
        if old_mocha := (self.proj.package_version("mocha") or MOCHA_REPORTER_OPTIONS) < MOCHA_REPORTER_OPTIONS:
            # mocha 1's `mocha` starts `_mocha` with stdio options today's Node ignores: nothing it prints is seen
            tool = str(self.proj.bin("_mocha") or tool)
        mocha = [tool, *args, *files, *filters, "--reporter", "json"]
        if not old_mocha:
            # every mocha's spelling (before 6 there was no --reporter-option); an older one, which stops at an
            # option it does not know, prints the report (``results.mocha_json_from_stdout``)
            mocha += ["--reporter-options", f"output={out / 'mocha.json'}"]
        if c8 := self.proj.bin("c8"):
            return [str(c8), "--reporter=lcovonly", f"--report-dir={cover}", f"--temp-directory={out / 'c8'}", *mocha]
        if nyc := self.proj.bin("nyc"):  # istanbul's wrapper, with the repository's own nyc configuration
            return [str(nyc), "--reporter=lcovonly", f"--report-dir={cover}", f"--temp-dir={out / 'nyc'}", *mocha]
        return mocha  # measured through V8 (``_own_coverage_env``)

    def _script_env(self) -> dict[str, str]:
        """What a command of the scripts run without npm needs of it: ``node_modules/.bin`` on PATH."""
        return {"PATH": f"{self.src / 'node_modules' / '.bin'}:{self.offline_env.get('PATH', '')}"}

    def _expanded(self, words: list[str]) -> list[str]:
        """``words`` as sh passes them on: a glob the script leaves unquoted becomes the package's paths it
        matches, sorted (``*`` matches no ``/`` nor a leading dot; ``**`` is ``*``), or stays as it is when none
        does."""
        found: list[str] = []
        for word in words:
            matches = sorted(glob.glob(word, root_dir=self.src)) if word in self.test.globs else []
            found += matches or [word]
        return found

    def _node_test_argv(self, files: list[str]) -> list[str]:
        out = self.results_dir
        argv = ["node", "--test", "--experimental-test-coverage"]
        argv += ["--test-reporter=lcov", f"--test-reporter-destination={self.lcov}"]
        argv += [f"--test-reporter={REPORTER}", f"--test-reporter-destination={out / 'node-events.jsonl'}"]
        argv += ["--test-reporter=spec", "--test-reporter-destination=stdout"]
        if names := results.selection(self.cfg.select)[1] if self.cfg.select else []:
            argv.append(f"--test-name-pattern={results.own_name_pattern(names)}")
        return [*argv, *files]  # options first: Node 20 takes what follows a file as files

    def _read_results(self, runner: str, step: StepResult) -> results.TestRun:
        out = self.results_dir
        if runner == "jest":
            return results.from_jest_json(out / "jest.json", self.src)
        if runner == "vitest":
            return results.from_jest_json(out / "vitest.json", self.src)
        if runner == "mocha":
            return results.from_mocha_json(out / "mocha.json", self.src)
        if runner in ("node", "borp"):
            return results.from_node_events(out / "node-events.jsonl", self.src)
        run = results.from_tap(step.stdout, self.src)  # a script of its own: tap, tape and node:test print TAP
        if not run.read:
            known = "TAP, jest, vitest, mocha, node --test, uvu"
            said = f"`{' '.join(step.argv)}` printed no results mendflow reads ({known})"
            self.rep.lint_advisory.append(f".:0:0 tests {said}: judged by its exit code, with no counts")
        return run

    @property
    def v8_dir(self) -> Path:
        return self.results_dir / "v8"

    @functools.cached_property
    def _reads_v8(self) -> bool:
        """Whether V8's coverage data of a command is read: by the repository's c8, else by mendflow (``v8.py``)
        where the package does not measure with nyc: its own dependency (not one tap 12 brings along) that ``npm
        test`` runs (fastparallel 2.4.1's runs only in its ``coverage`` script), or that of a node-tap that runs
        every suite under it (``tap_nyc``). A script measured with nyc leaves nyc's data, and writing V8's too is
        not free (secure-json-parse 2.7.0, whose script runs nyc and then tsd's type checker: 0.6-0.9 s of its
        6 s). Read once: the installed tree and the scripts do not change within a job."""
        if self.proj.bin("c8") is not None:
            return True
        own_nyc = self.proj.depends_on("nyc") and command.npm_test_runs("nyc", self.proj.scripts)
        return not (own_nyc or tap_nyc.measures_every_suite(self.proj))

    def _own_coverage_env(self) -> dict[str, str]:
        """For a script of its own, and for mocha with no c8 or nyc to wrap it: V8 writes the coverage of every
        node process it starts (Node's own switch)."""
        script = self.test.runner == "script" and self._reads_v8
        bare_mocha = self.test.runner == "mocha" and not (self.proj.bin("c8") or self.proj.bin("nyc"))
        return {"NODE_V8_COVERAGE": str(self.v8_dir)} if script or bare_mocha or self.test.runner == "borp" else {}

    def _v8_lcov(self, v8_dir: Path) -> str:
        """mendflow's LCOV of V8's data in ``v8_dir``, where the repository has no c8 to report it ('' if none);
        an advisory names the scripts it cannot measure, which ran compiled."""
        text, compiled = v8.to_lcov(v8_dir, self.src)
        if compiled:
            said = f"{len(compiled)} scripts ran compiled and are not measured without c8: {', '.join(compiled[:3])}"
            self.rep.lint_advisory.append(f".:0:0 coverage {said}")
        return text

    def _write_v8_lcov(self) -> None:
        """The test step's LCOV, from V8's data of it (``_v8_lcov``), when it measured any script."""
        if text := self._v8_lcov(self.v8_dir):
            self.lcov.write_text(text, encoding="utf-8")

    @property
    def chained_v8_dir(self) -> Path:
        return self.results_dir / "v8-after"

    def _chained_coverage_env(self, words: list[str]) -> dict[str, str]:
        """A suite the script runs after its runner is measured too, where its V8 data is read (``_reads_v8``:
        pino 10.4.0's `npm run borp && jest test/jest`); not a type test (tsd, tstyche: V8's data of the type
        checker made process-warning's c8 report 3.9 s, where its jest's took 1)."""
        if self.test.runner == "script" or not self._reads_v8:
            return {}
        return {"NODE_V8_COVERAGE": str(self.chained_v8_dir)} if command.runs_tests(words, self.proj.scripts) else {}

    def _chained_lcov(self) -> str:
        """The LCOV of what the commands run after the runner measured, by the repository's c8, else by mendflow
        ('' if none)."""
        c8, out = self.proj.bin("c8"), self.results_dir / "after"
        if c8 is None:
            return self._v8_lcov(self.chained_v8_dir)
        if not v8.own_scripts(self.chained_v8_dir, self.src):
            return ""
        self._node(
            [str(c8), "report", "--reporter=lcovonly", f"--report-dir={out}", f"--temp-directory={self.chained_v8_dir}"]
        )
        return (out / LCOV).read_text(encoding="utf-8") if (out / LCOV).is_file() else ""

    def _with_chained_coverage(self) -> None:
        """The runner's LCOV with what the commands after it measured (a file's records from both are merged when
        read); an advisory names those that ran tests mendflow could not measure."""
        if self.test.runner == "script" or not self.test.then:
            return
        reported, self.chained_report = self.chained_report, None
        if after := reported.result() if reported else self._chained_lcov():
            before = self.lcov.read_text(encoding="utf-8") if self.lcov.is_file() else ""
            self.lcov.write_text(before + after, encoding="utf-8")
        elif self.chained_tests:
            suites = [
                words for words in self.test.then if command.runs_tests(words, self.proj.scripts)
            ] or self.test.then
            chained = ", ".join(f"`{shlex.join(words)}`" for words in suites)
            said = f"measures the runner's tests only: {chained}, which the test script runs after them, is not"
            self.rep.lint_advisory.append(f".:0:0 coverage {said}")

    def _script_lcov(self) -> None:
        """A test script's coverage as LCOV, reported by the repository's own tool: nyc from the istanbul data its
        run left (``.nyc_output``), else c8 from V8's data, ours and that of a tool the script ran itself; without
        c8, mendflow reports V8's data (``v8.py``)."""
        cover, nyc_data = self.lcov.parent, self.src / ".nyc_output"
        if (nyc := self.proj.bin("nyc")) and any(nyc_data.glob("*.json")):
            own = self.src / "coverage" / LCOV
            before = own.stat().st_mtime_ns if own.is_file() else None
            self._node([str(nyc), "report", "--reporter=lcovonly", f"--report-dir={cover}", f"--temp-dir={nyc_data}"])
            if not self.lcov.is_file() and own.is_file() and own.stat().st_mtime_ns != before:
                # nyc before 5 knows no --report-dir and reports into ./coverage (node-tap 2's nyc 3:
                # fs-write-stream-atomic 1.0.10 had no coverage)
                shutil.copy(own, self.lcov)
            return
        self.v8_dir.mkdir(parents=True, exist_ok=True)
        for data in (d for own in OWN_V8_DIRS for d in (self.src / own).glob("*.json")):
            shutil.copy(data, self.v8_dir)
        if c8 := self.proj.bin("c8"):
            report = ["report", "--reporter=lcovonly", f"--report-dir={cover}", f"--temp-directory={self.v8_dir}"]
            self._node([str(c8), *report, *(f"--exclude={glob}" for glob in self.test.coverage_exclude)])
        else:
            self._write_v8_lcov()

    def _no_script_lcov(self) -> None:
        """A test script (or a bare mocha) left no LCOV, or one of no file (``from_lcov`` refuses it): no
        coverage, not 100 % of nothing. c8 writes one of no file when it saw only npm's and the runner's processes,
        or the test files it excludes."""
        if self.test.runner in ("script", "mocha", "borp"):
            self.rep.lint_advisory.append(".:0:0 coverage the tests measured no script of the package: no coverage")

    def _coverage(self) -> None:
        """The runner's LCOV read into the Coverage contract (``coverage.json`` and the report)."""
        if self.test.runner in ("script", "borp"):
            self._script_lcov()
        elif self.test.runner == "mocha" and not self.lcov.is_file():
            self._write_v8_lcov()
        self._with_chained_coverage()
        if not self.lcov.is_file():
            self._no_script_lcov()
            return
        if self.test.runner == "node":
            # Node 20 measures the test files it runs as code; later Node (nodejs/node#56060) and c8 leave them out.
            tests = results.node_test_files(self.results_dir / "node-events.jsonl", self.src)
            text = results.lcov_without(self.lcov.read_text(encoding="utf-8"), tests, self.src)
            if "SF:" not in text:  # the tests measured only themselves: nothing under test was measured
                self.log.write("coverage: node --test measured no file but its test files")
                return
            self.lcov.write_text(text, encoding="utf-8")
        try:
            self.rep.coverage = coverage_formats.from_lcov(self.lcov.read_text(encoding="utf-8"), self.src)
        except coverage_formats.CoverageFormatError as exc:
            self.log.write(f"coverage: {exc}")
            if isinstance(exc, coverage_formats.NoCoverageError):
                self._no_script_lcov()
        else:
            (self.cfg.out / COVERAGE).write_text(json.dumps(self.rep.coverage), encoding="utf-8")
            shutil.copyfile(self.lcov, self.cfg.out / LCOV)

    def _why_failed(self, run: results.TestRun, step: StepResult) -> str:
        if step.argv != self.rep.test_command:
            when = "before" if step.argv in self.test.before else "after"
            what = f"`{shlex.join(step.argv)}`, which the test script runs {when} the tests,"
            return f"{what} exited {step.returncode}: {self.in_repo(_last_words(step))}"
        said = "" if run.read or self.test.runner == "script" else " and wrote no results"
        return f"{self._what_ran(step)} exited {step.returncode}{said}: {self.in_repo(_last_words(step))}"

    def _what_ran(self, step: StepResult) -> str:
        """The runner mendflow ran, or the test script it ran as it is (``npm run test``), or the commands of the
        script's chain it ran (``tape test/*.js`` of ``standard && tape test/*.js``)."""
        if self.test.runner != "script":
            return f"`{self.test.runner}`"
        return f"`{_command_line(step)}`"

    def _cause(self, step: StepResult) -> str:
        return _npm_cause(step) or super()._cause(step)

    def _fetched_after_tests(self, run: results.TestRun, step: StepResult) -> bool:
        """True, with an advisory, when the tests ran and passed and then a script of the test command asked npm
        for a package the offline step cannot fetch: that fails every commit alike, so the tests judge it."""
        if not (run.read and run.counts["total"] and _NOT_CACHED.search(step.stderr + step.stdout)):
            return False
        said = f"`{shlex.join(step.argv)}` ran its tests, then asked npm for a package offline ({_last_words(step)})"
        self.rep.lint_advisory.append(f".:0:0 {said}: tests run without the network, so the tests judge the build")
        return True

    def _under_threshold(self, run: results.TestRun, step: StepResult) -> bool:
        """True, with an advisory, when the runner's tests all ran and passed and it failed only for a coverage total
        under the repository's threshold (``_COVERAGE_THRESHOLD``)."""
        said = [m.group().strip() for m in _COVERAGE_THRESHOLD.finditer(step.stderr + step.stdout)]
        if not (said and run.read and run.counts["total"] and step.argv == self.rep.test_command):
            return False
        if _JEST_RUN_ERROR.search(step.stderr):
            return False  # jest failed the run for another reason too
        self.rep.lint_advisory.append(f".:0:0 coverage under the repository's threshold: {'; '.join(said)}")
        return True

    def _found_no_test_files(self, run: results.TestRun, step: StepResult) -> bool:
        """The runner itself (not what the script chains after it) failed for want of test files, having run none."""
        ran_none = not run.counts["total"] and step.argv == self.rep.test_command
        return not step.ok and ran_none and bool(_NO_TEST_FILES.search(step.stdout + step.stderr))

    def _missing_test_paths(self, run: results.TestRun, step: StepResult) -> list[str]:
        """The test files the scripts name that the package does not have, when they are why the tests failed:
        every one of tap's failures (it stats each path it is given), or Node's failure to load a file a script runs.
        Not when a step the test script runs before the tests failed (js-yaml 5.5.0's `npm run build`, whose
        support/build-dist.mjs its tarball leaves out): that is a build's failure, said in its words."""
        if step.argv in self.test.before:
            return []
        if run.failed:
            found = [_MISSING_PATH.search(f.get("message", "")) for f in run.failures]
            if len(found) != len(run.failed) or not all(found):
                return []
            paths = [m[1] for m in found if m]
        elif not step.ok and (missing := _MISSING_MODULE.search(step.stderr)):
            paths = [self._script_file(missing[1])]
        elif not step.ok and not run.counts["total"] and not _NO_TEST_FILES.search(step.stdout + step.stderr):
            paths = self._unmatched_patterns(step)
        elif step.ok and not run.read:
            paths = self._unmatched_patterns(step, every=True)
        else:
            return []
        return paths if all(paths) and not any((self.src / p).exists() for p in paths) else []

    def _unmatched_patterns(self, step: StepResult, every: bool = False) -> list[str]:
        """The glob patterns and script files of the command that ran which match no file of the package: the
        shell passes such a word on as it is, and a runner may then do anything (once 1.4.0's `tap test/*.js`,
        whose tarball has no test/: tap 7 reads TAP from stdin; concat-stream 2.0.0's `tape test/*.js
        test/server/*.js` and isarray 2.0.5's `tape test.js`: tape ran nothing, printed nothing and passed), and
        those of the test runners it runs through package scripts (base64-js 1.5.1's `npm run unit`, `tape
        test/*.js`). With ``every``, [] unless none matches a file."""
        ran = _command_line(step)
        if step.argv[:2] == ["npm", "run"]:  # ``Project.script_argv``: the script's name is its last word
            ran = self.proj.scripts.get(step.argv[-1], ran)
        try:
            words = shlex.split(ran)
        except ValueError:
            return []
        words += [word for suite in command.suites(ran, self.proj.scripts) or [] for word in suite]
        # not the shell's own test command, `[`, that a script's `if [ -e $TRAVIS ]` names (dynamic-dedupe 0.3.0)
        named = [
            w
            for w in dict.fromkeys(words)
            if (_GLOB_MAGIC.search(w) or _SCRIPT_FILE.search(w)) and _PATH_CHAR.search(w)
        ]
        patterns = [p for p in named if not p.startswith(("-", "/")) and ".." not in p]
        unmatched = [p for p in patterns if not glob.glob(p, root_dir=self.src, recursive=True)]
        return unmatched if not every or len(unmatched) == len(patterns) else []

    def _script_file(self, module: str) -> str:
        """``module`` relative to the package when a script names it as a word (``node test.js``), else ''."""
        path = Path(module)
        if path.is_absolute():
            if not path.is_relative_to(self.src):
                return ""
            path = path.relative_to(self.src)
        named = {PurePosixPath(w).as_posix() for script in self.proj.scripts.values() for w in script.split()}
        return path.as_posix() if path.as_posix() in named else ""

    def _judge(self, outcome: tuple[results.TestRun, StepResult | None]) -> None:
        run, step = outcome
        rep = self.rep
        if step is None:
            rep.failed("no_tests", "package.json has no `test` script: add one that runs the tests")
        elif step.timed_out:
            rep.errored("timeout", "the test suite ran out of the job's time budget")
        elif missing := self._missing_test_paths(run, step):
            said = f"{self._what_ran(step)} names test files the package does not have: {', '.join(missing)}"
            rep.failed("no_tests", f"{said}: add tests or check its test paths")
        elif run.failed:
            rep.failed("tests")
        elif self._found_no_test_files(run, step):
            rep.failed("no_tests", f"{self._what_ran(step)} found no test files: add tests or check its test paths")
        elif not step.ok and not self._fetched_after_tests(run, step) and not self._under_threshold(run, step):
            # no test failed, yet the runner did (a suite that cannot load), or what came after it
            rep.failed("tests", self._why_failed(run, step))
        elif run.read and run.counts["total"] == 0:
            what = "of the selected ids" if self.cfg.select else "at all"
            rep.failed("no_tests", f"{self._what_ran(step)} ran no tests {what}")
        elif rep.lint_errors:
            rep.failed("lint")
