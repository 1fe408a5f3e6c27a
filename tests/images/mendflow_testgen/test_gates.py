"""The gates' bookkeeping when they drop tests from the files they keep."""

from __future__ import annotations

import sys
from pathlib import Path

from mendflow_runner.proc import Log
from mendflow_testgen.gates import Gates


def test_dropping_from_one_file_after_another_file_went_does_not_touch_the_gone_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "tests/test_a.py").write_text("def test_a():\n    pass\n")
    (src / "tests/test_b.py").write_text("def test_b1():\n    pass\n\n\ndef test_b2():\n    pass\n")
    gates = Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 60.0)
    final = ["tests/test_a.py", "tests/test_b.py"]
    gates._drop_from_files(final, {"tests/test_a.py::test_a"}, "lint")
    gates._drop_from_files(final, {"tests/test_b.py::test_b1"}, "lint")
    assert not (src / "tests/test_a.py").exists()
    assert (src / "tests/test_b.py").read_text() == "def test_b2():\n    pass\n"
