"""The in-job Pynguin driver with a real Pynguin in its own uv venv: a fixed seed, exceptions asserted with
pytest.raises (never xfail), and the stack-size padding of instrumented code."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mendflow_runner.proc import Log
from mendflow_testgen import edit, pyn

from mendflow.testgen.builder import PYNGUIN_VERSION

pytestmark = pytest.mark.slow

HALF = """\
def half(x: int) -> int:
    if x % 2:
        raise ValueError("odd")
    return x // 2
"""


@pytest.fixture(scope="module")
def pynguin_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("pyn")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    found = pyn.install(work, pyn.python_for_pynguin(), PYNGUIN_VERSION, env, Log(work / "install.log"), 600)
    assert found, (work / "install.log").read_text()
    return found


def _generate(root: Path, pynguin_python: str, seed: int) -> str:
    src = root / "src"
    src.mkdir(parents=True)
    (src / "half.py").write_text(HALF)
    modules = [{"module": "half", "project_path": ".", "test_path": "tests/test_half_mendflow.py"}]
    options = {"search_time": 5, "module_timeout": 120, "seed": seed}
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    deadline = time.monotonic() + 300
    files, notes, xfails = pyn.generate(
        root, src, pynguin_python, sys.executable, modules, options, env, Log(root / "pyn.log"),
        lambda: deadline - time.monotonic(),
    )  # fmt: skip
    assert files, (notes, (root / "pyn.log").read_text()[-3000:])
    assert not xfails
    return files["tests/test_half_mendflow.py"]


def test_the_same_seed_generates_the_same_tests_and_raises_are_asserted(tmp_path: Path, pynguin_python: str) -> None:
    first = _generate(tmp_path / "a", pynguin_python, 7)
    second = _generate(tmp_path / "b", pynguin_python, 7)

    assert first == second
    assert "with pytest.raises(ValueError):" in first  # half(odd): an informative test, not an xfail
    assert "xfail" not in first and edit.test_names(first)


def test_the_wrapper_pads_the_stack_size_of_instrumented_code(pynguin_python: str) -> None:
    check = (
        pyn.PAD_STACK
        + "from bytecode import Bytecode, ControlFlowGraph\n"
        + "def f(a, b):\n    return [x + a for x in (a, b, f'{a!r}')]\n"
        + "code = ControlFlowGraph.from_bytecode(Bytecode.from_code(f.__code__)).to_code()\n"
        + "print(code.co_stacksize - f.__code__.co_stacksize)\n"
    )
    out = subprocess.run([pynguin_python, "-c", check], capture_output=True, text=True, check=True)

    assert int(out.stdout) >= 32
