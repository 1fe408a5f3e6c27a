"""Dropping failed generated tests (``mendflow/heal/drop.py``): only the named tests, and what only they used."""

from __future__ import annotations

import ast

from mendflow.contracts import BuildReport, BuildStatus, DropReason, GeneratedTests, KeptTest
from mendflow.heal.drop import drop_failed, failing_by_file, without_tests

GENERATED = """\
import pytest

import calc as module_0
from calc import divide


def test_case_0():
    assert module_0.add(1, 2) == 3


@pytest.mark.parametrize("n", [1, 2])
def test_case_1(n):
    assert divide(n, 1) == n


class TestCalc:
    def test_sub(self):
        assert module_0.sub(3, 1) == 2

    def test_mul(self):
        assert module_0.mul(2, 2) == 4
"""


def test_failing_ids_are_grouped_by_generated_file_without_parameters() -> None:
    failed = ["tests/test_calc_mendflow.py::test_case_1[2]", "tests/test_calc_mendflow.py::TestCalc::test_sub",
              "tests/test_user.py::test_x"]  # fmt: skip
    assert failing_by_file(failed, ["tests/test_calc_mendflow.py"]) == {
        "tests/test_calc_mendflow.py": {("test_case_1",), ("TestCalc", "test_sub")}
    }


def test_a_collection_error_drops_the_whole_file() -> None:
    assert failing_by_file(["tests/t_mendflow.py"], ["tests/t_mendflow.py"]) == {"tests/t_mendflow.py": {()}}
    assert without_tests(GENERATED, {()}) is None


def test_a_parametrized_test_goes_whole_with_the_imports_only_it_used() -> None:
    text = without_tests(GENERATED, {("test_case_1",)})
    assert text == GENERATED.replace("import pytest\n\n", "").replace("from calc import divide\n", "").replace(
        '\n\n@pytest.mark.parametrize("n", [1, 2])\ndef test_case_1(n):\n    assert divide(n, 1) == n\n', ""
    )


def test_an_import_the_kept_tests_use_stays() -> None:
    text = without_tests(GENERATED, {("test_case_0",)})
    assert text is not None and "import calc as module_0" in text and "def test_case_0" not in text


def test_a_method_goes_alone_and_its_class_stays() -> None:
    text = without_tests(GENERATED, {("TestCalc", "test_sub")})
    assert text is not None and "class TestCalc:\n    def test_mul(self):" in text and "test_sub" not in text
    ast.parse(text)


def test_a_class_left_without_tests_goes_whole() -> None:
    text = without_tests(GENERATED, {("TestCalc", "test_sub"), ("TestCalc", "test_mul")})
    assert text is not None and "TestCalc" not in text and text.endswith("== n\n")


def test_a_file_left_without_tests_is_dropped() -> None:
    assert without_tests(GENERATED, {("test_case_0",), ("test_case_1",), ("TestCalc", "test_sub"),
                                      ("TestCalc", "test_mul")}) is None  # fmt: skip


def generated(*kept: str) -> GeneratedTests:
    files = sorted({k.split("::")[0] for k in kept})
    tests = [KeptTest(node_id=k, target="calc.py::add", lines_gained=1) for k in kept]
    return GeneratedTests(spec_id="ts-1", branch_name="b", precheck=BuildStatus.PASSED, files=files, kept=tests)


def b2(failed: list[str], lint: list[str] | None = None) -> BuildReport:
    return BuildReport(repo="r", commit_sha="c" * 40, branch_name="b", stage="B2", status=BuildStatus.FAILED,
                       failed_tests=failed, lint_errors=lint or [])  # fmt: skip


FILE = "tests/test_calc_mendflow.py"
KEPT = (f"{FILE}::test_case_0", f"{FILE}::test_case_1", f"{FILE}::TestCalc::test_sub", f"{FILE}::TestCalc::test_mul")


def test_the_failed_test_is_dropped_and_the_rest_kept() -> None:
    drop = drop_failed(generated(*KEPT), b2([f"{FILE}::test_case_1[2]"]), {FILE: GENERATED}.__getitem__)
    assert drop is not None and "test_case_1" not in (drop.files[FILE] or "")
    assert [k.node_id for k in drop.generated.kept] == [KEPT[0], *KEPT[2:]]
    assert [(d.node_id, d.reason) for d in drop.generated.dropped] == [(KEPT[1], DropReason.FAILS)]


def test_a_file_with_lint_findings_goes_whole() -> None:
    other = "tests/test_other_mendflow.py"
    drop = drop_failed(generated(*KEPT, f"{other}::test_x"), b2([], [f"{other}:1:1 mypy[name-defined] x"]),
                       {FILE: GENERATED}.__getitem__)  # fmt: skip
    assert drop is not None and drop.files == {other: None} and drop.generated.files == [FILE]


def test_a_failure_in_the_users_tests_is_not_dropped_away() -> None:
    assert drop_failed(generated(*KEPT), b2([f"{FILE}::test_case_0", "tests/test_user.py::test_x"]),
                       {FILE: GENERATED}.__getitem__) is None  # fmt: skip


def test_nothing_left_is_no_drop() -> None:
    assert drop_failed(generated(*KEPT), b2(list(KEPT)), {FILE: GENERATED}.__getitem__) is None


def test_a_name_only_the_dropped_test_imported_leaves_its_import_line() -> None:
    text = without_tests("from calc import add, sub\n\n\ndef test_add():\n    add()\n\n\ndef test_sub():\n    sub()\n",
                         {("test_sub",)})  # fmt: skip
    assert text == "from calc import add\n\n\ndef test_add():\n    add()\n"
