"""The trusted side re-checks a build job's failures: what it was not asked to run, or did not fail, is dropped."""

from __future__ import annotations

import json
from pathlib import Path

from mendflow.ci.job import collect_report, in_selection, job_spec, latest_report, vet_report
from mendflow.contracts import BuildReport, BuildStatus, FailReason, FailureKind, TestFailure
from mendflow.gitversion import SCM_VERSION
from mendflow.launcher.base import JobResult, JobState
from mendflow.settings import get_settings
from mendflow.source import Source
from mendflow.store.file import FileStore

SHA = "a" * 40


def _failure(node_id: str, kind: FailureKind = FailureKind.FAILED, traceback: str = "") -> TestFailure:
    return TestFailure(
        node_id=node_id, kind=kind, exception="AssertionError", message="assert 1 == 2", traceback=traceback
    )


def _report(failed: list[str], failures: list[TestFailure]) -> BuildReport:
    return BuildReport(
        repo="local/r", commit_sha=SHA, status=BuildStatus.FAILED, fail_reason=FailReason.TESTS,
        failed_tests=failed, failures=failures,
    )  # fmt: skip


def _source() -> Source:
    return Source(location=".", repo_id="local/r", path=".", commit_sha=SHA, branch="main", archive_key="snap.tar.gz")


def _collect(tmp_path: Path, forged: BuildReport, select: list[str] | None = None, runs: int = 1) -> BuildReport:
    store = FileStore(tmp_path / "store")
    store.put_bytes("staging/report.json", forged.model_dump_json().encode())
    result = JobResult(state=JobState.SUCCEEDED, exit_code=0)
    return collect_report(store, "staging", result, _source(), "B1", 1, 1024 * 1024, select, runs)


def test_a_forged_failure_of_a_test_that_did_not_fail_is_dropped(tmp_path: Path) -> None:
    forged = _report(["tests/test_a.py::test_x"], [_failure("tests/test_a.py::test_x"), _failure("tests/test_b.py::y")])
    report = _collect(tmp_path, forged)
    assert [f.node_id for f in report.failures] == ["tests/test_a.py::test_x"]


def test_failures_are_put_in_failed_tests_order_once_each(tmp_path: Path) -> None:
    a, b = "t.py::test_a", "t.py::test_b"
    report = _collect(tmp_path, _report([a, b], [_failure(b), _failure(a), _failure(a)]))
    assert [f.node_id for f in report.failures] == [a, b]


def test_with_a_selection_a_failed_test_outside_it_is_dropped(tmp_path: Path) -> None:
    forged = _report(["tests/test_a.py::test_x", "tests/test_b.py::test_y"], [])
    report = _collect(tmp_path, forged, select=["tests/test_a.py::test_x"])
    assert report.failed_tests == ["tests/test_a.py::test_x"]


def test_with_a_selection_the_report_says_what_the_trusted_side_selected(tmp_path: Path) -> None:
    forged = _report([], []).model_copy(update={"selected": ["tests/other.py"]})
    assert _collect(tmp_path, forged, select=["tests/test_a.py::test_x"]).selected == ["tests/test_a.py::test_x"]


def test_the_collection_error_of_a_selected_tests_file_is_kept() -> None:
    failed = ["tests/test_a.py", "tests/conftest.py", "tests/test_b.py", "conftest.py", "tests/sub/conftest.py"]
    report = vet_report(_report(failed, []), ["tests/test_a.py::test_x"])
    assert report.failed_tests == ["tests/test_a.py", "tests/conftest.py", "conftest.py"]


def test_parametrized_and_class_members_of_a_selection_are_in_it() -> None:
    assert in_selection("t.py::test_p[1]", ["t.py::test_p"]) and in_selection("t.py::C::test_m", ["t.py::C"])
    assert not in_selection("t.py::test_pq", ["t.py::test_p"])


def test_a_traceback_over_4_kib_is_cut_to_its_end() -> None:
    long = "x" * 9000 + "E   AssertionError"
    report = vet_report(_report(["t.py::a"], [_failure("t.py::a", traceback=long)]))
    assert len(report.failures[0].traceback.encode()) == 4096 and report.failures[0].traceback.endswith("Error")


def test_the_job_is_told_the_selection(tmp_path: Path, mendflow_env: object) -> None:
    source, store = _source(), FileStore(tmp_path / "store")
    spec = job_spec(source, "B1", 1, "staging", store, get_settings(), ["tests/test_a.py::test_x"])
    assert json.loads(spec.env["MENDFLOW_JOB_SELECT"]) == ["tests/test_a.py::test_x"]


def test_without_a_selection_the_job_runs_the_suite(tmp_path: Path, mendflow_env: object) -> None:
    source, store = _source(), FileStore(tmp_path / "store")
    assert "MENDFLOW_JOB_SELECT" not in job_spec(source, "B1", 1, "staging", store, get_settings()).env


def test_the_job_is_told_how_many_runs(tmp_path: Path, mendflow_env: object) -> None:
    source, store = _source(), FileStore(tmp_path / "store")
    spec = job_spec(source, "B1", 1, "staging", store, get_settings(), ["t.py::test_a"], runs=5)
    assert spec.env["MENDFLOW_JOB_RUNS"] == "5"


def test_the_job_is_told_the_version_the_commits_tags_give_it(tmp_path: Path, mendflow_env: object) -> None:
    source, store = _source().model_copy(update={"version": "1.2.4.dev5+gabc1234"}), FileStore(tmp_path / "store")
    assert job_spec(source, "B1", 1, "staging", store, get_settings()).env[SCM_VERSION] == ("1.2.4.dev5+gabc1234")


def test_a_pass_with_fewer_runs_than_asked_is_not_a_pass(tmp_path: Path) -> None:
    passed = _report([], []).model_copy(update={"status": BuildStatus.PASSED, "fail_reason": None, "runs": 2})
    report = _collect(tmp_path, passed, runs=5)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.RUNNER_CRASH)
    assert report.error_reason == "the job reported 2 passing test run(s), 5 were asked for"


def test_a_failure_on_a_later_run_is_kept(tmp_path: Path) -> None:
    failed = _report(["t.py::test_a"], [_failure("t.py::test_a")]).model_copy(update={"runs": 3})
    report = _collect(tmp_path, failed, runs=5)
    assert (report.status, report.runs, report.failed_tests) == (BuildStatus.FAILED, 3, ["t.py::test_a"])


def test_a_published_run_of_selected_tests_is_not_reused_for_the_suite(tmp_path: Path) -> None:
    store, source = FileStore(tmp_path / "store"), _source()
    selected = _report([], []).model_copy(update={"status": BuildStatus.PASSED, "selected": ["t.py::test_a"]})
    store.put_bytes(f"{source.artefacts.build(SHA, 'B1', 1)}/report.json", selected.model_dump_json().encode())
    assert latest_report(store, source, "B1") is None
