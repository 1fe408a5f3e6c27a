"""The no-weakening gate (``mendflow/gate.py``): minimal before/after pairs, one violation each."""

from __future__ import annotations

from textwrap import dedent

import pytest

from mendflow.gate import changed_expectations, weakening

PATH = "tests/test_calc.py"


def src(text: str) -> str:
    return dedent(text).lstrip("\n")


BASE = src(
    """
    import pytest
    from calc import add, divide


    def test_add():
        assert add(2, 2) == 4


    def test_divide_by_zero():
        with pytest.raises(ZeroDivisionError):
            divide(1, 0)
    """
)

UNITTEST = src(
    """
    import unittest
    from calc import add


    class AddTest(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 2), 4)
    """
)


def test_a_rename_edit_of_the_import_and_calls_passes() -> None:
    after = BASE.replace("import add,", "import plus,").replace("add(2, 2)", "plus(2, 2)")
    assert weakening(PATH, BASE, after) == []


def test_an_added_assertion_passes() -> None:
    after = BASE.replace("    assert add(2, 2) == 4\n", "    assert add(2, 2) == 4\n    assert add(0, 0) == 0\n")
    assert weakening(PATH, BASE, after) == []


def test_a_tightened_raises_passes() -> None:
    after = BASE.replace("pytest.raises(ZeroDivisionError)", 'pytest.raises(ZeroDivisionError, match="zero")')
    assert weakening(PATH, BASE, after) == []


def test_an_assert_replaced_by_a_raises_check_passes() -> None:
    # the builder's repair of a generated test that guessed a value where the code raises
    after = BASE.replace("    assert add(2, 2) == 4\n", "    with pytest.raises(TypeError):\n        add(2, None)\n")
    assert weakening(PATH, BASE, after) == []


def test_a_rename_of_a_test_to_another_collected_name_is_compared_not_refused() -> None:
    after = BASE.replace("def test_add():", "def test_addition():")
    assert weakening(PATH, BASE, after) == []


ASSERT = "assert add(2, 2) == 4"
ASSERT_LINE = f"    {ASSERT}\n"
RAISES = "pytest.raises(ZeroDivisionError)"
PARSE_NAMED = src("def test_parse():\n    try:\n        parse('x')\n    except ValueError:\n        raise\n")
SWALLOWED = "    try:\n        assert add(2, 2) == 4\n    except AssertionError:\n        pass\n"
SUPPRESSED = "    with contextlib.suppress(AssertionError):\n        assert add(2, 2) == 4\n"


def swap(old: str, new: str, base: str = BASE) -> tuple[str, str]:
    assert old in base
    return base, base.replace(old, new)


def before_assert(line: str) -> tuple[str, str]:
    return swap(ASSERT_LINE, f"    {line}\n{ASSERT_LINE}")


def decorated(decorator: str) -> tuple[str, str]:
    return swap("def test_add():", f"{decorator}\ndef test_add():")


WEAKENINGS: dict[str, tuple[tuple[str, str], str]] = {
    "test-removed": ((BASE, BASE.split("\n\ndef test_divide_by_zero")[0] + "\n"), "test_divide_by_zero: test removed"),
    "renamed-not-collected": (swap("def test_add():", "def check_add():"), "test_add: test removed or renamed"),
    "class-not-collected": (swap("unittest.TestCase", "object", UNITTEST), "AddTest: test class removed"),
    "class-disabled": (swap("TestCase):\n", "TestCase):\n    __test__ = False\n", UNITTEST), "AddTest: test class"),
    "assert-removed": (swap(ASSERT, "add(2, 2)"), "test_add: fewer assertions (1 → 0)"),
    "raises-removed": (swap(f"with {RAISES}:\n        divide", "divide"), "zero: fewer assertions (1 → 0)"),
    "self-assert-removed": (swap("self.assertEqual(add(2, 2), 4)", "add(2, 2)", UNITTEST), "fewer assertions"),
    "eq-to-truthy": (swap(ASSERT, "assert add(2, 2)"), f"assertion loosened: `{ASSERT}` → `assert add(2, 2)`"),
    "eq-to-in": (swap(ASSERT, "assert add(2, 2) in (3, 4, 5)"), "assertion loosened"),
    "eq-to-ge": (swap(ASSERT, "assert add(2, 2) >= 4"), "assertion loosened"),
    "or-true": (swap(ASSERT, f"{ASSERT} or True"), "assertion loosened"),
    "tautology": (swap(ASSERT, "assert add(2, 2) == add(2, 2)"), "assertion loosened"),
    "assertEqual-to-assertTrue": (swap("Equal(add(2, 2), 4)", "True(add(2, 2))", UNITTEST), "loosened"),
    "raises-broadened": (swap(RAISES, "pytest.raises(Exception)"), f"`{RAISES}` → `pytest.raises(Exception)`"),
    "raises-match-dropped": (swap(RAISES, 'pytest.raises(ZeroDivisionError, match="0")')[::-1], "assertion loosened"),
    "mark-skip": (decorated("@pytest.mark.skip(reason='later')"), "test_add: skip or xfail added"),
    "mark-skipif": (decorated("@pytest.mark.skipif(True, reason='x')"), "skip or xfail added"),
    "mark-xfail": (decorated("@pytest.mark.xfail"), "skip or xfail added"),
    "unittest-skip": (swap("    def test_add", "    @unittest.skip('x')\n    def test_add", UNITTEST), "skip"),
    "call-skip": (before_assert("pytest.skip('later')"), "skip or xfail added"),
    "call-xfail": (before_assert("pytest.xfail('later')"), "skip or xfail added"),
    "call-importorskip": (before_assert("pytest.importorskip('nothere')"), "skip or xfail added"),
    "pytestmark": ((BASE, BASE + "\npytestmark = pytest.mark.skip\n"), "skip or xfail added to the module"),
    "early-return": (before_assert("return"), "test_add: returns before its assertions"),
    "except-named-to-Exception": (swap("ValueError", "Exception", PARSE_NAMED), "an except widened"),
    "except-named-to-bare": (swap("except ValueError:", "except:", PARSE_NAMED), "an except widened"),
    "try-swallows-assert": (swap(ASSERT_LINE, SWALLOWED), "test_add: a try/except (or suppress) now swallows"),
    "suppress-swallows-assert": (swap(ASSERT_LINE, SUPPRESSED), "now swallows"),
    "unparsable": (swap(ASSERT, f"{ASSERT} +"), "unparsable after the edit"),
    "replaced-by-another-test": (
        swap("def test_add():\n    assert add(2, 2) == 4", "def test_true():\n    assert True is not False"),
        "test_add: test removed",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("change", "verdict"), WEAKENINGS.values(), ids=WEAKENINGS.keys())
def test_weakening_is_refused(change: tuple[str, str], verdict: str) -> None:
    verdicts = weakening(PATH, *change)
    assert any(verdict in v for v in verdicts), verdicts
    assert all(v.startswith(PATH) for v in verdicts)


def test_a_broken_original_falls_back_to_counting_tests() -> None:
    before = "def test_a(:\n    assert 1\n\ndef test_b():\n    assert 2\n"
    assert f"{PATH}: fewer tests (2 → 1)" in weakening(PATH, before, "def test_b():\n    assert 2\n")


def test_a_changed_expected_literal_is_not_weakening() -> None:
    assert weakening(PATH, BASE, BASE.replace("== 4", "== 5")) == []


def test_a_changed_expected_literal_needs_approval() -> None:
    assert changed_expectations(PATH, BASE, BASE.replace("== 4", "== 5")) == [
        f"{PATH}::test_add: expected value changed: `assert add(2, 2) == 4` → `assert add(2, 2) == 5`"
    ]


def test_a_changed_expected_literal_of_assert_equal_needs_approval() -> None:
    found = changed_expectations(PATH, *swap("add(2, 2), 4)", "add(2, 2), 5)", UNITTEST))
    assert found == [
        f"{PATH}::AddTest::test_add: expected value changed: "
        "`self.assertEqual(add(2, 2), 4)` → `self.assertEqual(add(2, 2), 5)`"
    ]


def test_a_rename_edit_changes_no_expectation() -> None:
    after = BASE.replace("import add,", "import plus,").replace("add(2, 2)", "plus(2, 2)")
    assert changed_expectations(PATH, BASE, after) == []
