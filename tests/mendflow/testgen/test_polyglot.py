"""The test builder's per-language layout, confinement, test ids and verdicts (the trusted side's decisions)."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    Coverage,
    CoverageFormat,
    CoverageTarget,
    DropReason,
    FailReason,
    FailureKind,
    FileCoverage,
    Language,
    TestCounts,
    TestFailure,
    TestSpec,
)
from mendflow.llm import LLMClient
from mendflow.testgen import polyglot
from mendflow.testgen.builder import not_generated
from tests.fixtures.llm_server import LLMServer, llm_settings
from tests.mendflow.plan.helpers import new_repo


def tree_of(path: Path, files: dict[str, str | bytes | None]) -> pygit2.Tree:
    repo = pygit2.Repository(str(new_repo(path, files)))
    return repo.head.peel(pygit2.Commit).tree


def where(language: Language, target: str, tree: pygit2.Tree) -> str:
    return polyglot.test_path(language, target, tree)


def test_go_tests_go_beside_the_source_in_its_package(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"go.mod": "module x\n", "pkg/bucket.go": "package pkg\n"})
    assert where(Language.GO, "pkg/bucket.go", tree) == "pkg/bucket_mendflow_test.go"


def test_an_existing_file_is_never_the_one_written(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"bucket.go": "package x\n", "bucket_mendflow_test.go": "package x\n"})
    assert where(Language.GO, "bucket.go", tree) == "bucket_mendflow2_test.go"


def test_typescript_tests_go_where_the_repository_keeps_them(tmp_path: Path) -> None:
    kept_apart = tree_of(tmp_path / "a", {"src/lib/money.ts": "", "tests/a.test.ts": ""})
    assert where(Language.TYPESCRIPT, "src/lib/money.ts", kept_apart) == "tests/lib/money.mendflow.test.ts"
    beside = tree_of(tmp_path / "b", {"src/money.ts": "", "src/other.test.ts": ""})
    assert where(Language.TYPESCRIPT, "src/money.ts", beside) == "src/money.mendflow.test.ts"
    js = tree_of(tmp_path / "c", {"lib/money.mjs": ""})
    assert where(Language.TYPESCRIPT, "lib/money.mjs", js) == "lib/money.mendflow.test.mjs"


def test_rust_tests_are_integration_tests_of_the_crate(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"Cargo.toml": "", "crates/a/Cargo.toml": "", "crates/a/src/lib.rs": ""})
    assert where(Language.RUST, "crates/a/src/lib.rs", tree) == "crates/a/tests/lib_mendflow.rs"


def test_java_tests_go_under_src_test_java_in_the_package(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"pom.xml": "", "src/main/java/com/acme/Money.java": ""})
    target = "src/main/java/com/acme/Money.java"
    assert where(Language.JAVA, target, tree) == "src/test/java/com/acme/MoneyMendflowTest.java"


def test_only_the_paths_chosen_before_generation_may_be_written(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"bucket.go": "package x\n", "link": b"", "d/x.go": ""})
    allowed = {"bucket_mendflow_test.go"}
    assert polyglot.check("bucket_mendflow_test.go", "package x\n", allowed, tree) is None
    for path in ("bucket.go", "../bucket_mendflow_test.go", "/tmp/x_test.go", "other_test.go"):
        rejection = polyglot.check(path, "package x\n", allowed, tree)
        assert rejection is not None and rejection.reason is DropReason.OUTSIDE_TESTS_DIR, path
    huge = polyglot.check("bucket_mendflow_test.go", "x" * 100_000, allowed, tree)
    assert huge is not None and huge.reason is DropReason.OVERSIZE


def test_each_runner_gets_ids_in_its_own_format() -> None:
    go = "package x\n\nfunc TestA(t *testing.T) {}\nfunc helper() {}\nfunc TestB(tt *testing.T) {}\n"
    assert polyglot.test_ids(Language.GO, "pkg/a_mendflow_test.go", go) == ["pkg::TestA", "pkg::TestB"]
    assert polyglot.test_ids(Language.GO, "a_mendflow_test.go", go) == [".::TestA", ".::TestB"]
    rust = "use d::parse;\n\n#[test]\nfn reads() {}\n\n#[test]\n#[should_panic]\nfn panics() {}\n"
    assert polyglot.test_ids(Language.RUST, "tests/x.rs", rust) == ["tests/x.rs::reads", "tests/x.rs::panics"]
    ts = 'import { it } from "vitest";\nit("adds", () => {});\n'
    assert polyglot.test_ids(Language.TYPESCRIPT, "tests/a.mendflow.test.ts", ts) == ["tests/a.mendflow.test.ts"]
    assert polyglot.test_ids(Language.TYPESCRIPT, "tests/a.mendflow.test.ts", "export {};\n") == []


def test_the_prompt_names_the_framework_the_repository_uses(tmp_path: Path) -> None:
    vitest = tree_of(tmp_path / "a", {"package.json": '{"devDependencies": {"vitest": "4"}}'})
    assert polyglot.framework(Language.TYPESCRIPT, vitest, []).startswith("vitest")
    plain = tree_of(tmp_path / "b", {"package.json": '{"scripts": {"test": "node --test"}}'})
    assert polyglot.framework(Language.TYPESCRIPT, plain, []).startswith("node:test")
    prompt = polyglot.system_prompt(Language.GO, "Go testing", {"a.go": "a_mendflow_test.go"})
    assert "a_mendflow_test.go" in prompt and "same package" in prompt


def test_offline_the_outcome_says_there_is_no_generator_for_the_language() -> None:
    spec = TestSpec(id="ts-1", repo="r", parent_commit_sha="0" * 40)
    assert not_generated(spec, Language.GO).notes == [
        "no offline generator for go: the test builder writes go tests with an LLM only"
    ]


SPEC = TestSpec(
    id="ts-2",
    repo="r",
    parent_commit_sha="0" * 40,
    targets=[
        CoverageTarget(
            path="bucket.go", symbol="Bucket.Reserve", start_line=1, end_line=9, line_pct=0.0, missing_lines=[5, 6]
        )
    ],
)
FILES = {"bucket_mendflow_test.go": "package x\n\nfunc TestR(t *testing.T) {}\n"}
SOURCES = {"bucket_mendflow_test.go": "bucket.go"}


def report(status: BuildStatus = BuildStatus.PASSED, missing: list[int] | None = None, **kw: object) -> BuildReport:
    cov = Coverage(
        format=CoverageFormat.GO,
        branch_data=False,
        line_pct=50.0,
        files=[FileCoverage(path="bucket.go", statements=9, missing_lines=missing or [], line_pct=50.0)],
    )
    counts = TestCounts(total=1, passed=1)
    return BuildReport.model_validate(
        {"repo": "r", "commit_sha": "1" * 40, "stage": "TG0", "status": status, "tests": counts, "coverage": cov, **kw}
    )


def test_a_test_that_runs_lines_the_build_missed_is_kept() -> None:
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, report(missing=[6], runs=3))
    assert [(k.node_id, k.lines_gained) for k in verdict.kept] == [(".::TestR", 1)] and not verdict.failing


def test_a_test_that_gains_nothing_is_dropped_saying_so() -> None:
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, report(missing=[5, 6]))
    assert [d.reason for d in verdict.dropped] == [DropReason.NO_COVERAGE_GAIN] and not verdict.kept


def test_a_package_that_does_not_compile_is_dropped_with_the_compilers_words() -> None:
    failure = TestFailure(node_id=".", kind=FailureKind.ERROR, traceback="./x_test.go:3:2: undefined: nope")
    failed = report(BuildStatus.FAILED, fail_reason=FailReason.TESTS, failed_tests=["."], failures=[failure])
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, failed)
    assert [d.reason for d in verdict.dropped] == [DropReason.UNPARSABLE]
    assert "undefined: nope" in verdict.failing["bucket_mendflow_test.go"]


def test_a_test_that_fails_a_later_run_is_dropped_as_flaky() -> None:
    failure = TestFailure(node_id=".::TestR", kind=FailureKind.FAILED, message="flaked")
    kw = {"fail_reason": FailReason.TESTS, "failed_tests": [".::TestR"], "failures": [failure], "runs": 2}
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, report(BuildStatus.FAILED, missing=[6], **kw))
    assert [d.reason for d in verdict.dropped] == [DropReason.FAILS] and not verdict.kept
    said = verdict.failing["bucket_mendflow_test.go"]
    assert said.startswith("fails on run 2 after passing the one(s) before: flaked")


# ---------------------------------------------------------------- Java

POM_JUPITER = """<project><dependencies>
  <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId></dependency>
</dependencies></project>"""
POM_JUNIT4 = """<project><dependencies>
  <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version></dependency>
</dependencies></project>"""
ISBN = "src/main/java/org/example/isbn/Isbn.java"
ISBN_TEST = "src/test/java/org/example/isbn/IsbnMendflowTest.java"
JAVA_TEST = """package org.example.isbn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class IsbnMendflowTest {
  // @Test void commentedOut() {}
  @Test
  void convertsToIsbn10() {
    assertEquals("@Test void inAString() {}".length(), 25);
  }

  @org.junit.jupiter.api.Test
  @DisplayName("a (parenthesised) name")
  public void prefixIs978() throws Exception {}

  @ParameterizedTest
  @ValueSource(strings = {"a", "b"})
  void eachOne(String s) {}

  void helper() {}
}
"""


def test_java_tests_of_a_reactor_module_go_under_that_module(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"pom.xml": "", "core/pom.xml": "", f"core/{ISBN}": "package org.example.isbn;\n"})
    assert where(Language.JAVA, f"core/{ISBN}", tree) == f"core/{ISBN_TEST}"


def test_java_tests_go_in_the_package_the_source_declares(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"pom.xml": "", "src/Isbn.java": "/* package a.b; */\npackage org.isbn;\nclass Isbn {}\n"})
    assert where(Language.JAVA, "src/Isbn.java", tree) == "src/test/java/org/isbn/IsbnMendflowTest.java"


def test_a_java_test_class_the_repository_has_gets_a_number(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {ISBN: "package org.example.isbn;\n", ISBN_TEST: ""})
    assert where(Language.JAVA, ISBN, tree) == "src/test/java/org/example/isbn/IsbnMendflow2Test.java"


def test_junit_jupiter_is_named_when_the_pom_has_it(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"pom.xml": POM_JUPITER})
    assert polyglot.framework(Language.JAVA, tree, ["pom.xml"], ISBN).startswith("JUnit 5 Jupiter")


def test_junit_4_is_named_when_junit_junit_is_the_only_junit(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"pom.xml": POM_JUNIT4})
    assert polyglot.framework(Language.JAVA, tree, ["pom.xml"], ISBN).startswith("JUnit 4")


def test_a_junit_4_excluded_from_a_dependency_does_not_make_the_repo_junit_4(tmp_path: Path) -> None:
    pom = POM_JUPITER.replace(
        "</dependencies>",
        "<dependency><groupId>x</groupId><artifactId>y</artifactId><exclusions><exclusion>"
        "<groupId>junit</groupId><artifactId>junit</artifactId></exclusion></exclusions></dependency></dependencies>",
    )
    assert polyglot.framework(Language.JAVA, tree_of(tmp_path, {"pom.xml": pom}), [], ISBN).startswith("JUnit 5")


def test_a_reactor_modules_framework_comes_from_its_own_pom_and_the_parents(tmp_path: Path) -> None:
    assertj = "<dependency><groupId>org.assertj</groupId><artifactId>assertj-core</artifactId></dependency>"
    files = {"pom.xml": POM_JUNIT4.replace("</dependencies>", f"{assertj}</dependencies>"), "core/pom.xml": POM_JUPITER}
    tree = tree_of(tmp_path, files)
    words = polyglot.framework(Language.JAVA, tree, list(files), f"core/{ISBN}")
    assert words.startswith("JUnit 5 Jupiter") and "AssertJ" in words and "Hamcrest" not in words


def test_gradle_builds_name_their_junit_too(tmp_path: Path) -> None:
    gradle = (
        'dependencies {\n  testImplementation "junit:junit:4.13.2"\n  testImplementation "org.hamcrest:hamcrest:3"\n}'
    )
    words = polyglot.framework(Language.JAVA, tree_of(tmp_path, {"build.gradle": gradle}), ["build.gradle"], ISBN)
    assert words.startswith("JUnit 4") and "Hamcrest" in words


def test_java_test_ids_are_the_files_test_methods_as_surefire_reports_them() -> None:
    ids = polyglot.test_ids(Language.JAVA, f"core/{ISBN_TEST}", JAVA_TEST)
    assert ids == [f"core/{ISBN_TEST}::{m}" for m in ("convertsToIsbn10", "prefixIs978", "eachOne")]


def test_junit_4_test_methods_with_arguments_are_found() -> None:
    junit4 = "public class T {\n  @Test(expected = IllegalStateException.class)\n  public void throwsIt() {}\n}\n"
    assert polyglot.test_ids(Language.JAVA, "src/test/java/T.java", junit4) == ["src/test/java/T.java::throwsIt"]


def test_a_java_file_in_another_package_than_its_path_is_refused(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {ISBN: "package org.example.isbn;\n"})
    wrong = JAVA_TEST.replace("package org.example.isbn;", "package org.example;")
    rejection = polyglot.check(ISBN_TEST, wrong, {ISBN_TEST}, tree, Language.JAVA)
    assert rejection is not None and rejection.reason is DropReason.NOT_COLLECTED
    assert "package org.example.isbn;" in rejection.detail


def test_a_java_file_whose_class_is_not_named_after_it_is_refused(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {ISBN: "package org.example.isbn;\n"})
    wrong = JAVA_TEST.replace("class IsbnMendflowTest", "class IsbnTest")
    rejection = polyglot.check(ISBN_TEST, wrong, {ISBN_TEST}, tree, Language.JAVA)
    assert rejection is not None and "IsbnMendflowTest" in rejection.detail


def test_the_java_prompt_gives_each_file_its_package_and_class() -> None:
    prompt = polyglot.system_prompt(Language.JAVA, "JUnit 5 Jupiter", {ISBN: ISBN_TEST})
    assert "`package org.example.isbn;`, one top-level class `IsbnMendflowTest`" in prompt
    assert "JUnit 5 Jupiter" in prompt and "no @Nested" in prompt


def test_offline_java_says_there_is_no_generator_and_why() -> None:
    notes = not_generated(TestSpec(id="ts-1", repo="r", parent_commit_sha="0" * 40), Language.JAVA).notes
    assert notes[0].startswith("no offline generator for java: ") and "EvoSuite" in notes[0]


def java_report(missing: list[int], **kw: object) -> BuildReport:
    cov = Coverage(
        format=CoverageFormat.JACOCO,
        branch_data=True,
        line_pct=50.0,
        files=[FileCoverage(path=ISBN, statements=40, missing_lines=missing, line_pct=50.0)],
    )
    counts = TestCounts(total=4, passed=4)
    return BuildReport.model_validate(
        {"repo": "r", "commit_sha": "1" * 40, "stage": "TG0", "status": BuildStatus.PASSED, "tests": counts,
         "coverage": cov, **kw}
    )  # fmt: skip


def test_the_java_builder_refuses_other_files_and_commits_the_one_that_gains(
    tmp_path: Path, scripted_llm: LLMServer
) -> None:
    source = "package org.example.isbn;\n\npublic final class Isbn {\n  int a() {\n    return 1;\n  }\n}\n"
    path = new_repo(tmp_path / "repo", {"pom.xml": POM_JUPITER, ISBN: source})
    repo = pygit2.Repository(str(path))
    target = CoverageTarget(path=ISBN, symbol="Isbn.a", start_line=4, end_line=6, line_pct=0.0, missing_lines=[5])
    spec = TestSpec(id="ts-java", repo="r", parent_commit_sha=str(repo.head.target), targets=[target])
    scripted_llm.reply(
        {
            "files": [
                {"path": ISBN, "content": source},  # the source: never the builder's to write
                {"path": "src/test/java/org/example/isbn/IsbnTest.java", "content": JAVA_TEST},
                {"path": ISBN_TEST, "content": JAVA_TEST},
            ]
        }
    )
    selected: list[list[str]] = []

    def gates(files: dict[str, str], ids: list[str], runs: int) -> BuildReport:
        selected.append((ids, runs))
        return java_report(missing=[], runs=runs)

    llm = LLMClient(llm_settings(scripted_llm, max_retries=0))
    result = polyglot.build_tests(spec, repo, Language.JAVA, llm, gates, runs=2)
    assert result.files == [ISBN_TEST] and result.commit_sha, result
    assert sorted(d.node_id for d in result.dropped) == sorted([ISBN, "src/test/java/org/example/isbn/IsbnTest.java"])
    assert selected == [(sorted(f"{ISBN_TEST}::{m}" for m in ("convertsToIsbn10", "eachOne", "prefixIs978")), 2)]
    system = json.dumps(scripted_llm.chat_requests()[0]["messages"][0])
    assert "JUnit 5 Jupiter" in system and "package org.example.isbn;" in system
