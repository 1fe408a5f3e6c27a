"""``mendflow build``: run the Build/CI stage on the embedded defaults and print a summary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from mendflow import progress
from mendflow.cli.app import app
from mendflow.cli.common import LauncherName, prepare
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.render import baseline_label, coverage_rows

EXIT_CODES = {BuildStatus.PASSED: 0, BuildStatus.FAILED: 1, BuildStatus.ERRORED: 3}
JOB_LINE_CHARS = 70


class ProgressView:
    """A ``mendflow.progress`` listener drawing on a rich Progress.

    The run's stages move the first row; a build job's phases (unpack … coverage, with the tests' count while
    they run) move the first row too, or, with ``phase_row`` (``mendflow run``, whose first row is the
    pipeline's), a second row of their own. Called from whichever thread reports (rich's Progress locks); text
    is never read as markup, since a job's line is the job's to choose.
    """

    def __init__(self, bar: Progress, task: TaskID, phase_row: bool = False) -> None:
        self.bar, self.task = bar, task
        self.phase_row = phase_row
        self._phase_task: TaskID | None = None
        self._phase = (0.0, 0.0)  # the running phase of the job: phases over, phases in all

    def __call__(self, update: progress.Update) -> None:
        if update.kind is progress.Kind.STAGE:
            description = f"{update.stage} {update.detail}".strip()
            self.bar.update(self.task, description=description, completed=update.done, total=update.total or None)
        elif update.kind is progress.Kind.PHASE:
            self._phase = (update.done, update.total)
            self._draw_phase(f"{update.stage} · {update.detail}", update.done)
        elif update.kind is progress.Kind.COUNT:
            share = update.done / update.total if update.total else 0.0
            label = f"{update.stage} · {update.detail} {update.done:.0f}/{update.total:.0f}"
            self._draw_phase(label, self._phase[0] + share)
        elif update.detail and not update.detail.startswith(progress.LINE_PREFIX.strip()):
            self.bar.update(self.task, job=f"{update.stage} · {update.detail[:JOB_LINE_CHARS]}")

    def _draw_phase(self, description: str, completed: float) -> None:
        task = self.task
        if self.phase_row:
            if self._phase_task is None:
                self._phase_task = self.bar.add_task(description, total=None, job="")
            task = self._phase_task
        self.bar.update(task, description=description, completed=completed, total=self._phase[1] or None)


class PlainView:
    """The listener when stderr is no terminal (a CI log, a pipe): one line each time a stage or phase moves.

    A job's own lines and the tests' running count are left out: a log wants the milestones, not a bar.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._last = ""

    def __call__(self, update: progress.Update) -> None:
        line = self.line(update)
        if line and line != self._last:
            self._last = line
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    @staticmethod
    def line(update: progress.Update) -> str:
        share = f"({100 * update.done / update.total:.0f}%)" if update.total else ""
        if update.kind is progress.Kind.STAGE:
            return " ".join(part for part in (update.stage, update.detail, share) if part)
        if update.kind is progress.Kind.PHASE:  # "B1: tests (4/5)": a percentage here would read as the run's
            return f"{update.stage}: {update.detail} ({update.done + 1:.0f}/{update.total:.0f})"
        if update.kind is progress.Kind.COUNT and update.done == update.total:
            return f"{update.stage}: {update.detail} {update.done:.0f}/{update.total:.0f} done"
        return ""


def short_name(location: str) -> str:
    """The last part of a path or URL: the progress line keeps room for the bar and the job's output."""
    return location.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or location


@contextmanager
def showing_progress(title: str, phase_row: bool = False) -> Iterator[None]:
    """Progress on stderr while a flow runs in this process: a rich bar on a terminal, else plain lines."""
    console = Console(stderr=True)
    if not console.is_terminal:  # no title line: an error before the first phase stays the only line
        with progress.listening(PlainView(console)):
            yield
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[job]}", markup=False, style="dim"),
    )
    bar = Progress(*columns, console=console, transient=True)
    with bar, progress.listening(ProgressView(bar, bar.add_task(title, total=None, job=""), phase_row)):
        yield


def summary_table(report: BuildReport) -> Table:
    table = Table(title=f"{report.repo} @ {report.commit_sha[:12]} — {report.status.value}", show_lines=False)
    for column in ("file", "statements", "missing", "line", "branch"):
        table.add_column(column, justify="left" if column == "file" else "right")
    for row in coverage_rows(report):
        table.add_row(*(str(v) for v in row.values()))
    return table


def print_report(console: Console, report: BuildReport) -> None:
    console.print(summary_table(report))
    t = report.tests
    console.print(f"tests: {t.passed} passed, {t.failed} failed, {t.errors} errors, {t.skipped} skipped")
    if report.coverage:
        branch = f", branch {report.coverage.branch_pct:.1f}%" if report.coverage.branch_pct is not None else ""
        console.print(f"coverage: line {report.coverage.line_pct:.1f}%{branch}")
    for test in report.failed_tests:
        console.print(f"[red]failed[/] {test}", highlight=False)
    for lint in report.lint_errors[:20]:
        console.print(f"[yellow]lint[/] {lint}", highlight=False)
    if report.lint_preexisting:
        were = f"{len(report.lint_preexisting)} lint finding(s) already in {baseline_label(report)}"
        console.print(f"{were}: not fatal (listed in the report)", highlight=False)
    if report.lint_advisory:
        said = f"{len(report.lint_advisory)} note(s) of advice: not fatal (listed in the report)"
        console.print(said, highlight=False)
    if report.error_reason:
        console.print(f"[bold]why:[/] {report.error_reason}", highlight=False)
    console.print(f"artefacts: {report.artefact_url}", highlight=False)


@app.command("build")
def build(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="Commit sha, tag or branch to build.")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch name to record (and build if no --commit).")] = None,
    launcher: Annotated[LauncherName | None, typer.Option(help="Default from MENDFLOW_LAUNCHER.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the BuildReport as JSON on stdout.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also show Prefect's log on stderr.")] = False,
) -> None:
    """Build a commit in a sandbox: install, lint, test with coverage; exit 0 PASSED, 1 FAILED, 3 ERRORED."""
    location = prepare(repo, commit, branch, launcher, verbose)
    from flows.ci import ci_build  # imported late: importing prefect costs a second

    console = Console(stderr=as_json)
    with showing_progress(f"building {short_name(location)}"):
        report = ci_build(repo=location, commit=commit, branch=branch)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        print_report(console, report)
    raise typer.Exit(EXIT_CODES[report.status])
