"""Process-local progress: the registry, the pipeline's Progress reporting into it and into the Prefect
artifact, the CLI's rich view of it, and a real offline run whose progress moves during generation."""

from __future__ import annotations

import io
import json
import os
import pty
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from uuid import UUID

import pygit2
import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterId, ArtifactFilterType
from rich.console import Console
from rich.progress import Progress as RichProgress

from mendflow import progress
from mendflow.ci.job import PHASES, phase_progress
from mendflow.cli.build import PlainView, ProgressView
from mendflow.contracts import BuildReport, BuildStatus, PipelineOutcome
from mendflow.progress import MAX_COUNT, MAX_PROGRESS_LINE, Kind, PhaseClaim, Update, parse_phase
from tasks.runs import Progress
from tests.fixtures.repos import RepoFactory, commit_files
from tests.flows.sample_repos import PASSING

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "calc"


def stage(name: str, done: float, detail: str = "") -> Update:
    return Update(Kind.STAGE, name, done, 100.0, detail)


# -- the registry ------------------------------------------------------------------------------------------


def test_a_listener_hears_reports_until_it_stops() -> None:
    heard: list[Update] = []
    stop = progress.listen(heard.append)
    progress.report("plan", 25, 100)
    stop()
    progress.report("merge", 95, 100)
    assert heard == [stage("plan", 25)]


def test_a_listener_that_raises_neither_fails_the_reporter_nor_silences_the_others() -> None:
    def broken(update: Update) -> None:
        raise RuntimeError("display bug")

    heard: list[Update] = []
    with progress.listening(broken), progress.listening(heard.append):
        progress.report("plan", 25, 100)
    assert heard == [stage("plan", 25)]


def test_a_job_line_loses_its_control_and_format_characters() -> None:
    heard: list[Update] = []
    with progress.listening(heard.append):
        progress.job_output("B1", "\x1b]0;pwned\x07ok\u202e gnp.exe\x00")
    assert heard == [Update(Kind.OUTPUT, "B1", detail="]0;pwned ok  gnp.exe")]


# -- a build job's phase lines, read strictly -------------------------------------------------------------

TESTS = PHASES.index("tests")


def phase_line(**fields: object) -> str:
    return progress.LINE_PREFIX + json.dumps({"total": len(PHASES), "item": "x", **fields})


def test_a_phase_line_claims_its_phase_and_its_tests_count() -> None:
    line = phase_line(done=TESTS, tests_done=3, tests_total=7)
    assert parse_phase(line, PHASES) == PhaseClaim(TESTS, (3, 7))


@pytest.mark.parametrize(
    "line",
    [
        phase_line(done=len(PHASES)),  # past the last phase
        phase_line(done=-1),
        phase_line(done=10**40),
        phase_line(done=1.0),
        phase_line(done=True),
        phase_line(done="1"),
        progress.LINE_PREFIX + json.dumps({"done": 1, "total": 99}),  # another job's total
        progress.LINE_PREFIX + json.dumps({"done": 1, "total": float(len(PHASES))}),
        phase_line(done=1, tests_done=1, tests_total=2),  # a count outside the tests phase
        phase_line(done=TESTS, tests_done=3, tests_total=2),  # more through than collected
        phase_line(done=TESTS, tests_done=-1, tests_total=2),
        phase_line(done=TESTS, tests_done=1, tests_total=MAX_COUNT + 1),
        phase_line(done=TESTS, tests_done=1),  # half a count
        phase_line(done=1, item="x" * MAX_PROGRESS_LINE),  # too long to be ours, valid JSON or not
        progress.LINE_PREFIX + "[" * 4000,
        progress.LINE_PREFIX + "[1, 2]",
        "pytest says " + phase_line(done=1),  # the prefix must start the line
        "\x1b[2J" + phase_line(done=1),
    ],
)
def test_anything_else_claims_nothing(line: str) -> None:
    assert parse_phase(line, PHASES) is None


def phase_updates(lines: list[str]) -> list[tuple[Kind, float, float, str]]:
    heard: list[Update] = []
    with progress.listening(heard.append):
        reader = phase_progress("B1")
        for line in lines:
            reader(line)
    return [(u.kind, u.done, u.total, u.detail) for u in heard if u.kind in (Kind.PHASE, Kind.COUNT)]


def test_phases_move_forward_under_our_names_and_counts_only_when_they_change() -> None:
    lines = [
        phase_line(done=1, item="<b>evil</b>"),
        phase_line(done=TESTS, tests_done=0, tests_total=4),
        phase_line(done=TESTS, tests_done=0, tests_total=4),  # the same count again
        phase_line(done=1),  # backward
        phase_line(done=TESTS, tests_done=4, tests_total=4),
    ]
    assert phase_updates(lines) == [
        (Kind.PHASE, 1, len(PHASES), "dependencies"),
        (Kind.PHASE, TESTS, len(PHASES), "tests"),
        (Kind.COUNT, 0, 4, "tests"),
        (Kind.COUNT, 4, 4, "tests"),
    ]


# -- the CLI's view ----------------------------------------------------------------------------------------


def view() -> tuple[ProgressView, RichProgress]:
    bar = RichProgress(console=Console(file=io.StringIO(), force_terminal=True))
    return ProgressView(bar, bar.add_task("healing", total=None, job="")), bar


def test_the_view_shows_the_stage_its_counts_and_its_share() -> None:
    show, bar = view()
    show(stage("tests: generate", 51.0, "2/5 modules"))
    task = bar.tasks[0]
    assert (task.description, task.completed, task.total) == ("tests: generate 2/5 modules", 51.0, 100.0)


def test_the_view_shows_a_jobs_line_as_text_never_as_markup() -> None:
    show, bar = view()
    show(Update(Kind.OUTPUT, "B1", detail="[bold red]$ uv sync[/] [/unbalanced]"))
    show(Update(Kind.OUTPUT, "B1", detail=progress.LINE_PREFIX + '{"done": 1, "total": 2}'))  # not for people
    bar.console.print(bar)  # renders without a markup error
    assert bar.tasks[0].fields["job"] == "B1 · [bold red]$ uv sync[/] [/unbalanced]"


def test_the_run_shows_a_jobs_phases_on_a_row_of_their_own_moving_with_the_tests() -> None:
    bar = RichProgress(console=Console(file=io.StringIO(), force_terminal=True))
    show = ProgressView(bar, bar.add_task("healing", total=None, job=""), phase_row=True)
    show(Update(Kind.PHASE, "B1", TESTS, len(PHASES), "tests"))
    show(Update(Kind.COUNT, "B1", 2, 4, "tests"))
    run_row, job_row = bar.tasks
    assert run_row.description == "healing"
    assert (job_row.description, job_row.completed, job_row.total) == ("B1 · tests 2/4", TESTS + 0.5, len(PHASES))


def plain(*updates: Update) -> list[str]:
    out = io.StringIO()
    show = PlainView(Console(file=out, width=200))
    for update in updates:
        show(update)
    return out.getvalue().splitlines()


def test_without_a_terminal_each_phase_and_stage_is_one_line_and_running_counts_are_not() -> None:
    assert plain(
        Update(Kind.PHASE, "B1", 1, 5, "dependencies"),
        Update(Kind.OUTPUT, "B1", detail="Resolved 12 packages"),
        Update(Kind.COUNT, "B1", 1, 2, "tests"),
        Update(Kind.COUNT, "B1", 2, 2, "tests"),
        stage("tests: generate", 51.0, "2/5 modules"),
        stage("tests: generate", 51.0, "2/5 modules"),
    ) == ["B1: dependencies (2/5)", "B1: tests 2/2 done", "tests: generate 2/5 modules (51%)"]


# -- the pipeline's Progress, on a real Prefect server -----------------------------------------------------


def artifact_value(artifact_id: UUID) -> object:
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(id=ArtifactFilterId(any_=[artifact_id])))
    return found[0].data


@flow
def two_of_five_modules() -> UUID:
    run_progress = Progress("B1 → plan → generate → B2 → merge")
    run_progress.span(35, 75)(2, 5)
    return run_progress.id


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server")
def test_a_span_moves_the_artifact_and_reports_the_module_counts() -> None:
    heard: list[Update] = []
    with progress.listening(heard.append):
        artifact_id = two_of_five_modules()
    assert heard == [stage("tests: generate", 51.0, "2/5 modules")]
    assert artifact_value(artifact_id) == 51.0


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server", "mendflow_env")
def test_an_offline_run_reports_progress_between_planning_and_b2(tmp_path: Path) -> None:
    from flows.pipeline import self_healing_pipeline
    from tasks.outcome import pipeline_result

    repo = tmp_path / "calc"
    shutil.copytree(EXAMPLE, repo)
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, {}, "calc: initial import")
    heard: list[Update] = []
    with progress.listening(heard.append):
        state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)

    assert pipeline_result(state).outcome is PipelineOutcome.MERGED
    during = [u for u in heard if u.kind is Kind.STAGE and 35 < u.done < 75]
    assert during and all(u.stage == "tests: generate" and u.detail.endswith(" modules") for u in during)
    assert any(u.kind is Kind.OUTPUT and u.stage == "testbuilder" for u in heard)  # the job's lines, live
    flow_run = ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])
    only_progress = ArtifactFilter(flow_run_id=flow_run, type=ArtifactFilterType(any_=["progress"]))
    with get_client(sync_client=True) as client:  # the artifact keeps its latest value only: the end
        assert [a.data for a in client.read_artifacts(artifact_filter=only_progress)] == [100.0]


# -- the CLI on a terminal ---------------------------------------------------------------------------------


def read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed with the process
            return
        if not chunk:
            return
        into.append(chunk)


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_server")
def test_build_json_keeps_stdout_pure_while_progress_is_drawn_on_a_terminal(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    master, terminal = pty.openpty()
    drawn: list[bytes] = []
    reader = threading.Thread(target=read_all, args=(master, drawn), daemon=True)
    reader.start()
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "s"), "TERM": "xterm-256color", "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "build", str(make_repo(PASSING)), "--json"],
        stdout=subprocess.PIPE,
        stderr=terminal,
        env=env,
        timeout=600,
        check=False,
    )
    os.close(terminal)
    reader.join(10)
    os.close(master)
    assert proc.returncode == 0, b"".join(drawn)[-2000:]
    assert BuildReport.model_validate(json.loads(proc.stdout)).status is BuildStatus.PASSED
    assert b"building" in b"".join(drawn)  # the progress display went to the terminal on stderr
