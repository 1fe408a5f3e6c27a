"""``mendflow plan`` end to end on a real repository and build report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mendflow.cli import main
from mendflow.contracts import TestSpec
from tests.fixtures.repos import RepoFactory
from tests.mendflow.plan.helpers import measured_report

SOURCE = "def half(x):\n    if x % 2:\n        raise ValueError('odd')\n    return x // 2\n"


def _run(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.setattr("sys.argv", ["mendflow", *argv])
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", "")
    with pytest.raises(SystemExit) as exit_info:
        main()
        raise SystemExit(0)
    return int(exit_info.value.code or 0)


def test_plan_writes_a_testspec(make_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo({"half.py": SOURCE, "tests/test_half.py": "def test_nothing():\n    pass\n"})
    report = tmp_path / "build_report.json"
    report.write_text(measured_report(repo).model_dump_json())
    out = tmp_path / "out" / "testspec.json"

    code = _run(monkeypatch, "plan", "--report", str(report), "--repo", str(repo), "--out", str(out), "--offline")

    assert code == 0
    spec = TestSpec.model_validate_json(out.read_text())
    # The function, then the module's own gap: nothing imports half.py, so its `def` line never ran either.
    assert [t.ref for t in spec.targets] == ["half.py::half", "half.py"]
    assert spec.targets[1].missing_lines == [1]


def test_plan_with_a_broken_report_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "build_report.json"
    report.write_text(json.dumps({"repo": "x"}))

    code = _run(monkeypatch, "plan", "--report", str(report), "--out", str(tmp_path / "spec.json"))

    assert code == 2
    err = capsys.readouterr().err
    assert "is not a valid BuildReport" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "spec.json").exists()
