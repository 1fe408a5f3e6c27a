"""The error analyzer: categories from real exception messages, and whether the commit's change explains a real
failure (real git repos and real pytest runs, helpers shared with the healers' tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.contracts import Assessment, ErrorCategory, FailureKind, HealMethod, Scope, TestFailure
from mendflow.heal.analyzer import analyze, choose_by_decision_tree, read_failure
from mendflow.heal.changes import CommitChanges
from tests.mendflow.heal.test_deterministic import CALC, TEST_RENAME, broken, first_failure


def failure(exception: str, message: str, kind: FailureKind = FailureKind.FAILED) -> TestFailure:
    return TestFailure(node_id="tests/test_x.py::test_x", kind=kind, exception=exception, message=message)


@pytest.mark.parametrize(
    ("exception", "message", "category"),
    [
        ("ImportError", "cannot import name 'add' from 'calc' (/r/calc.py)", ErrorCategory.IMPORT),
        ("ModuleNotFoundError", "No module named 'calc'", ErrorCategory.IMPORT),
        ("NameError", "name 'add' is not defined", ErrorCategory.NAME),
        ("AttributeError", "module 'calc' has no attribute 'add'", ErrorCategory.NAME),
        ("TypeError", "add() got an unexpected keyword argument 'a'", ErrorCategory.SIGNATURE),
        ("TypeError", "add() missing 1 required positional argument: 'b'", ErrorCategory.SIGNATURE),
        ("TypeError", "add() takes 2 positional arguments but 3 were given", ErrorCategory.SIGNATURE),
        ("TypeError", "unsupported operand type(s) for +: 'int' and 'str'", ErrorCategory.OTHER),
        ("AssertionError", "assert 4 == 3", ErrorCategory.ASSERTION),
        ("SyntaxError", "invalid syntax", ErrorCategory.SYNTAX),
        ("Failed", "Timeout (>1.0s) from pytest-timeout.", ErrorCategory.TIMEOUT),
        ("TimeoutError", "", ErrorCategory.TIMEOUT),
        ("", "fixture 'db' not found", ErrorCategory.FIXTURE),
        ("ValueError", "bad value", ErrorCategory.OTHER),
    ],
)
def test_category_from_exception_and_message(exception: str, message: str, category: ErrorCategory) -> None:
    assert read_failure(failure(exception, message)).category is category


def test_exception_read_from_the_traceback_when_missing() -> None:
    f = TestFailure(
        node_id="tests/test_x.py",
        kind=FailureKind.ERROR,
        traceback=(
            "tests/test_x.py:1: in <module>\n    from calc import add\n"
            "E   ImportError: cannot import name 'add' from 'calc'"
        ),
    )
    reading = read_failure(f)
    assert (reading.category, reading.name, reading.module) == (ErrorCategory.IMPORT, "add", "calc")


def test_rename_is_explained_with_the_change_in_words(tmp_path: Path) -> None:
    case = broken(
        tmp_path, {"calc.py": CALC}, "tests/test_calc.py", TEST_RENAME, {"calc.py": CALC.replace("add", "plus")}
    )
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.IMPORT
    assert got.explained_by_change and got.change == "calc.add renamed to calc.plus"
    assert got.locations == ["tests/test_calc.py:1", "tests/test_calc.py:5", "tests/test_calc.py:9"]
    assert got.lines_to_change == 3 and got.scope is Scope.MULTI_LINE


def test_move_is_explained(tmp_path: Path) -> None:
    after = {"calc.py": "def add(a, b):\n    return a + b\n", "extra.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", TEST_RENAME, after)
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.IMPORT and got.explained_by_change
    assert got.change == "calc.sub moved to extra.sub"
    assert got.locations == ["test_calc.py:1"] and got.uniqueness == 1.0
    assert got.suggested_method is HealMethod.UPDATE


def test_move_through_a_from_imported_module_locates_the_import_and_the_access(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = "from pkg import ops\n\n\ndef test_sub():\n    assert ops.sub(3, 1) == 2 and ops.add(1, 1) == 2\n"
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.NAME and got.change == "pkg.ops.sub moved to pkg.more.sub"
    assert got.locations == ["test_ops.py:1", "test_ops.py:5"]


def test_parameter_rename_is_explained(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(a=1, b=2) == 3\n"
    after = {"calc.py": CALC.replace("def add(a, b):\n    return a + b", "def add(x, b):\n    return x + b")}
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, after)
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.SIGNATURE and got.explained_by_change
    assert got.change == "parameters of calc.add renamed: 'a' → 'x'"


def test_method_rename_is_explained(tmp_path: Path) -> None:
    cls = "class Calc:\n    def add(self, a, b):\n        return a + b\n"
    test = "from calc import Calc\n\n\ndef test_add():\n    assert Calc().add(1, 2) == 3\n"
    case = broken(tmp_path, {"calc.py": cls}, "test_calc.py", test, {"calc.py": cls.replace("def add", "def plus")})
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.NAME and got.explained_by_change
    assert got.change == "calc.Calc.add renamed to calc.Calc.plus"


def test_reorder_failing_inside_the_body_is_a_signature_break(tmp_path: Path) -> None:
    source = {"seq.py": "def take(items, n):\n    return items[:n]\n"}
    test = "from seq import take\n\n\ndef test_take():\n    assert take([1, 2, 3], 2) == [1, 2]\n"
    case = broken(tmp_path, source, "test_seq.py", test, {"seq.py": "def take(n, items):\n    return items[:n]\n"})
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.SIGNATURE and got.explained_by_change


def test_assertion_after_behaviour_change_is_not_explained(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, {"calc.py": CALC.replace("a + b", "a + b + 1")})
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.ASSERTION
    assert not got.explained_by_change and got.change == ""
    assert got.locations == ["test_calc.py:5"]


def test_removed_function_is_not_explained(tmp_path: Path) -> None:
    case = broken(
        tmp_path, {"calc.py": CALC}, "test_calc.py", TEST_RENAME, {"calc.py": "def sub(a, b):\n    return a - b\n"}
    )
    got = analyze(first_failure(case), case.changes, case.test_text)
    assert got.category is ErrorCategory.IMPORT and not got.explained_by_change


def test_name_the_commit_did_not_change_is_not_explained() -> None:
    f = failure("ImportError", "cannot import name 'mul' from 'calc'", FailureKind.ERROR)
    got = analyze(f, CommitChanges(parent="a", commit="b"), "from calc import mul\n")
    assert got.category is ErrorCategory.IMPORT and not got.explained_by_change


def test_decision_tree_update_for_unique_local_name_break() -> None:
    a = Assessment(category=ErrorCategory.NAME, scope=Scope.LOCAL, uniqueness=1.0, lines_to_change=1, locations=["t:1"])
    assert choose_by_decision_tree(a) is HealMethod.UPDATE


def test_decision_tree_patch_for_a_few_lines_in_one_place() -> None:
    a = Assessment(category=ErrorCategory.SIGNATURE, scope=Scope.MULTI_LINE, lines_to_change=3, locations=["t:4"])
    assert choose_by_decision_tree(a) is HealMethod.PATCH


def test_decision_tree_rewrite_for_many_places() -> None:
    a = Assessment(category=ErrorCategory.NAME, uniqueness=0.2, lines_to_change=3, locations=["t:1", "t:5", "t:9"])
    assert choose_by_decision_tree(a) is HealMethod.REWRITE
