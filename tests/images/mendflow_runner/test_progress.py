"""The runner's progress lines: one per phase, then the tests' count read from the pytest plugin's journal,
each read back by the trusted side's own parser (``mendflow.progress.parse_phase``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mendflow.ci.job import PHASES
from mendflow.progress import PhaseClaim, parse_phase
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import RUNNER_DIR, demo_files, runner_env, snapshot

sys.path.insert(0, str(RUNNER_DIR))  # the image's packages, as the job runs them

from mendflow_runner import progress as runner_progress
from mendflow_runner.testing import PLUGIN_DIR

SUITE = """\
import pytest


def test_passes() -> None:
    assert True


def test_fails() -> None:
    assert False


@pytest.mark.skip(reason="not today")
def test_skipped() -> None:
    pass


def test_deselected() -> None:
    pass
"""


def claims(stdout: str) -> list[PhaseClaim]:
    return [c for line in stdout.splitlines() if (c := parse_phase(line, PHASES)) is not None]


def run_suite(tmp_path: Path) -> Path:
    """A real pytest run with the job's plugin; its journal."""
    (tmp_path / "test_suite.py").write_text(SUITE)
    journal = tmp_path / "events.jsonl"
    env = {"PYTHONPATH": str(PLUGIN_DIR), "MENDFLOW_PYTEST_EVENTS": str(journal), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "pytest", "-p", "mendflow_job_plugin", "-p", "no:cacheprovider", "-q"]
    subprocess.run([*argv, "-k", "not deselected"], cwd=tmp_path, env=env, capture_output=True, check=False)
    return journal


def test_the_runner_and_the_trusted_side_name_the_same_phases() -> None:
    assert runner_progress.PHASES == PHASES


def test_the_journal_counts_every_selected_test_once_through(tmp_path: Path) -> None:
    assert runner_progress.JournalCount(run_suite(tmp_path)).read() == (3, 3)  # passed, failed, skipped


def test_a_journal_line_being_written_is_read_once_complete(tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_text('{"event": "collected", "count": 2}\n{"event": "report", "nodeid": "t::a", "when": "ca')
    count = runner_progress.JournalCount(journal)
    assert count.read() == (0, 2)
    with journal.open("a") as fh:
        fh.write('ll", "outcome": "passed"}\n')
    assert count.read() == (1, 2)


def test_the_counter_prints_the_final_count_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = run_suite(tmp_path)
    with runner_progress.TestCounter(journal, poll_sec=3600) as counter:
        pass
    counter.tick()  # nothing moved since
    assert claims(capsys.readouterr().out) == [PhaseClaim(PHASES.index("tests"), (3, 3))]


@pytest.mark.slow
def test_a_build_prints_each_phase_in_order_and_the_tests_count(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    source = snapshot(make_repo(demo_files()), tmp_path / "in" / "source.tar.gz")
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow_runner", "--source", str(source), "--out", str(tmp_path / "out")],
        env=runner_env(uv_cache),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = claims(proc.stdout)
    assert [c.done for c in seen if c.count is None] == list(range(len(PHASES)))
    assert [c.count for c in seen if c.count is not None][-1] == (2, 2)  # the demo's two fast tests
