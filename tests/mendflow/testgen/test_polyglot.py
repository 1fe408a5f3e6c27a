"""The test builder's per-language layout, confinement, test ids and verdicts (the trusted side's decisions)."""

from __future__ import annotations

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
from mendflow.testgen import polyglot
from mendflow.testgen.builder import not_generated
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
    junit4 = tree_of(tmp_path / "c", {"pom.xml": "<artifactId>junit</artifactId>"})
    assert polyglot.framework(Language.JAVA, junit4, []).startswith("JUnit 4")
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
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, [report(missing=[6])] * 3)
    assert [(k.node_id, k.lines_gained) for k in verdict.kept] == [(".::TestR", 1)] and not verdict.failing


def test_a_test_that_gains_nothing_is_dropped_saying_so() -> None:
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, [report(missing=[5, 6])])
    assert [d.reason for d in verdict.dropped] == [DropReason.NO_COVERAGE_GAIN] and not verdict.kept


def test_a_package_that_does_not_compile_is_dropped_with_the_compilers_words() -> None:
    failure = TestFailure(node_id=".", kind=FailureKind.ERROR, traceback="./x_test.go:3:2: undefined: nope")
    failed = report(BuildStatus.FAILED, fail_reason=FailReason.TESTS, failed_tests=["."], failures=[failure])
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, [failed])
    assert [d.reason for d in verdict.dropped] == [DropReason.UNPARSABLE]
    assert "undefined: nope" in verdict.failing["bucket_mendflow_test.go"]


def test_a_test_that_fails_a_later_run_is_dropped() -> None:
    failure = TestFailure(node_id=".::TestR", kind=FailureKind.FAILED, message="flaked")
    failed = report(BuildStatus.FAILED, fail_reason=FailReason.TESTS, failed_tests=[".::TestR"], failures=[failure])
    verdict = polyglot.judge(Language.GO, SPEC, FILES, SOURCES, [report(missing=[6]), failed])
    assert [d.reason for d in verdict.dropped] == [DropReason.FAILS] and not verdict.kept
