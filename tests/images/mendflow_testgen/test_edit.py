"""The in-job source edits on generated test files."""

from __future__ import annotations

import subprocess
import sys

from mendflow_testgen import edit

PYNGUIN = """\
import pytest
import sys
import calc.core
core_ = sys.modules["calc.core"]


def test_0():
    var_0 = core_.Calculator()
    assert core_.MAX_EXPONENT == 1000
    assert core_.Calculator.precision == 10
    var_1 = var_0.power(base=2.0, exponent=3.0)
    assert var_1 == pytest.approx(8.0)
"""


def test_pynguin_tests_lose_constant_dumps_and_get_descriptive_names() -> None:
    tidy = edit.tidy_pynguin(PYNGUIN)
    assert "MAX_EXPONENT" not in tidy and "precision ==" not in tidy
    assert "def test_power_1() -> None:" in tidy
    assert "import calc.core as core_" in tidy  # the sys.modules alias survives ruff's unused-import fix


def test_removing_a_test_keeps_the_others() -> None:
    source = "import pytest\n\n\n@pytest.mark.fast\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    assert edit.remove_functions(source, {"test_a"}) == "import pytest\n\n\ndef test_b():\n    pass\n"


def test_fixtures_requested_exclude_parametrized_arguments() -> None:
    source = '@pytest.mark.parametrize("x, y", [(1, 2)])\ndef test_a(x, y, tmp_path, db):\n    pass\n'
    assert edit.requested_fixtures(source) == {"test_a": {"tmp_path", "db"}}


RAISING = """\
import pytest
import calc.core as core_
from calc.core import CalcError


def test_0():
    var_0 = core_.Calculator()
    var_1 = -1057.7065460591384
    assert var_1 == pytest.approx(-1057.7065460591384, abs=0.01, rel=0.01)
    var_2 = []
    var_0.extend_history(var_2)
    assert var_2 == [1.0]
    var_3 = var_0.__hash__()
    assert var_3 == -9113997932937421182
    var_4 = 12.5
    assert var_4 == pytest.approx(12.5, abs=0.01, rel=0.01)
    with pytest.raises(CalcError):
        var_0.divide(a=var_1, b=0.0)
"""


def test_a_test_ending_in_pytest_raises_is_named_after_the_exception_and_hollow_asserts_go() -> None:
    tidy = edit.tidy_pynguin(RAISING)

    assert "def test_divide_raises_calcerror_1() -> None:" in tidy
    assert "pytest.approx(-1057.7065460591384" not in tidy  # asserted the literal against itself
    assert "var_1 = -1057.7065460591384" in tidy  # still used by the call
    assert "assert var_2 == [1.0]" in tidy  # the list went into the code under test: a real check
    assert "-9113997932937421182" not in tidy  # a hash differs in every process
    assert "    var_0.__hash__()\n" in tidy and "var_3" not in tidy  # still runs __hash__, binds nothing unused
    assert "var_4" not in tidy
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F", "--no-cache", "-"],
        input=tidy,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout  # F841 on an unused name would fail the whole file at the gates


def test_tests_at_names_the_tests_holding_the_lines_and_the_lines_outside() -> None:
    source = "import x\n\n\ndef test_a() -> None:\n    x.f(1)\n\n\nclass TestB:\n"
    source += "    def test_c(self) -> None:\n        x.g()\n"
    assert edit.tests_at(source, {5, 10, 1}) == ({"test_a", "TestB::test_c"}, {1})


def test_an_assert_on_a_repr_with_an_objects_address_goes_and_the_call_stays() -> None:
    source = (
        "import humanize.number as module_0\n\n\ndef test_0():\n"
        "    var_0 = module_0.clamp(1, module_0.ordinal)\n"
        '    assert var_0 == "<function ordinal at 0x7f0b21850720>"\n'
    )
    tidy = edit.tidy_pynguin(source)
    assert "0x7f0b21850720" not in tidy
    assert "    module_0.clamp(1, module_0.ordinal)\n" in tidy  # still run, bound to no name nothing reads (F841)
