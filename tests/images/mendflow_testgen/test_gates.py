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


TYPED = "def half(x: int) -> int:\n    return x // 2\n"
PROBE = (
    "import pytest\n\nfrom half import half\n\n\n"
    "def test_half_of_a_string() -> None:\n    with pytest.raises(TypeError):\n        half('4')\n"
)


def gates_on(tmp_path: Path, type_probes: bool) -> Gates:
    src = tmp_path / "work" / "src"  # as in a job: the repository inside the gates' writable work dir
    (src / "tests").mkdir(parents=True)
    (src / "pyproject.toml").write_text("[tool.mypy]\nfiles = ['half.py', 'tests']\n")
    (src / "half.py").write_text(TYPED)
    (src / "tests/test_half_mendflow.py").write_text(PROBE)
    return Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 120.0, 5, type_probes)


def test_a_pynguin_type_probe_gets_mypys_ignore_for_exactly_its_error(tmp_path: Path) -> None:
    gates = gates_on(tmp_path, type_probes=True)
    assert gates.lint(["tests/test_half_mendflow.py"]) == ["tests/test_half_mendflow.py"]
    text = (tmp_path / "work/src/tests/test_half_mendflow.py").read_text()
    assert '        half("4")  # type: ignore[arg-type]\n' in text


def test_a_written_test_with_a_type_error_is_dropped_not_ignored(tmp_path: Path) -> None:
    gates = gates_on(tmp_path, type_probes=False)
    assert gates.lint(["tests/test_half_mendflow.py"]) == []
    assert [d.reason for d in gates.out.dropped] == ["lint"]


def suite_gates(tmp_path: Path, generated: str) -> Gates:
    """A repository whose pytest collects only ``testing/``, with one passing generated test at ``generated``."""
    src = tmp_path / "work" / "src"
    for path, text in {
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['testing']\n",
        "half.py": TYPED,
        "testing/test_half.py": "from half import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
        generated: "from half import half\n\n\ndef test_half_of_odd():\n    assert half(5) == 2\n",
    }.items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    gates = Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 120.0)
    gates.out.kept = [{"node_id": f"{generated}::test_half_of_odd", "file": generated}]
    return gates


def test_a_kept_test_the_repos_own_test_command_never_runs_is_dropped(tmp_path: Path) -> None:
    gates = suite_gates(tmp_path, "tests/test_half_mendflow.py")
    gates.with_suite(["tests/test_half_mendflow.py"])
    assert (gates.out.kept, [d.reason for d in gates.out.dropped]) == ([], ["not_collected"])
    assert not (tmp_path / "work/src/tests/test_half_mendflow.py").exists()


def test_a_kept_test_under_the_repos_testpaths_stays(tmp_path: Path) -> None:
    gates = suite_gates(tmp_path, "testing/test_half_mendflow.py")
    gates.with_suite(["testing/test_half_mendflow.py"])
    assert ([k["node_id"] for k in gates.out.kept], gates.out.dropped) == (
        ["testing/test_half_mendflow.py::test_half_of_odd"],
        [],
    )


def test_a_pynguin_test_ruff_faults_goes_and_the_rest_of_its_file_stays(tmp_path: Path) -> None:
    src = tmp_path / "work" / "src"
    (src / "tests").mkdir(parents=True)
    (src / "half.py").write_text(TYPED)
    probes = (
        "import json\n\nfrom half import half\n\n\n"
        "def test_half() -> None:\n    assert half(4) == 2\n\n\n"
        "def test_keys() -> None:\n    json.dumps({'0': 1, '0': 2})\n"  # F601: a repeated key
    )
    (src / "tests/test_half_mendflow.py").write_text(probes)
    gates = Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 60.0, 5, True)
    assert gates.lint(["tests/test_half_mendflow.py"]) == ["tests/test_half_mendflow.py"]
    text = (src / "tests/test_half_mendflow.py").read_text()
    assert "def test_half" in text and "test_keys" not in text and "json" not in text  # its import went with it
    assert [(d.node_id, d.reason) for d in gates.out.dropped] == [("tests/test_half_mendflow.py::test_keys", "lint")]


def test_a_lint_finding_in_one_kept_test_drops_that_test_not_its_file(tmp_path: Path) -> None:
    src, path = tmp_path / "work" / "src", "tests/test_half_mendflow.py"
    (src / "tests").mkdir(parents=True)
    (src / "half.py").write_text(TYPED)
    (src / path).write_text(
        "from half import half\n\n\n"
        "def test_half() -> None:\n    assert half(4) == 2\n\n\n"
        "def test_odd() -> None:\n    f = lambda: half(5)  # E731\n    assert f() == 2\n"
    )
    gates = Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 60.0)
    nodes = [f"{path}::test_half", f"{path}::test_odd"]
    gates.out.kept = [{"node_id": n, "file": path} for n in nodes]
    gates.rewrite({path: nodes}, nodes)
    assert [k["node_id"] for k in gates.out.kept] == [f"{path}::test_half"]
    assert [(d.node_id, d.reason) for d in gates.out.dropped] == [(f"{path}::test_odd", "lint")]


def test_a_generated_file_with_no_kept_test_leaves_before_the_whole_suite_runs(tmp_path: Path) -> None:
    src = tmp_path / "work" / "src"
    (src / "tests").mkdir(parents=True)
    (src / "half.py").write_text("def half(x):\n    if x < 0:\n        return 0\n    return x // 2\n")
    (src / "tests/test_half.py").write_text("from half import half\n\n\ndef test_half():\n    assert half(4) == 2\n")
    generated = {
        "tests/test_half_mendflow.py": "from half import half\n\n\ndef test_negative():\n    assert half(-1) == 0\n",
        # Adds nothing and fails (a repr with an address, as Pynguin writes): none of this file is kept.
        "tests/test_repr_mendflow.py": "from half import half\n\n\ndef test_repr():\n    assert repr(half) == '0x1'\n",
    }
    targets = [{"path": "half.py", "symbol": "half", "start_line": 1, "end_line": 4, "missing_lines": [3]}]
    gates = Gates(src, sys.executable, {}, Log(tmp_path / "log"), tmp_path / "work", lambda: 120.0, 2)

    out = gates.run_all(generated, "tests", targets)

    assert [k["node_id"] for k in out.kept] == ["tests/test_half_mendflow.py::test_negative"]
    assert not (src / "tests/test_repr_mendflow.py").exists()
