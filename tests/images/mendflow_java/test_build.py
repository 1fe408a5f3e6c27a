"""The Java runner on real Maven projects with the host's JDK, Maven, Surefire, JaCoCo and Maven Central:
statuses, ids, coverage, the dependency phase's reuse."""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from mendflow_java.build import RESOLVED_STAMP, JavaBuild
from mendflow_runner.config import parse_args
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.report import Report

from mendflow.contracts import BuildReport, BuildStatus, CoverageFormat, FailReason
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_java.helpers import (
    SOURCE_FILE,
    TEST_FILE,
    example_files,
    needs_maven,
    run_java_runner,
)
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = needs_maven

Files = dict[str, str | bytes | None]
TESTS = example_files()[TEST_FILE]
SOURCE = example_files()[SOURCE_FILE]
POM = example_files()["pom.xml"]
assert isinstance(TESTS, str) and isinstance(SOURCE, str) and isinstance(POM, str)


def _with_plugin(coordinates: str, execution: str) -> str:
    """The example's pom with one more plugin (``group:artifact:version``), bound by ``execution``'s lines."""
    group, artifact, version = coordinates.split(":")
    inner = "\n".join(f"            {line}" for line in execution.splitlines())
    plugin = (
        f"      <plugin>\n        <groupId>{group}</groupId>\n        <artifactId>{artifact}</artifactId>\n"
        f"        <version>{version}</version>\n        <executions>\n          <execution>\n{inner}\n"
        "          </execution>\n        </executions>\n      </plugin>\n    </plugins>"
    )
    return POM.replace("    </plugins>", plugin, 1)


def _build(make_repo: RepoFactory, tmp_path: Path, cache: Path, files: Files, *args: str, **env: str) -> BuildReport:
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    return BuildReport.model_validate(run_java_runner(source, tmp_path / "out", cache, *args, **env))


def test_the_example_passes_with_its_tests_and_jacoco_coverage(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, java_cache, example_files())
    assert (report.status, report.tests.passed, report.tests.total) == (BuildStatus.PASSED, 5, 5)
    assert report.coverage is not None and report.coverage.format is CoverageFormat.JACOCO
    assert [f.path for f in report.coverage.files] == [SOURCE_FILE]
    assert 60 < report.coverage.line_pct < 75 and report.coverage.branch_data is True
    assert (tmp_path / "out" / "jacoco.xml").is_file()


def test_a_failing_test_is_failed_tests_naming_its_file_and_method(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    wrong = TESTS.replace('assertEquals("9780306406157", isbn.digits());', 'assertEquals("0", isbn.digits());')
    report = _build(make_repo, tmp_path, java_cache, example_files(**{TEST_FILE: wrong}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == [f"{TEST_FILE}::parsesHyphenatedIsbn13"]
    assert report.tests.passed == 4
    assert report.failures[0].location.startswith(f"{TEST_FILE}:")


def test_code_that_does_not_compile_fails_the_build_in_javac_s_words(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    broken = SOURCE.replace("public boolean isIsbn13() {", "public boolean isIsbn13() {\n    undefinedCall();", 1)
    report = _build(make_repo, tmp_path, java_cache, example_files(**{SOURCE_FILE: broken}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None
    assert f"{SOURCE_FILE}:63:5 cannot find symbol" in report.error_reason


def test_select_runs_only_the_named_method(make_repo: RepoFactory, tmp_path: Path, java_cache: Path) -> None:
    selected = json.dumps([f"{TEST_FILE}::rejectsWrongLength"])
    report = _build(make_repo, tmp_path, java_cache, example_files(), "--select", selected)
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)


def test_a_gradle_build_is_refused_in_one_line(make_repo: RepoFactory, tmp_path: Path, java_cache: Path) -> None:
    files: Files = {"build.gradle": "plugins { id 'java' }\n", SOURCE_FILE: SOURCE}
    report = _build(make_repo, tmp_path, java_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert report.error_reason is not None and "this is a Gradle build (build.gradle)" in report.error_reason


PARENT_POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>parent</artifactId>
  <version>1.0.0</version>
  <packaging>pom</packaging>
  <modules><module>isbn</module><module>labels</module></modules>
</project>
"""
LABELS_POM = POM.replace("<artifactId>isbn</artifactId>", "<artifactId>labels</artifactId>")
LABEL = "package org.example.labels;\n\npublic final class Label {\n  public static String of(String s) {\n" \
    "    return s.isEmpty() ? \"-\" : \"#\" + s;\n  }\n}\n"  # fmt: skip
LABEL_TEST = """\
package org.example.labels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LabelTest {
  @Test
  void labelsAName() {
    assertEquals("#a", Label.of("a"));
  }
}
"""


def test_a_reactor_adds_up_its_modules_with_module_prefixed_ids(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    files: Files = {
        "pom.xml": PARENT_POM,
        **{f"isbn/{path}": text for path, text in example_files().items()},
        "labels/pom.xml": LABELS_POM,
        "labels/src/main/java/org/example/labels/Label.java": LABEL,
        "labels/src/test/java/org/example/labels/LabelTest.java": LABEL_TEST.replace('"#a"', '"#b"'),
    }
    report = _build(make_repo, tmp_path, java_cache, files)
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.FAILED, 6, 5)
    assert report.failed_tests == ["labels/src/test/java/org/example/labels/LabelTest.java::labelsAName"]
    assert report.coverage is not None
    assert {f.path for f in report.coverage.files} == {
        f"isbn/{SOURCE_FILE}",
        "labels/src/main/java/org/example/labels/Label.java",
    }


# commons-io 2.6: a reporting plugin `mvn test` never loads, whose dependency (cobertura's com.sun:tools, a
# system-scoped tools.jar) no Java since 9 has: go-offline fails on it.
REPORTING = """\
  <reporting>
    <plugins>
      <plugin><groupId>org.codehaus.mojo</groupId><artifactId>cobertura-maven-plugin</artifactId><version>2.7</version></plugin>
    </plugins>
  </reporting>
</project>"""


def test_a_reporting_plugin_that_cannot_resolve_leaves_the_test_phase_to_build(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": POM.replace("</project>", REPORTING)}))
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.tests.passed > 0
    assert any("go-offline failed, and the test phase resolved all it loads" in a for a in report.lint_advisory)


# commons-text 1.12.0 as its jars rebuild it: apache-rat's check, bound before `test`, fails the project's own
# `mvn test`, and go-offline fails on a plugin bound after `test` (its spotbugs) the Maven repository lacks.
FAILING_CHECK = _with_plugin(
    "org.apache.maven.plugins:maven-enforcer-plugin:3.5.0",
    """\
<id>a-check</id>
<goals><goal>enforce</goal></goals>
<configuration><rules><requireProperty><property>no.such.property</property></requireProperty></rules></configuration>""",
)


def test_a_check_of_the_build_that_stops_the_test_phase_fails_the_build_in_its_words(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    pom = FAILING_CHECK.replace("</project>", REPORTING)
    report = _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": pom}))
    assert report.status is BuildStatus.FAILED, report.error_reason
    assert "maven-enforcer-plugin:3.5.0:enforce (a-check)" in (report.error_reason or "")
    said = "go-offline failed, and the test phase resolved all it loaded before a check of the build stopped it"
    assert any(said in a for a in report.lint_advisory)


def test_a_second_build_stopped_by_the_same_check_reuses_the_resolution(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    # commons-numbers-primes 1.2: its checkstyle stopped every build, and go-offline ran again in each (34 s).
    files = example_files(**{"pom.xml": FAILING_CHECK})
    _build(make_repo, tmp_path / "first", java_cache, files)
    report = _build(make_repo, tmp_path / "second", java_cache, files)
    assert report.status is BuildStatus.FAILED
    assert "maven-enforcer-plugin:3.5.0:enforce (a-check)" in (report.error_reason or "")
    assert report.durations["dependencies"] < 1.0


# An artifact the build fetches when it runs, as commons-collections 3.2.2's animal-sniffer fetches its signature,
# which the Maven repository lacks: the project's own `mvn test` fails there.
FETCHES_A_MISSING_ARTIFACT = _with_plugin(
    "org.apache.maven.plugins:maven-dependency-plugin:3.8.1",
    """\
<id>fetch</id>
<phase>process-test-resources</phase>
<goals><goal>copy</goal></goals>
<configuration>
  <artifactItems><artifactItem><groupId>org.example.mendflow</groupId><artifactId>absent</artifactId><version>1.0</version></artifactItem></artifactItems>
</configuration>""",
)


def test_an_artifact_the_maven_repository_lacks_is_a_dependency_error_not_retried(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": FETCHES_A_MISSING_ARTIFACT}))
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        False,
    )
    assert "maven-dependency-plugin:3.8.1:copy (fetch)" in (report.error_reason or "")
    assert "Could not find artifact org.example.mendflow:absent:jar:1.0 in central" in (report.error_reason or "")


# commons-collections 3.2.2 itself: animal-sniffer's words for the signature it cannot fetch are no offline miss.
CHECKS_AGAINST_A_MISSING_SIGNATURE = _with_plugin(
    "org.codehaus.mojo:animal-sniffer-maven-plugin:1.14",
    """\
<id>api</id>
<phase>process-classes</phase>
<goals><goal>check</goal></goals>
<configuration>
  <signature><groupId>org.example.mendflow</groupId><artifactId>absent</artifactId><version>1.0</version></signature>
</configuration>""",
)


def test_a_signature_the_maven_repository_lacks_is_a_dependency_error_not_retried_again(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    # Maven says "Could not find artifact" the first time, then "was not found … during a previous attempt".
    files = example_files(**{"pom.xml": CHECKS_AGAINST_A_MISSING_SIGNATURE})
    cache = tmp_path / "cache"
    _build(make_repo, tmp_path / "first", cache, files)
    report = _build(make_repo, tmp_path / "second", cache, files)
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        False,
    )
    assert "animal-sniffer-maven-plugin:1.14:check (api)" in (report.error_reason or "")


def test_the_goal_that_stopped_the_resolving_run_is_kept_for_the_next_job(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": FAILING_CHECK}))
    stamp = json.loads((java_cache / "m2" / RESOLVED_STAMP).read_text(encoding="utf-8"))
    assert "maven-enforcer-plugin:3.5.0:enforce (a-check)" in stamp["stopped"]


def _surefire(configuration: str) -> str:
    """The example's pom with ``configuration`` for its Surefire."""
    return POM.replace(
        "<version>3.5.4</version>", f"<version>3.5.4</version>\n        <configuration>{configuration}</configuration>"
    )


def test_a_surefire_arg_line_of_the_pom_s_own_keeps_jacoco_s_agent(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    # commons-io 2.6: <argLine>-Xmx25M</argLine> replaced the argLine JaCoCo's prepare-agent sets.
    report = _build(
        make_repo, tmp_path, java_cache, example_files(**{"pom.xml": _surefire("<argLine>-Xmx256m</argLine>")})
    )
    assert report.status is BuildStatus.PASSED and report.coverage is not None
    assert 60 < report.coverage.line_pct < 75


def test_a_pom_s_own_arg_line_still_applies_to_the_test_jvm(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    asserted = TESTS.replace(
        'assertEquals("9780306406157", isbn.digits());',
        'assertEquals("9780306406157", isbn.digits());\n    assertEquals("yes", System.getProperty("pom.own"));',
    )
    files = example_files(**{"pom.xml": _surefire("<argLine>-Dpom.own=yes</argLine>"), TEST_FILE: asserted})
    report = _build(make_repo, tmp_path, java_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5)


def test_a_pom_s_own_arg_line_runs_again_unmeasured(make_repo: RepoFactory, tmp_path: Path, java_cache: Path) -> None:
    # the unmeasured runs skip JaCoCo, whose skipped prepare-agent still defines the property `@{argLine}` names
    files = example_files(**{"pom.xml": _surefire("<argLine>-Xmx256m</argLine>")})
    report = _build(make_repo, tmp_path, java_cache, files, "--runs", "2")
    assert (report.status, report.runs, report.tests.passed) == (BuildStatus.PASSED, 2, 5)


def test_tests_in_maven_s_own_jvm_say_why_there_is_no_coverage(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    report = _build(
        make_repo, tmp_path, java_cache, example_files(**{"pom.xml": _surefire("<forkCount>0</forkCount>")})
    )
    assert report.status is BuildStatus.PASSED and report.coverage is None
    assert any("JaCoCo's agent recorded nothing: no test JVM ran it" in a for a in report.lint_advisory)


def test_a_build_that_skips_surefire_says_so_for_running_no_tests(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    # commons-logging 1.3.4: <skip>true</skip>, and its tests run with failsafe after package
    report = _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": _surefire("<skip>true</skip>")}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert "the build skips Surefire's (`Tests are skipped.`)" in (report.error_reason or "")


def test_a_second_build_of_the_same_poms_reuses_the_resolution(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    _build(make_repo, tmp_path / "first", java_cache, example_files())
    report = _build(make_repo, tmp_path / "second", java_cache, example_files())
    assert report.status is BuildStatus.PASSED
    assert report.durations["dependencies"] < 1.0


@pytest.mark.parametrize("version", ["1.0.0-SNAPSHOT"])
def test_a_pom_naming_a_snapshot_is_resolved_again(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path, version: str
) -> None:
    files = example_files(**{"pom.xml": POM.replace("<version>1.0.0</version>", f"<version>{version}</version>")})
    _build(make_repo, tmp_path / "first", java_cache, files)
    report = _build(make_repo, tmp_path / "second", java_cache, files)
    assert report.status is BuildStatus.PASSED
    assert report.durations["dependencies"] > 1.0


def test_a_cache_entry_evicted_after_resolving_is_a_transient_dependency_error(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    _build(make_repo, tmp_path / "first", cache, example_files())
    shutil.rmtree(cache / "m2" / "org" / "junit")
    report = _build(make_repo, tmp_path / "second", cache, example_files())
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        True,
    )
    assert report.error_reason is not None and "did not fetch what Maven needs offline" in report.error_reason
    assert not (cache / "m2" / RESOLVED_STAMP).exists()  # the retry resolves again


# A plugin that writes in Maven's own JVM's temp dir (as spotless's sortPom does: java.io.tmpdir).
ANTRUN = _with_plugin(
    "org.apache.maven.plugins:maven-antrun-plugin:3.1.0",
    """\
<phase>validate</phase>
<goals><goal>run</goal></goals>
<configuration><target><echo file="${java.io.tmpdir}/scratch.txt" message="x"/></target></configuration>""",
)


def test_maven_s_own_jvm_writes_its_temp_files_in_the_workspace(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    pom = ANTRUN
    # The launcher's TMPDIR: the dependency phase's, read-only offline (and not under /tmp, which the offline
    # sandbox replaces with a fresh one).
    outside = Path(tempfile.mkdtemp(prefix="mendflow-job-tmp-", dir="/var/tmp"))
    try:
        report = _build(make_repo, tmp_path, java_cache, example_files(**{"pom.xml": pom}), TMPDIR=str(outside))
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason


HOME_TEST = """\
package org.example.isbn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HomeTest {
  @Test
  void userHomeIsTheJobsHome() {
    assertEquals(System.getenv("HOME"), System.getProperty("user.home"));
  }
}
"""


def test_a_test_jvms_user_home_is_the_jobs_home(make_repo: RepoFactory, tmp_path: Path, java_cache: Path) -> None:
    # The JVM reads user.home from the passwd entry, which a job's uid lacks (commons-lang3's testGetUserHome).
    home_test = TEST_FILE.replace("IsbnTest.java", "HomeTest.java")
    report = _build(make_repo, tmp_path, java_cache, example_files(**{home_test: HOME_TEST}))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 6), report.failures


# plexus-utils 3.5.1's shape: a multi-release jar, one class again under META-INF/versions, which JaCoCo's report
# refuses ("Can't add different class with same name") after the tests ran.
MULTI_RELEASE = """\
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.1</version>
        <executions>
          <execution>
            <id>java17-versioned</id>
            <goals><goal>compile</goal></goals>
            <configuration>
              <compileSourceRoots>${project.basedir}/src/main/java17</compileSourceRoots>
              <multiReleaseOutput>true</multiReleaseOutput>
            </configuration>
          </execution>
        </executions>
      </plugin>"""
VERSIONED = 'package org.example.isbn;\n\nfinal class Runtime {\n  static String name() {\n    return "%s";\n  }\n}\n'


def test_a_jacoco_report_that_fails_after_the_tests_keeps_their_results(
    make_repo: RepoFactory, tmp_path: Path, java_cache: Path
) -> None:
    compiler = """\
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.1</version>
      </plugin>"""
    assert compiler in POM
    wrong = TESTS.replace('assertEquals("9780306406157", isbn.digits());', 'assertEquals("0", isbn.digits());')
    files = example_files(
        **{
            "pom.xml": POM.replace(compiler, MULTI_RELEASE),
            "src/main/java/org/example/isbn/Runtime.java": VERSIONED % "base",
            "src/main/java17/org/example/isbn/Runtime.java": VERSIONED % "java 17",
            TEST_FILE: wrong,
        }
    )
    report = _build(make_repo, tmp_path, java_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS), report.error_reason
    assert report.failed_tests == [f"{TEST_FILE}::parsesHyphenatedIsbn13"] and report.tests.passed == 4
    assert report.coverage is None
    assert any("JaCoCo could not report" in line for line in report.lint_advisory)


def test_runs_repeat_maven_s_test_phase(make_repo: RepoFactory, tmp_path: Path, java_cache: Path) -> None:
    selected = json.dumps([f"{TEST_FILE}::rejectsWrongLength"])
    report = _build(make_repo, tmp_path, java_cache, example_files(), "--select", selected, "--runs", "2")
    assert (report.status, report.runs, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 2, 1, 1)


# commons-jcs3-core 3.2.1: its parent names apache.snapshots, which Maven asks for plugin metadata and only warns
# it cannot reach; go-offline failed on a site plugin's groovy the Maven repository lacks.
SITE_PLUGIN_MISSING = (
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-dependency-plugin:3.8.1:go-offline (default-cli) "
    "on project demo: The following artifacts could not be resolved: org.apache.groovy:groovy-json:jar:5.1.3: "
    "org.apache.groovy:groovy-json:jar:5.1.3 was not found in https://repo.maven.apache.org/maven2"
)


def _java_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JavaBuild:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with tarfile.open(tmp_path / "source.tar", "w"):
        pass
    cfg = parse_args(["--source", str(tmp_path / "source.tar"), "--out", str(tmp_path / "out"), "--timeout", "60"])
    cfg.out.mkdir(parents=True)
    build = JavaBuild(cfg, Report(cfg), Log(cfg.out / "runner.log"))
    build.refusals.write_text("repository.apache.org:443\n", encoding="utf-8")
    return build


def test_a_refused_host_maven_only_warned_about_is_not_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = StepResult(["mvn"], 1, SITE_PLUGIN_MISSING, "", 1.0)
    assert _java_build(tmp_path, monkeypatch)._refused(step) is None


def test_a_refused_host_maven_failed_on_is_the_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said = SITE_PLUGIN_MISSING.replace("https://repo.maven.apache.org/maven2", "https://repository.apache.org/x")
    step = StepResult(["mvn"], 1, said, "", 1.0)
    assert "repository.apache.org:443 is not on its allowlist" in (
        _java_build(tmp_path, monkeypatch)._refused(step) or ""
    )
