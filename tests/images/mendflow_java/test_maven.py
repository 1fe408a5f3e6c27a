"""What the Java runner reads of a Maven project and of Maven's output."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import pytest
from mendflow_java import maven


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


WRAPPER_PROPERTIES = (
    "distributionUrl=https\\://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.9/x.zip\n"
)


def test_a_wrapper_s_distribution_is_read_from_its_properties(tmp_path: Path) -> None:
    src = _write(tmp_path, {"mvnw": "#!/bin/sh\n", maven.WRAPPER_PROPERTIES: WRAPPER_PROPERTIES})
    assert (
        maven.wrapper_distribution(src)
        == "https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.9/x.zip"
    )


def test_properties_without_the_script_are_no_wrapper(tmp_path: Path) -> None:
    assert maven.wrapper_distribution(_write(tmp_path, {maven.WRAPPER_PROPERTIES: WRAPPER_PROPERTIES})) is None


def test_a_wrapper_naming_no_distribution_is_refused(tmp_path: Path) -> None:
    src = _write(tmp_path, {"mvnw": "#!/bin/sh\n", maven.WRAPPER_PROPERTIES: "wrapperVersion=3.3.2\n"})
    with pytest.raises(maven.WrapperError, match="no distributionUrl"):
        maven.wrapper_distribution(src)


def test_a_wrapper_is_honoured_only_from_the_reachable_repository() -> None:
    assert maven.wrapper_allowed("https://repo.maven.apache.org/maven2/a.zip", maven.CENTRAL)
    assert not maven.wrapper_allowed("https://services.gradle.org/a.zip", maven.CENTRAL)


def test_the_mirror_settings_route_every_repository_through_one_url() -> None:
    mirror = ET.fromstring(maven.settings_xml("https://nexus.example/repo?a=1&b=2")).find(".//{*}mirror")
    assert mirror is not None
    assert mirror.findtext("{*}mirrorOf") == "*" and mirror.findtext("{*}url") == "https://nexus.example/repo?a=1&b=2"


def test_a_module_s_test_source_names_its_class() -> None:
    assert maven.class_name(PurePosixPath("core/src/test/java/org/x/FooTest.java")) == "org.x.FooTest"


def test_the_resolving_run_names_a_real_test_class(tmp_path: Path) -> None:
    src = _write(tmp_path, {"src/test/java/org/x/Helper.java": "", "src/test/java/org/x/FooTest.java": ""})
    assert maven.resolve_only_filter(src) == f"org.x.FooTest#{maven.RESOLVE_ONLY_METHOD}"


def test_the_resolving_run_names_no_integration_test_project_s_class(tmp_path: Path) -> None:
    """maven-resources-plugin 3.3.1 as released: ``src/it/MRESOURCES-131``'s AppTest sorted first, matched nothing
    in the plugin's own module, and its surefire provider went unfetched."""
    src = _write(
        tmp_path,
        {"pom.xml": _pom(), "src/it/p/src/test/java/x/it/AppTest.java": "", "src/test/java/org/x/FooTest.java": ""},
    )
    assert maven.resolve_only_filter(src) == f"org.x.FooTest#{maven.RESOLVE_ONLY_METHOD}"


def test_without_test_classes_there_is_no_resolving_run(tmp_path: Path) -> None:
    assert maven.resolve_only_filter(_write(tmp_path, {"src/main/java/org/x/Foo.java": ""})) is None


def _pom(version: str = "1.0", modules: str = "", profiles: str = "") -> str:
    return (
        f'<project xmlns="http://maven.apache.org/POM/4.0.0"><version>{version}</version>'
        f"<modules>{modules}</modules><profiles>{profiles}</profiles></project>"
    )


def test_the_build_s_poms_are_the_root_s_and_its_modules_not_fixtures(tmp_path: Path) -> None:
    fixture = {"core/src/test/resources/pom.xml": _pom()}
    src = _write(tmp_path, {"pom.xml": _pom(modules="<module>core</module>"), "core/pom.xml": _pom(), **fixture})
    assert maven.poms(src) == [src / "pom.xml", src / "core/pom.xml"]


def test_a_module_named_in_a_profile_is_the_build_s(tmp_path: Path) -> None:
    profile = "<profile><modules><module>extra</module></modules></profile>"
    src = _write(tmp_path, {"pom.xml": _pom(profiles=profile), "extra/pom.xml": _pom()})
    assert maven.poms(src) == [src / "pom.xml", src / "extra/pom.xml"]


def test_a_module_without_a_pom_is_skipped(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom(modules="<module>gone</module>")})
    assert maven.poms(src) == [src / "pom.xml"]


def test_a_snapshot_version_in_a_module_s_pom_is_seen(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom(modules="<module>core</module>"), "core/pom.xml": _pom("2.0-SNAPSHOT")})
    assert maven.uses_snapshots(src)


def test_a_snapshot_version_in_a_test_fixture_s_pom_is_not_the_build_s(tmp_path: Path) -> None:
    """maven-filtering 3.4.0 as released: a fixture pom's SNAPSHOT kept every job from reusing its resolution."""
    src = _write(tmp_path, {"pom.xml": _pom(), "src/test/resources/pom.xml": _pom("1.0-SNAPSHOT")})
    assert not maven.uses_snapshots(src)


def test_the_build_digest_follows_a_module_s_pom_and_ignores_build_output(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom(modules="<module>core</module>"), "core/pom.xml": "<b/>"})
    before = maven.build_digest(src)
    _write(src, {"core/target/pom.xml": "<c/>"})
    assert maven.build_digest(src) == before
    _write(src, {"core/pom.xml": "<c/>"})
    assert maven.build_digest(src) != before


def test_a_repository_running_jacoco_itself_is_seen(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": "<artifactId>jacoco-maven-plugin</artifactId>"})
    assert maven.configures_jacoco(src)


COMPILE_FAILURE = """\
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.14.1:compile (default-compile) \
on project isbn: Compilation failure -> [Help 1]
[ERROR]
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
"""
OFFLINE_MISS = """\
[ERROR] Failed to execute goal on project isbn: Could not resolve dependencies for project org.example:isbn:jar:1.0.0: \
Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact \
org.junit.jupiter:junit-jupiter:jar:5.14.4 has not been downloaded from it before. -> [Help 1]
"""


def test_maven_s_failed_goal_is_its_summary() -> None:
    assert maven.failed_goal(COMPILE_FAILURE).startswith("Failed to execute goal org.apache.maven.plugins:maven-comp")
    assert maven.failed_goal(COMPILE_FAILURE).endswith("Compilation failure")


SPOTLESS_FAILURE = """\
[ERROR] Failed to execute goal com.diffplug.spotless:spotless-maven-plugin:2.43.0:check (default) on project \
filters: The following files had format violations:
[ERROR]     src/test/java/org/example/FilterTest.java
[ERROR]         @@ -1,405 +1,405 @@
[ERROR]         -/*\\r\\n
[ERROR]     src/main/java/org/example/Filter.java
[ERROR]         @@ -1,2 +1,2 @@
[ERROR]     ... (762 more lines that didn't fit)
[ERROR] Violations also present in 55 other files.
[ERROR] Run 'mvn spotless:apply' to fix these violations.
[ERROR] -> [Help 1]
"""


def test_a_failed_goal_that_lists_names_what_it_lists() -> None:
    """maven-common-artifact-filters 3.4.0 as released: spotless names the files, less indented than their diffs."""
    said = maven.failed_goal(SPOTLESS_FAILURE)
    assert said.endswith("violations: src/test/java/org/example/FilterTest.java, src/main/java/org/example/Filter.java")


def test_an_artifact_missing_offline_is_a_dependency_miss() -> None:
    assert maven.offline_miss(OFFLINE_MISS) and not maven.offline_miss(COMPILE_FAILURE)


MAVEN_38_MISSING = """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.0.0-M7:test (default-test) on \
project maven-resources-plugin: Missing:
[ERROR] ----------
[ERROR] 1) org.apache.maven.surefire:surefire-junit4:jar:3.0.0-M7
[ERROR]
[ERROR]   Try downloading the file manually from the project website.
[ERROR]   Path to dependency:
[ERROR]   \t1) dummy:dummy:jar:1.0
[ERROR]   \t2) org.apache.maven.surefire:surefire-junit4:jar:3.0.0-M7
[ERROR] ----------
[ERROR] 1 required artifact is missing.
"""


def test_maven_3_8_s_missing_artifact_is_a_dependency_miss() -> None:
    """maven-resources-plugin 3.3.1 as released, built with Maven 3.8: surefire's provider missing offline."""
    assert maven.offline_miss(MAVEN_38_MISSING)


def test_maven_3_8_s_missing_list_names_its_first_artifact() -> None:
    said = maven.failed_goal(MAVEN_38_MISSING)
    assert said.endswith("Missing: org.apache.maven.surefire:surefire-junit4:jar:3.0.0-M7")


def test_every_module_s_jacoco_report_is_merged_with_its_source_directory(tmp_path: Path) -> None:
    report = '<report name="m"><package name="org/{0}"><sourcefile name="A.java"/></package></report>'
    src = _write(tmp_path, {f"{m}/target/site/jacoco/jacoco.xml": report.format(m) for m in ("a", "b")})
    found = maven.modules_with(src, "target/site/jacoco/jacoco.xml")
    merged, dirs = maven.merged_jacoco(found)
    assert [m.as_posix() for m, _ in found] == ["a", "b"] and dirs == ["a/src/main/java", "b/src/main/java"]
    assert [p.get("name") for p in ET.fromstring(merged).iter("package")] == ["org/a", "org/b"]


def test_a_plugin_s_failure_is_no_test_jvm_crash() -> None:
    help_link = "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/PluginExecutionException"
    assert not maven.fork_crashed(COMPILE_FAILURE + help_link)


def test_surefire_s_dead_fork_is_a_crash() -> None:
    assert maven.fork_crashed(
        "[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?"
    )


def test_maven_s_jvm_gets_the_phase_s_temp_dir_after_the_job_s_options() -> None:
    assert maven.jvm_options("-Xmx1g", "/ws/tmp") == {
        "MAVEN_OPTS": f"-Xmx1g {maven.JOB_JAVA_OPTIONS} -Djava.io.tmpdir=/ws/tmp"
    }


def test_a_long_list_after_a_failed_goal_is_cut_to_three() -> None:
    goal = SPOTLESS_FAILURE.splitlines()[0]
    files = "".join(f"[ERROR]     src/F{i}.java\n" for i in range(5))
    said = maven.failed_goal(f"{goal}\n{files}")
    assert said.endswith("violations: src/F0.java, src/F1.java, src/F2.java and 2 more")


def test_two_summaries_of_one_goal_execution_are_the_same_goal() -> None:
    online = "Failed to execute goal org.x:p:1.0:check (api) on project demo: Failed to obtain signature: not found"
    offline = "Failed to execute goal org.x:p:1.0:check (api) on project demo: Cannot access central in offline mode"
    assert maven.same_goal(online, offline)


def test_another_project_s_execution_is_another_goal() -> None:
    one = "Failed to execute goal org.x:p:1.0:check (api) on project demo: x"
    assert not maven.same_goal(one, one.replace("project demo", "project other"))
    assert not maven.same_goal("", one)


def _pom_with_surefire(configuration: str, extra: str = "") -> str:
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><build><plugins>'
        f"<plugin><artifactId>maven-surefire-plugin</artifactId><configuration>{configuration}</configuration></plugin>"
        f"{extra}</plugins></build></project>"
    )


def test_surefire_s_own_arg_line_is_made_to_keep_the_agent(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom_with_surefire("<argLine>-Xmx25M</argLine>")})
    assert maven.keep_agent(src) == [src / "pom.xml"]
    assert "<argLine>@{argLine} -Xmx25M</argLine>" in (src / "pom.xml").read_text(encoding="utf-8")


def test_an_empty_arg_line_is_made_the_agent_s_alone(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom_with_surefire("<argLine/>")})
    maven.keep_agent(src)
    assert "<argLine>@{argLine}</argLine>" in (src / "pom.xml").read_text(encoding="utf-8")


def test_an_arg_line_naming_the_property_is_left_alone(tmp_path: Path) -> None:
    src = _write(tmp_path, {"pom.xml": _pom_with_surefire("<argLine>${argLine} -Xmx25M</argLine>")})
    assert maven.keep_agent(src) == []


def test_only_surefire_s_arg_line_is_changed(tmp_path: Path) -> None:
    # a property named argLine, another plugin's, and one in a comment come before Surefire's
    failsafe = "<plugin><artifactId>maven-failsafe-plugin</artifactId><configuration><argLine>-Da</argLine>"
    pom = _pom_with_surefire("<argLine>-Db</argLine>", failsafe + "</configuration></plugin>").replace(
        "<build>", "<properties><argLine>-Dc</argLine></properties><!-- <argLine>-Dd</argLine> --><build>"
    )
    src = _write(tmp_path, {"pom.xml": pom})
    maven.keep_agent(src)
    assert (src / "pom.xml").read_text(encoding="utf-8") == pom.replace("<argLine>-Db", "<argLine>@{argLine} -Db")


def test_a_module_s_surefire_arg_line_is_changed_too(tmp_path: Path) -> None:
    root = '<project xmlns="http://maven.apache.org/POM/4.0.0"><modules><module>core</module></modules></project>'
    src = _write(tmp_path, {"pom.xml": root, "core/pom.xml": _pom_with_surefire("<argLine>-Xmx25M</argLine>")})
    assert maven.keep_agent(src) == [src / "core/pom.xml"]
