from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from mendflow_java import surefire
from mendflow_runner.testing import RunResults

DATA = Path(__file__).parent / "data"
SOURCE = "src/test/java/org/example/isbn/IsbnTest.java"


def _reports(tmp_path: Path, module: str = ".") -> Path:
    reports = tmp_path / module / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-org.example.isbn.IsbnTest.xml").write_bytes(
        (DATA / "TEST-org.example.isbn.IsbnTest.xml").read_bytes()
    )
    return tmp_path


def test_a_real_surefire_report_is_read_into_counts_and_one_failure(tmp_path: Path) -> None:
    run = surefire.read_reports(_reports(tmp_path))
    assert run.counts == {"total": 5, "passed": 4, "failed": 1, "skipped": 0, "errors": 0}
    assert run.failed == [f"{SOURCE}::convertsIsbn10ToIsbn13"]
    (failure,) = run.failures
    assert failure["kind"] == "failed"
    assert failure["exception"] == "AssertionFailedError"
    assert failure["message"] == "expected: <9780306406158> but was: <9780306406157>"
    assert failure["location"] == f"{SOURCE}:19"
    assert "AssertionFailedError" in failure["traceback"]


def test_a_reactor_module_s_ids_are_relative_to_the_repository_root(tmp_path: Path) -> None:
    run = surefire.read_reports(_reports(tmp_path, "core"), PurePosixPath("core"))
    assert run.failed == [f"core/{SOURCE}::convertsIsbn10ToIsbn13"]


def test_no_reports_is_an_empty_run(tmp_path: Path) -> None:
    assert surefire.read_reports(tmp_path).counts["total"] == 0


def test_a_class_that_fails_to_load_is_its_file_kind_error() -> None:
    run = RunResults()
    surefire.add_report(
        run,
        b'<testsuite name="a.BTest" tests="1" errors="1"><testcase name="a.BTest" classname="a.BTest">'
        b'<error type="java.lang.ExceptionInInitializerError" message="boom">trace</error></testcase></testsuite>',
    )
    assert run.failed == ["src/test/java/a/BTest.java"]
    assert run.failures[0]["kind"] == "error"
    assert run.counts["errors"] == 1


def test_selection_maps_ids_to_maven_test_filters_per_module() -> None:
    assert surefire.selection(
        [f"{SOURCE}::a", f"{SOURCE}::b", "core/src/test/java/x/YTest.java::c", "src/test/java/ZTest.java"]
    ) == {".": ["org.example.isbn.IsbnTest#a+b", "ZTest"], "core": ["x.YTest#c"]}


@pytest.mark.parametrize("node", ["../src/test/java/A.java::a", "src/main/java/A.java::a", "src/test/java/A.py::a"])
def test_selection_refuses_ids_outside_test_sources(node: str) -> None:
    with pytest.raises(surefire.SelectionError):
        surefire.selection([node])
