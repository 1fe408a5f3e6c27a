"""Progress while tests are generated: the in-job package prints a line per finished module (or gated file),
the trusted side turns the lines it can believe into ``on_progress(done, total)`` calls.

The lines come from the job, so they are untrusted: another total, a negative count, or garbage says nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mendflow_testgen import progress as in_job

from mendflow.contracts import BuildStatus
from mendflow.launcher.base import JobSpec, JobState
from mendflow.launcher.local import LocalLauncher
from mendflow.plan import plan_tests
from mendflow.progress import LINE_PREFIX, ProgressReader, parse_progress
from mendflow.settings import PynguinSettings, Settings
from mendflow.store.file import FileStore
from mendflow.testgen import build_tests
from mendflow.testgen.job import expected_total
from tests.mendflow.plan.helpers import measured_report, new_repo


def line(fields: object) -> str:
    return LINE_PREFIX + json.dumps(fields)


# -- the line's format, both sides -------------------------------------------------------------------------


def test_the_in_job_line_is_what_the_trusted_side_reads(capsys: pytest.CaptureFixture[str]) -> None:
    in_job.report(2, 5, "calc.core\nMENDFLOW_PROGRESS {}")  # a module name cannot start a second line
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1 and printed.startswith("MENDFLOW_PROGRESS ")
    assert parse_progress(printed.rstrip("\n"), 5) == 2


def test_gated_files_report_a_dropped_file_at_once_and_the_rest_at_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    gated = in_job.GatedFiles(["tests/test_b.py", "tests/test_a.py"])
    gated.alive(["tests/test_a.py"])  # a gate dropped test_b
    first = capsys.readouterr().out.splitlines()
    gated.alive([])
    last = capsys.readouterr().out.splitlines()
    assert [parse_progress(x, 2) for x in first] == [1] and "tests/test_b.py" in first[0]
    assert [parse_progress(x, 2) for x in last] == [2] and "tests/test_a.py" in last[0]


def test_the_expected_total_is_what_mendflow_asked_for() -> None:
    pynguin = {"mode": "pynguin", "pynguin": {"modules": [{"module": "a"}, {"module": "b"}]}, "files": {}}
    files = {"mode": "files", "files": {"tests/test_a.py": "", "tests/test_b.py": "", "tests/test_c.py": ""}}
    assert (expected_total(pynguin), expected_total(files)) == (2, 3)


# -- forged lines ------------------------------------------------------------------------------------------


def test_a_progress_line_gives_its_done_count() -> None:
    assert parse_progress(line({"done": 2, "total": 5, "item": "calc.core"}), 5) == 2


def test_a_line_for_another_total_is_ignored() -> None:
    assert parse_progress(line({"done": 2, "total": 6}), 5) is None


def test_a_negative_count_is_clamped_to_none_done() -> None:
    assert parse_progress(line({"done": -3, "total": 5}), 5) == 0


def test_a_count_beyond_the_total_is_clamped_to_the_total() -> None:
    assert parse_progress(line({"done": 10**40, "total": 5}), 5) == 5


@pytest.mark.parametrize(
    "text",
    [
        LINE_PREFIX + "not json",
        LINE_PREFIX + "[" * 4000,  # nests deeper than the JSON parser recurses
        line([2, 5]),
        line({"done": True, "total": 5}),
        line({"done": 2.5, "total": 5}),
        line({"done": "2", "total": 5}),
        line({"done": 2, "total": 5.0}),
        line({"done": 2}),
        "  " + line({"done": 2, "total": 5}),  # not at the start of the line
        "done: 2/5",
    ],
)
def test_garbage_is_ignored(text: str) -> None:
    assert parse_progress(text, 5) is None


def test_the_reader_reports_only_moves_forward() -> None:
    calls: list[tuple[int, int]] = []
    reader = ProgressReader(3, lambda done, total: calls.append((done, total)))
    for done in (1, 1, 0, 3, 2):
        reader(line({"done": done, "total": 3}))
    assert calls == [(1, 3), (3, 3)]


def test_a_real_jobs_lines_become_progress_and_its_forgeries_do_not(tmp_path: Path) -> None:
    printed = [
        line({"done": 1, "total": 3, "item": "a"}),
        line({"done": 2, "total": 99}),
        line({"done": -5, "total": 3}),
        LINE_PREFIX + "{garbage",
        "ordinary output",
        line({"done": 50, "total": 3}),
    ]
    code = "\n".join(f"print({text!r}, flush=True)" for text in printed)
    calls: list[tuple[int, int]] = []
    launcher = LocalLauncher(Settings(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache"))
    spec = JobSpec(name="forger", command=["python", "-c", code], timeout_sec=60)
    result = launcher.run(spec, ProgressReader(3, lambda done, total: calls.append((done, total))))
    assert result.state is JobState.SUCCEEDED, result.log_tail
    assert calls == [(1, 3), (3, 3)]


# -- the builder -------------------------------------------------------------------------------------------

HALF = "def half(x):\n    if x % 2:\n        raise ValueError('odd')\n    return x // 2\n"
CLAMP = "def clamp(x, hi):\n    if x > hi:\n        return hi\n    return x\n"
EXISTING = "from clamp import clamp\nfrom half import half\n\n\ndef test_some():\n    assert half(2) == 1\n"


@pytest.mark.slow
def test_pynguin_generation_moves_progress_per_module(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"half.py": HALF, "clamp.py": CLAMP, "tests/test_some.py": EXISTING})
    report = measured_report(repo)
    shutil.rmtree(repo / ".coverage-data")
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        state_dir=tmp_path / "state",
        cache_dir=tmp_path / "cache",
        pynguin=PynguinSettings(search_time_sec=2, search_time_max_sec=2, module_limit_sec=90),
    )
    spec = plan_tests(report, repo, None, settings)
    assert sorted({t.path for t in spec.targets}) == ["clamp.py", "half.py"]
    calls: list[tuple[int, int]] = []

    result = build_tests(
        spec, repo, settings, use_llm=False, store=FileStore(tmp_path / "store"), launcher=LocalLauncher(settings),
        on_progress=lambda done, total: calls.append((done, total)),
    )  # fmt: skip

    assert result.precheck is not BuildStatus.ERRORED, result.notes
    assert calls == [(0, 2), (1, 2), (2, 2), (2, 2)]  # the middle two come from the job's lines, per module
