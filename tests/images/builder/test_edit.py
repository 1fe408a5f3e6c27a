"""The in-job source edits on generated test files."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "images" / "builder"))

from mendflow_builder import edit

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
    assert "def test_power_1():" in tidy
    assert "import calc.core as core_" in tidy  # the sys.modules alias survives ruff's unused-import fix


def test_removing_a_test_keeps_the_others() -> None:
    source = "import pytest\n\n\n@pytest.mark.fast\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    assert edit.remove_functions(source, {"test_a"}) == "import pytest\n\n\ndef test_b():\n    pass\n"


def test_fixtures_requested_exclude_parametrized_arguments() -> None:
    source = '@pytest.mark.parametrize("x, y", [(1, 2)])\ndef test_a(x, y, tmp_path, db):\n    pass\n'
    assert edit.requested_fixtures(source) == {"test_a": {"tmp_path", "db"}}
