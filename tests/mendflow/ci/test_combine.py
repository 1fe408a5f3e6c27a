"""mendflow.ci.combine: one BuildReport of several languages' builds, and a selection split between them."""

from __future__ import annotations

from mendflow.ci.combine import combine, language_of_test, not_selected, split_selection
from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    Coverage,
    CoverageFormat,
    FailReason,
    FileCoverage,
    Language,
    TestCounts,
)

LANGS = (Language.GO, Language.PYTHON, Language.TYPESCRIPT, Language.RUST)


def report(language: Language, status: BuildStatus, **fields: object) -> BuildReport:
    return BuildReport(repo="o/r", commit_sha="a" * 40, stage="B1", language=language, status=status, **fields)  # type: ignore[arg-type]


def cov(path: str, statements: int, covered: int, *, branch: bool, fmt: CoverageFormat) -> Coverage:
    pct = 100.0 * covered / statements
    file = FileCoverage(path=path, statements=statements, missing_lines=[], line_pct=pct)
    return Coverage(
        format=fmt, branch_data=branch, line_pct=pct, statements=statements, covered_lines=covered,
        num_branches=4 if branch else 0, covered_branches=2 if branch else 0, branch_pct=50.0 if branch else None,
        files=[file],
    )  # fmt: skip


def test_a_single_language_is_todays_report_plus_its_one_section() -> None:
    one = report(Language.PYTHON, BuildStatus.PASSED, tests=TestCounts(total=1, passed=1), durations={"pytest": 1.0})
    combined = combine([one])
    assert combined.model_dump(exclude={"sections"}) == one.model_dump(exclude={"sections"})
    assert [(s.language, s.status) for s in combined.sections] == [(Language.PYTHON, BuildStatus.PASSED)]


def test_the_worst_section_leads_and_everything_else_adds_up() -> None:
    go = report(
        Language.GO, BuildStatus.PASSED, tests=TestCounts(total=4, passed=4), durations={"test": 2.0},
        coverage=cov("a.go", 10, 5, branch=False, fmt=CoverageFormat.GO),
    )  # fmt: skip
    py = report(
        Language.PYTHON, BuildStatus.FAILED, fail_reason=FailReason.TESTS, failed_tests=["t.py::x"],
        tests=TestCounts(total=2, passed=1, failed=1), durations={"pytest": 1.0},
        coverage=cov("b.py", 30, 15, branch=True, fmt=CoverageFormat.COVERAGE_PY),
    )  # fmt: skip
    combined = combine([go, py], [not_selected(Language.JAVA)])
    assert (combined.status, combined.fail_reason, combined.language) == (
        BuildStatus.FAILED, FailReason.TESTS, Language.GO,
    )  # fmt: skip
    assert combined.failed_tests == ["t.py::x"]
    assert combined.tests == TestCounts(total=6, passed=5, failed=1)
    assert combined.durations == {"go.test": 2.0, "python.pytest": 1.0}
    assert combined.coverage is not None
    assert (combined.coverage.statements, combined.coverage.covered_lines, combined.coverage.line_pct) == (40, 20, 50.0)
    assert combined.coverage.branch_data is False and combined.coverage.branch_pct is None  # Go has no branches
    assert [f.path for f in combined.coverage.files] == ["a.go", "b.py"]
    assert [(s.language, s.status) for s in combined.sections] == [
        (Language.GO, BuildStatus.PASSED), (Language.PYTHON, BuildStatus.FAILED), (Language.JAVA, None),
    ]  # fmt: skip
    assert combined.sections[2].skipped == "none of its tests selected"


def test_errored_beats_failed_and_names_its_language() -> None:
    go = report(Language.GO, BuildStatus.FAILED, fail_reason=FailReason.LINT)
    py = report(
        Language.PYTHON, BuildStatus.ERRORED, fail_reason=FailReason.DEPENDENCIES, error_reason="no such package",
        transient=False,
    )  # fmt: skip
    combined = combine([go, py])
    assert (combined.status, combined.fail_reason, combined.transient) == (
        BuildStatus.ERRORED, FailReason.DEPENDENCIES, False,
    )  # fmt: skip
    assert combined.error_reason == "python: no such package"


def test_a_test_id_belongs_to_the_language_of_its_file() -> None:
    assert language_of_test("tests/test_a.py::test_x", LANGS) is Language.PYTHON
    assert language_of_test("src/a.test.ts::adds two", LANGS) is Language.TYPESCRIPT
    assert language_of_test("src/lib.rs::tests::adds", LANGS) is Language.RUST
    assert language_of_test("internal/bucket::TestAllow", LANGS) is Language.GO
    assert language_of_test(".::TestAllow", LANGS) is Language.GO
    assert language_of_test("unknown", (Language.PYTHON, Language.GO)) is Language.PYTHON  # the main language's


def test_a_selection_goes_only_to_the_languages_owning_its_ids() -> None:
    shares = split_selection(["t/test_a.py::x", ".::TestB", "t/test_c.py::y"], (Language.GO, Language.PYTHON))
    assert shares == {Language.GO: [".::TestB"], Language.PYTHON: ["t/test_a.py::x", "t/test_c.py::y"]}
    assert split_selection(["t/test_a.py::x"], (Language.GO, Language.PYTHON)) == {Language.PYTHON: ["t/test_a.py::x"]}


def test_a_secondary_language_with_no_tests_is_reported_without_failing_the_build() -> None:
    main = report(Language.PYTHON, BuildStatus.PASSED)
    docs = report(Language.TYPESCRIPT, BuildStatus.FAILED, fail_reason=FailReason.NO_TESTS)
    combined = combine([main, docs])
    assert combined.status is BuildStatus.PASSED and combined.fail_reason is None
    assert [(s.language, s.fail_reason) for s in combined.sections][1] == (Language.TYPESCRIPT, FailReason.NO_TESTS)


def test_the_main_language_with_no_tests_still_fails_the_build() -> None:
    main = report(Language.PYTHON, BuildStatus.FAILED, fail_reason=FailReason.NO_TESTS)
    combined = combine([main, report(Language.GO, BuildStatus.PASSED)])
    assert (combined.status, combined.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
