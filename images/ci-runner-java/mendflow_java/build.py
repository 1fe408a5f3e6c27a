"""A Maven project's build, the way its own CI runs one: the dependencies fetched with the network (Maven
Central, or the repository the trusted side names), then, offline, one ``mvn test`` of the whole reactor with
JaCoCo's agent — compile, the checks the pom binds to the phases up to ``test``, Surefire — and JaCoCo's report.

One Maven run for build and tests, as ``mvn test`` is in the repository's own CI: a second run would pay Maven's
start and the reactor's model again for nothing. Its output says which happened: a compile error (javac's words)
is FAILED ``build``; failing tests are ignored by Maven (``maven.test.failure.ignore``) and read from Surefire's
reports. The JDK and Maven are the image's; a repository's ``mvnw`` is honoured when its distribution comes from
the repository the dependency phase may reach. Gradle builds are refused in one line: its wrapper downloads a
distribution from services.gradle.org, which no job reaches.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from mendflow_runner import coverage_formats, proc
from mendflow_runner.config import JobConfig
from mendflow_runner.deps import refused_host_names
from mendflow_runner.language_build import LanguageBuild
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.report import Report
from mendflow_runner.testing import RunResults

from . import javac, maven, surefire

COVERAGE, JACOCO_XML = "coverage.json", "jacoco.xml"
SUREFIRE_REPORTS, JACOCO_REPORT = "target/surefire-reports", "target/site/jacoco/jacoco.xml"
RESOLVED_STAMP = ".mendflow-resolved"


class JavaBuild(LanguageBuild[tuple[RunResults, StepResult | None]]):
    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        self.run_step: StepResult | None = None  # the one offline Maven run: build and tests
        self.mvn = ["mvn"]
        self.agent: list[str] = []  # JaCoCo's agent, unless a pom runs it already
        self.resolution = ""  # what the dependency phase resolves for (_resolution_key), once the poms are read
        self.job_caches = False
        self.test_phase_resolved: bool | None = None  # the resolving test run's outcome, once it ran
        self.build_stopped_it = ""  # what of the build's own stopped the resolving test run, not a resolution
        self.resolving_failed = ""  # Maven's words for why the resolving run, which had the network, failed
        super().__init__(cfg, rep, log)

    # -- the environment ------------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = super()._environment()
        # The JVM's temp dir is /tmp whatever TMPDIR says, and the dependency phase may write only its own.
        env.update(maven.jvm_options(env.get("MAVEN_OPTS", ""), env.get("TMPDIR")))
        env.update(maven.home_options(env))
        env["MAVEN_USER_HOME"] = str(self.cache / "maven-wrapper")  # where mvnw keeps the distribution
        return env

    def _use_job_caches(self) -> None:
        self.job_caches = True
        self.env["MAVEN_USER_HOME"] = str(self.cfg.workspace / "maven-wrapper")

    @property
    def m2(self) -> Path:
        """The local repository: the repository's dependency cache, or a split job's own."""
        return (self.cfg.workspace if self.job_caches else self.cache) / "m2"

    @property
    def handoff_dirs(self) -> list[Path]:
        return [self.src, self.m2, Path(self.env["MAVEN_USER_HOME"])]

    @property
    def dependency_dirs(self) -> list[Path]:
        return [self.m2, Path(self.env["MAVEN_USER_HOME"])]

    @property
    def repository(self) -> str:
        return os.environ.get("MENDFLOW_MAVEN_REPOSITORY") or maven.CENTRAL

    @property
    def settings(self) -> Path:
        return self.cfg.workspace / "maven-settings.xml"

    def _maven(self, *args: str, offline: bool = True) -> list[str]:
        """A Maven command line: the repository's ``mvn`` (or wrapper), batch mode, the job's local repository,
        and the trusted side's mirror when it names one."""
        settings = ["-s", str(self.settings)] if self.settings.is_file() else []
        return [*self.mvn, *maven.BATCH, *(["-o"] if offline else []), f"-Dmaven.repo.local={self.m2}", *settings,
                *args]  # fmt: skip

    # -- the steps -------------------------------------------------------------------------------------------

    def _read_project(self) -> bool:
        if not (self.src / maven.POM).is_file():
            gradle = next((name for name in maven.GRADLE_BUILDS if (self.src / name).is_file()), None)
            if gradle:
                self.rep.errored(
                    "bad_input",
                    f"this is a Gradle build ({gradle}): mendflow builds Java with Maven only, since Gradle's "
                    "wrapper downloads its distribution from services.gradle.org, which no job can reach; "
                    "add a pom.xml to build it here",
                )
            else:
                self.rep.errored("bad_input", "no pom.xml at the repository's root: this is not a Maven project")
            return False
        try:
            distribution = maven.wrapper_distribution(self.src)
        except maven.WrapperError as exc:
            self.rep.errored("bad_input", f"the Maven wrapper: {exc}")
            return False
        if distribution and maven.wrapper_allowed(distribution, self.repository):
            self.mvn = ["sh", f"./{maven.WRAPPER}"]  # from the source tree: mvnw finds .mvn/ by its own path
        elif distribution:
            self.log.write(f"mvnw's {distribution} is not on {self.repository}: the image's Maven builds instead")
        self.agent = [] if maven.configures_jacoco(self.src) else [f"{maven.JACOCO}:prepare-agent"]
        for pom in maven.keep_agent(self.src) if self.agent else []:
            self.log.write(f"{pom.relative_to(self.src)}: Surefire's argLine now starts with @{{argLine}}, for JaCoCo")
        return self._selection_ok(surefire.selection)

    def _download(self) -> bool:
        if self.repository.rstrip("/") != maven.CENTRAL:
            self.settings.write_text(maven.settings_xml(self.repository), encoding="utf-8")
        self.resolution = "" if maven.uses_snapshots(self.src) else self._resolution_key()
        if self._resolved_before():
            return True
        argv = self._maven(maven.GO_OFFLINE, offline=False)
        self.refusals.unlink(missing_ok=True)
        step = self._run(self._confined(), argv, self.src, self.env)
        if step.ok:
            return True
        # go-offline resolves more than `mvn test` loads: the <reporting> plugins too (commons-io 2.6's cobertura
        # needs the tools.jar Java 9 dropped), and plugins bound after `test` (commons-text 1.12.0's spotbugs, whose
        # version range names a release the Maven repository may lack). When the test phase resolves all it loads, or
        # all it loaded before a check of the build's own stopped it (apache-rat), the build goes on: the offline
        # run then fails where the project's own `mvn test` does, in its words.
        if (
            self._refused(step)
            or maven.resolve_only_filter(self.src) is None
            or not (self._test_phase_resolves() or self.build_stopped_it)
        ):
            return self._fetch_failed(step, argv, self.src)
        loaded = "all it loaded before a check of the build stopped it" if self.build_stopped_it else "all it loads"
        said = f"go-offline failed, and the test phase resolved {loaded}: {self._cause(step)}"
        self.rep.lint_advisory.append(f"pom.xml:0:0 dependencies {said}")
        return True

    def _refused(self, step: StepResult) -> str | None:
        """A refused host is the cause where Maven's failure names it: a repository a pom names that Maven only
        asks for metadata (commons-jcs3-core 3.2.1's parent's apache.snapshots) it merely warns about."""
        said = maven.failed_goal(step.stdout)
        named = [h for h in refused_host_names(self.refusals) if h.rsplit(":", 1)[0] in said]
        return super()._refused(step) if named else None

    def _cause(self, step: StepResult) -> str:
        """Maven says why on stdout; its stderr holds only the JVM's notices."""
        return maven.failed_goal(step.stdout) or super()._cause(step)

    def _resolution_key(self) -> str:
        """What the cache's resolution stands for: the poms' bytes and the repository they came from."""
        return json.dumps([self.repository, maven.build_digest(self.src), self.mvn[0]])

    def _resolved_before(self) -> bool:
        """Whether this cache already holds everything these poms resolve to (released versions never change;
        a pom naming a SNAPSHOT is always resolved again), and what of the build stopped the resolving run then."""
        try:
            stamp = json.loads((self.m2 / RESOLVED_STAMP).read_text(encoding="utf-8"))
            resolved = bool(self.resolution) and stamp["resolution"] == self.resolution
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if resolved:
            self.resolving_failed = self.resolving_failed or str(stamp.get("stopped", ""))
        return resolved

    def _after_download(self) -> None:
        # A build a check of its own stopped (checkstyle, apache-rat) resolved all it loaded before the check: the
        # next job of these poms stops there too, or, once the sources pass the check, misses a plugin offline,
        # which drops the stamp and is retried as transient.
        if self._resolved_before() or not self.resolution:
            return
        if self._test_phase_resolves() or self.build_stopped_it:
            stamp = {"resolution": self.resolution, "stopped": self.build_stopped_it}
            (self.m2 / RESOLVED_STAMP).write_text(json.dumps(stamp), encoding="utf-8")

    def _test_phase_resolves(self) -> bool:
        """A test run that runs no test, still with the network: it fetches what only the test phase loads
        (Surefire's provider for the repository's JUnit, JaCoCo's agent). Its failures are the offline run's to
        report — a compile error there is FAILED ``build``, never a dependency error. Run once per job."""
        if self.test_phase_resolved is None:
            filter_ = maven.resolve_only_filter(self.src)
            step = None
            if filter_ is not None:
                step = self._run(self._confined(), self._test_command(filter_, offline=False), self.src, self.env)
                if not step.ok:
                    goal = self.resolving_failed = maven.failed_goal(step.stdout)
                    self.log.write(f"dependencies: the resolving test run: {goal}")
                    if not step.timed_out and not maven.offline_miss(step.stdout):
                        self.build_stopped_it = goal
            self.test_phase_resolved = step is None or step.ok
        return self.test_phase_resolved

    def _test_command(self, test_filter: str | None, offline: bool = True, measured: bool = True) -> list[str]:
        """``mvn test`` of ``test_filter``'s classes, failures left to the reports; ``measured``: with JaCoCo's agent
        and report, else with the repository's own JaCoCo skipped too."""
        selection = [f"-Dtest={test_filter}", "-Dsurefire.failIfNoSpecifiedTests=false"] if test_filter else []
        # skipped, prepare-agent still defines the argLine property, which a pom's `@{argLine}` needs
        report = f"{maven.JACOCO}:report" if measured else "-Djacoco.skip=true"
        coverage = [*self.agent, "test", report]
        return self._maven(*coverage, "-Dmaven.test.failure.ignore=true", *selection, offline=offline)

    def _selected_classes(self) -> str | None:
        """Surefire's ``-Dtest`` of ``--select`` (None: the suite)."""
        classes = surefire.selection(self.cfg.select) if self.cfg.select else {}
        return ",".join(c for per_module in classes.values() for c in per_module) or None

    @property
    def offline_env(self) -> dict[str, str]:
        """The offline steps' environment: they may write only the workspace, so their temp dir is in it."""
        opts = os.environ.get("MAVEN_OPTS", "")
        return {**self.env, "TMPDIR": str(self.tmp), **maven.jvm_options(opts, str(self.tmp))}

    def _offline(self, argv: list[str]) -> StepResult:
        """A Maven command offline in the sandbox: the workspace writable, the local repository readable."""
        env = self.offline_env
        readable = (self.m2, Path(self.env["MAVEN_USER_HOME"]))
        return self._run(proc.sandbox(self.cfg.workspace, readable), argv, self.src, env)

    def _compile(self) -> bool:
        self._clear_reports()
        if self.cfg.lint_only:
            step = self._offline(self._maven("test-compile"))
        else:
            step = self.run_step = self._offline(self._test_command(self._selected_classes()))
            self.rep.test_command = step.argv
        return self._build_ok(step)

    def _clear_reports(self) -> None:
        """Surefire's reports of an earlier run (the resolving run's, a committed target/'s, the run before)."""
        for reports in self.src.rglob(SUREFIRE_REPORTS):
            shutil.rmtree(reports, ignore_errors=True)

    def _build_ok(self, step: StepResult) -> bool:
        """Whether Maven got as far as the tests; otherwise the report says why, in javac's or Maven's words."""
        if step.timed_out:
            self.rep.errored("timeout", "`mvn test` ran out of the job's time budget")
            return False
        if step.ok:
            return True
        output = step.stdout + step.stderr
        errors = javac.compile_errors(output, self.src)
        said = "; ".join(errors[:3]) or self.in_repo(maven.failed_goal(output) or step.last_stderr_line())
        if errors:
            self.rep.failed("build", f"`mvn` failed to compile: {said}")
        elif maven.offline_miss(output) and maven.same_goal(self.resolving_failed, maven.failed_goal(output)):
            # The resolving run, which could reach the Maven repository, failed there too: the repository lacks
            # what the build needs (commons-collections 3.2.2's animal-sniffer signature), which no retry changes.
            said = self.in_repo(self.resolving_failed)
            self.rep.errored(
                "dependencies",
                f"the Maven repository lacks what `mvn` needs (deterministic: not retried): {said}",
                transient=False,
            )
        elif maven.offline_miss(output):
            # The cache's resolution was not enough after all (an entry evicted from it): the next attempt
            # resolves again.
            (self.m2 / RESOLVED_STAMP).unlink(missing_ok=True)
            self.rep.errored("dependencies", f"the dependency phase did not fetch what Maven needs offline: {said}",
                             transient=True)  # fmt: skip
        elif maven.fork_crashed(output):
            return True  # the reports say what ran; _judge reports the crash
        elif maven.coverage_report_failed(output):  # the project's build and tests ran: Surefire's reports say how
            self.rep.lint_advisory.append(f".:0:0 coverage JaCoCo could not report, no coverage: {said}")
            return True
        else:
            self.rep.failed("build", f"`mvn` failed: {said}")
        return False

    def _run_again(self) -> None:
        """Maven's test phase again, unmeasured (coverage is the first run's; the compile has nothing left to do):
        Surefire runs in it, not in ``_tests``."""
        self._clear_reports()
        step = self.run_step = self._offline(self._test_command(self._selected_classes(), measured=False))
        if self._build_ok(step):
            self._judge(self._tests())

    def _lint(self) -> list[str]:
        """Java has no linter every project uses: the checks a repository configures (checkstyle, spotless,
        enforcer…) run in its own lifecycle, inside the build step, and fail it there."""
        return []

    def _tests(self) -> tuple[RunResults, StepResult | None]:
        run = RunResults()
        for module, _reports in maven.modules_with(self.src, SUREFIRE_REPORTS):
            run.add(surefire.read_reports(self.src, module))
        self.rep.counts, self.rep.failed_tests, self.rep.failures = run.counts, run.failed, run.failures
        return run, self.run_step

    def _coverage(self) -> None:
        reports = maven.modules_with(self.src, JACOCO_REPORT)
        if not reports:
            if (
                self.run_step is not None
                and maven.NO_EXECUTION_DATA in self.run_step.stdout
                and self.rep.counts["total"]
            ):
                said = (
                    "JaCoCo's agent recorded nothing: no test JVM ran it (Surefire's forkCount 0, or an argLine "
                    "that a parent pom outside the repository sets; keep the agent with `@{argLine} …`)"
                )
                self.rep.lint_advisory.append(f"pom.xml:0:0 coverage {said}")
            return
        try:
            xml, source_dirs = maven.merged_jacoco(reports)
            self.rep.coverage = coverage_formats.from_jacoco(xml, self.src, source_dirs)
        except (coverage_formats.CoverageFormatError, SyntaxError) as exc:  # ET.ParseError is a SyntaxError
            self.log.write(f"coverage: {exc}")
            return
        (self.cfg.out / JACOCO_XML).write_text(xml, encoding="utf-8")
        (self.cfg.out / COVERAGE).write_text(json.dumps(self.rep.coverage), encoding="utf-8")

    def _no_tests(self, step: StepResult | None) -> str:
        if self.cfg.select:
            return "`mvn test` ran no tests of the selected ids"
        if step is not None and maven.SUREFIRE_SKIPPED in step.stdout:
            return (
                "`mvn test` ran no tests: the build skips Surefire's (`Tests are skipped.`); mendflow runs the tests "
                "of the test phase, not those a later phase runs (failsafe's integration-test)"
            )
        return "`mvn test` ran no tests at all; add JUnit tests under src/test/java"

    def _judge(self, outcome: tuple[RunResults, StepResult | None]) -> None:
        run, step = outcome
        rep = self.rep
        if step is not None and not step.ok and maven.fork_crashed(step.stdout + step.stderr):
            rep.failed("tests", f"a test JVM crashed: {maven.failed_goal(step.stdout)}")
        elif run.failed:
            rep.failed("tests")
        elif run.counts["total"] == 0:
            rep.failed("no_tests", self._no_tests(step))
        elif rep.lint_errors:
            rep.failed("lint")
