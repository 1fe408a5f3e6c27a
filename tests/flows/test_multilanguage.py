"""A repository in two languages, end to end: a Go module with a Python package beside it, each language built as
its own job in its own runner by the local launcher with the real toolchains, one BuildReport combining them."""

from __future__ import annotations

import shutil

import pytest
from prefect import flow

from flows.ci import ci_build
from mendflow.contracts import BuildReport, BuildStatus, FailReason, Language
from mendflow.settings import get_settings
from mendflow.store import open_store
from tasks.ci import build, resolve_source
from tests.fixtures.repos import RepoFactory
from tests.flows import sample_repos
from tests.images.mendflow_go.helpers import example_files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("prefect_server", "mendflow_env"),
    pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain"),
]


@flow(name="select-rerun")
def select_rerun(repo: str, stage: str, select: list[str]) -> BuildReport:
    """The verifier's and healer's call: the commit's selected tests only."""
    return build(resolve_source(repo, None, None), stage, select=select)


def by_language(report: BuildReport) -> dict[Language, BuildStatus | None]:
    return {s.language: s.status for s in report.sections}


def test_each_language_is_its_own_build_and_one_report_combines_them(make_repo: RepoFactory) -> None:
    files = {**example_files(), **sample_repos.PASSING}
    report = ci_build(repo=str(make_repo(files, name="polyglot")))
    assert by_language(report) == {Language.GO: BuildStatus.PASSED, Language.PYTHON: BuildStatus.PASSED}
    assert report.language is Language.GO  # most source files: the main language
    assert report.status is BuildStatus.PASSED
    assert report.tests.passed == 4 + 1 == sum(s.tests.passed for s in report.sections)
    assert report.coverage is not None and report.coverage.branch_data is False  # Go's coverprofile has none
    assert {f.path for f in report.coverage.files} >= {"bucket.go", "limit.go", "shapes.py"}
    assert report.coverage.statements == sum(s.coverage.statements for s in report.sections if s.coverage)
    assert all(key.startswith(("go.", "python.")) for key in report.durations)
    settings = get_settings()
    keys = open_store(settings.resolved_store_url(), settings).list(f"repos/local/polyglot/{report.commit_sha}")
    assert any(key.endswith("/build/1/report.json") for key in keys)  # the combined report, at the stage's key
    assert any("/build-go/" in key for key in keys) and any("/build-python/" in key for key in keys)


def test_one_failing_language_fails_the_combined_build_and_a_selection_runs_only_its_language(
    make_repo: RepoFactory,
) -> None:
    files = {**example_files(), **sample_repos.FAILING}
    report = ci_build(repo=str(make_repo(files, name="polyglot-failing")))
    assert by_language(report) == {Language.GO: BuildStatus.PASSED, Language.PYTHON: BuildStatus.FAILED}
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["tests/test_shapes.py::test_area"]

    repo = str(make_repo(files, name="polyglot-select"))
    rerun = select_rerun(repo, "rerun", ["tests/test_shapes.py::test_area"])
    assert [(s.language, s.status) for s in rerun.sections] == [
        (Language.PYTHON, BuildStatus.FAILED),
        (Language.GO, None),  # none of its tests selected: no Go job ran
    ]
    assert rerun.selected == ["tests/test_shapes.py::test_area"] == rerun.failed_tests

    go_only = select_rerun(repo, "rerun-go", [".::TestParseLimitBurst"])
    assert [(s.language, s.status) for s in go_only.sections] == [
        (Language.GO, BuildStatus.PASSED),
        (Language.PYTHON, None),
    ]
    assert (go_only.status, go_only.tests.passed) == (BuildStatus.PASSED, 1)
