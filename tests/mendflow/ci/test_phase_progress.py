"""The build's progress: the runner's phase lines become stage progress with names the trusted side owns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.ci import ci_build
from mendflow import progress
from mendflow.ci.job import COMPILED_PHASES, PHASES, phase_progress
from mendflow.contracts import Language
from tests.fixtures.repos import RepoFactory


def _line(done: object, total: object, item: str = "x") -> str:
    return progress.LINE_PREFIX + json.dumps({"done": done, "total": total, "item": item})


def _stages(lines: list[str], language: Language = Language.PYTHON) -> list[tuple[float, str]]:
    seen: list[progress.Update] = []
    with progress.listening(seen.append):
        reader = phase_progress("B1", language)
        for line in lines:
            reader(line)
    return [(u.done, u.detail) for u in seen if u.kind is progress.Kind.PHASE]


def test_a_phase_line_reports_the_phase_by_our_name() -> None:
    assert _stages([_line(1, len(PHASES), "<script>evil</script>")]) == [(1, "dependencies")]


@pytest.mark.parametrize(
    "line",
    [_line(2, 99), _line("2", len(PHASES)), _line(True, len(PHASES)), "MENDFLOW_PROGRESS [[[", "tests passed"],
    ids=["other total", "string", "bool", "not json", "plain output"],
)
def test_a_line_that_is_not_our_phase_line_says_nothing(line: str) -> None:
    assert _stages([line]) == []


def test_a_compiled_languages_build_phase_is_read_by_its_list() -> None:
    assert _stages([_line(2, len(COMPILED_PHASES))], Language.GO) == [(2, "build")]
    assert _stages([_line(2, len(COMPILED_PHASES))]) == []  # a Python build has five phases


def test_a_backward_claim_does_not_move_the_bar() -> None:
    assert _stages([_line(3, len(PHASES)), _line(1, len(PHASES))]) == [(3, "tests")]


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server", "mendflow_env")
def test_a_real_build_reports_every_phase_in_order(make_repo: RepoFactory, tmp_path: Path) -> None:
    repo = make_repo(
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
            "p/__init__.py": "X = 1\n",
            "tests/test_p.py": "import p\n\n\ndef test_x() -> None:\n    assert p.X == 1\n",
        },
        name="phases",
    )
    seen: list[progress.Update] = []
    with progress.listening(seen.append):
        ci_build(repo=str(repo), stage="B1")
    details = [u.detail for u in seen if u.kind is progress.Kind.PHASE and u.stage == "B1"]
    assert details == list(PHASES[1:])  # unpack is phase 0: the bar starts there without a move
