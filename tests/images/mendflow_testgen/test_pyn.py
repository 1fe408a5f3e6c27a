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
# humanize 4.17.0's ``intword`` (MIT) with stand-ins for its i18n helpers: on CPython 3.11 bytecode's checked
# stack-size computation of Pynguin's instrumented ``intword`` fails ("got negative size"), which used to end
# the whole module's generation (humanize.number's, in the real-repos benchmark).
INTWORD = """\
import bisect

powers = [10**x for x in (3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 100)]
human_powers = [("thousand", "thousand")] * 12


def _format_not_finite(v):
    return str(v)


def _ngettext(a, b, n):
    return a


def decimal_separator():
    return "."


def intword(value: object, format: str = "%.1f") -> str:
    import math

    try:
        if not math.isfinite(float(value)):
            return _format_not_finite(float(value))
        value = int(value)
    except (TypeError, ValueError):
        return str(value)
    if value < 0:
        value *= -1
        negative_prefix = "-"
    else:
        negative_prefix = ""
    if value < powers[0]:
        return f"{negative_prefix}{value}"
    ordinal = bisect.bisect_right(powers, value)
    largest_ordinal = ordinal == len(powers)
    ordinal -= 1
    power = powers[ordinal]
    chopped = value / power
    rounded_value = float(format % chopped)
    if not largest_ordinal and rounded_value == powers[ordinal + 1] // power:
        ordinal += 1
        rounded_value = 1.0
    singular, plural = human_powers[ordinal]
    unit = _ngettext(singular, plural, math.ceil(rounded_value))
    decimal_sep = decimal_separator()
    number = (format % rounded_value).replace(".", decimal_sep)
    return f"{negative_prefix}{number} {unit}"
"""


@pytest.fixture(scope="module")
def pynguin_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("pyn")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    found = pyn.install(work, pyn.python_for_pynguin(), PYNGUIN_VERSION, env, Log(work / "install.log"), 600)
    assert found, (work / "install.log").read_text()
    return found


def _generate_all(
    root: Path, pynguin_python: str, seed: int, sources: dict[str, str], workers: int = 1
) -> tuple[dict[str, str], list[str]]:
    src = root / "src"
    src.mkdir(parents=True)
    modules = []
    for module, source in sources.items():
        (src / f"{module}.py").write_text(source)
        # The module's own search time (the trusted side sizes it by the module's gap) wins over the default.
        modules.append({"module": module, "project_path": ".", "test_path": f"tests/test_{module}_mendflow.py",
                        "search_time": 5})  # fmt: skip
    options = {"search_time": 90, "module_timeout": 120, "seed": seed, "workers": workers}
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    deadline = time.monotonic() + 300
    files, notes, xfails = pyn.generate(
        root, src, pynguin_python, sys.executable, modules, options, env, Log(root / "pyn.log"),
        lambda: deadline - time.monotonic(),
    )  # fmt: skip
    assert "--maximum-search-time 5 " in (root / "pyn.log").read_text()
    assert not xfails
    return files, notes


def _generate(root: Path, pynguin_python: str, seed: int, module: str = "half", source: str = HALF) -> str:
    files, notes = _generate_all(root, pynguin_python, seed, {module: source})
    assert files, (notes, (root / "pyn.log").read_text()[-3000:])
    return files[f"tests/test_{module}_mendflow.py"]


def _meeting(here: Path, me: str, other: str) -> str:
    """A module whose import waits (less than Pynguin's module timeout) for the other one's import to start."""
    return (
        f"import pathlib, time\n"
        f"pathlib.Path({str(here / me)!r}).touch()\n"
        f"_until = time.monotonic() + 8\n"
        f"while not pathlib.Path({str(here / other)!r}).exists():\n"
        f"    if time.monotonic() > _until:\n"
        f"        raise RuntimeError('imported alone')\n"
        f"    time.sleep(0.05)\n\n" + HALF.replace("half", f"half_{me}")
    )


def test_the_same_seed_generates_the_same_tests_and_raises_are_asserted(tmp_path: Path, pynguin_python: str) -> None:
    first = _generate(tmp_path / "a", pynguin_python, 7)
    second = _generate(tmp_path / "b", pynguin_python, 7)

    assert first == second
    assert "with pytest.raises(ValueError):" in first  # half(odd): an informative test, not an xfail
    assert "xfail" not in first and edit.test_names(first)


def test_modules_are_searched_as_many_at_once_as_the_job_has_workers(tmp_path: Path, pynguin_python: str) -> None:
    here = tmp_path / "w" / "met"  # inside the job's work dir: the sandbox sees that and a /tmp of its own
    here.mkdir(parents=True)
    sources = {"left": _meeting(here, "left", "right"), "right": _meeting(here, "right", "left")}

    files, notes = _generate_all(tmp_path / "w", pynguin_python, 7, sources, workers=2)

    assert sorted(files) == ["tests/test_left_mendflow.py", "tests/test_right_mendflow.py"], notes
    assert "half_left(" in files["tests/test_left_mendflow.py"]


def test_pynguins_bytecode_is_kept_for_the_jobs_next_pynguin_and_never_beside_the_sources(
    tmp_path: Path, pynguin_python: str
) -> None:
    _generate(tmp_path, pynguin_python, 7)

    cached = {p.name.split(".")[0] for p in (tmp_path / "pynguin-pycache").rglob("*.pyc")}
    assert {"generator", "half"} <= cached  # Pynguin's own modules and the module under test
    assert not list((tmp_path / "src").rglob("__pycache__"))


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


def test_a_module_whose_instrumented_code_fails_the_stack_check_still_gets_tests(
    tmp_path: Path, pynguin_python: str
) -> None:
    tests = _generate(tmp_path, pynguin_python, 7, "number", INTWORD)

    assert "intword(" in tests and edit.test_names(tests)
