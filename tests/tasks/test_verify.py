"""The Regression names each failing test with its first message line, errors apart from failures."""

from __future__ import annotations

from mendflow.contracts import BuildReport, BuildStatus, FailReason, FailureKind, TestFailure
from mendflow.verify import regression_from

IMPORT = TestFailure(
    node_id="tests/test_calc.py",
    kind=FailureKind.ERROR,
    exception="ImportError",
    message="cannot import name 'add' from 'calc'",
    location="tests/test_calc.py:1",
)
ASSERTION = TestFailure(
    node_id="tests/test_more.py::test_sum",
    kind=FailureKind.FAILED,
    exception="AssertionError",
    message="assert 3 == 4",
    location="tests/test_more.py:7",
)


def _summary(failed: list[str], failures: list[TestFailure]) -> str:
    report = BuildReport(
        repo="local/calc", commit_sha="c" * 40, stage="B1", status=BuildStatus.FAILED,
        fail_reason=FailReason.TESTS, failed_tests=failed, failures=failures,
    )  # fmt: skip
    return regression_from(report).summary_md


def _section(md: str, title: str) -> str:
    start = md.index(f"## {title}")
    end = md.find("\n## ", start + 1)
    return md[start : end if end != -1 else len(md)]


def test_a_failing_test_is_named_with_its_first_message_line_and_place() -> None:
    md = _summary([ASSERTION.node_id], [ASSERTION])
    line = "- `tests/test_more.py::test_sum` — `AssertionError: assert 3 == 4` at `tests/test_more.py:7`"
    assert line in _section(md, "Failed tests")


def test_an_import_error_is_listed_as_an_error_not_a_failed_test() -> None:
    md = _summary([IMPORT.node_id, ASSERTION.node_id], [IMPORT, ASSERTION])
    assert "cannot import name 'add' from 'calc'" in _section(md, "Errors")
    assert "tests/test_calc.py" not in _section(md, "Failed tests")


def test_a_failed_test_without_details_is_still_named() -> None:
    assert "- `tests/test_x.py::test_y`" in _section(_summary(["tests/test_x.py::test_y"], []), "Failed tests")


def test_a_message_cannot_break_out_of_its_code_span() -> None:
    evil = ASSERTION.model_copy(update={"message": "x` <img src=y>\n# Approved"})
    md = _summary([evil.node_id], [evil])
    assert "`AssertionError: x' <img src=y> # Approved`" in md and "\n# Approved" not in md
