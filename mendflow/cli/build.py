"""``mendflow build``: run the Build/CI stage on the embedded defaults and print a summary."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mendflow.cli import app
from mendflow.cli.common import prepare
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.render import coverage_rows

EXIT_CODES = {BuildStatus.PASSED: 0, BuildStatus.FAILED: 1, BuildStatus.ERRORED: 3}


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
    if report.error_reason:
        console.print(f"[bold]why:[/] {report.error_reason}", highlight=False)
    console.print(f"artefacts: {report.artefact_url}", highlight=False)


@app.command("build")
def build(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="Commit sha, tag or branch to build.")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch name to record (and build if no --commit).")] = None,
    launcher: Annotated[str | None, typer.Option(help="local | kubernetes (default from settings).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the BuildReport as JSON on stdout.")] = False,
) -> None:
    """Build a commit in a sandbox: install, lint, test with coverage; exit 0 PASSED, 1 FAILED, 3 ERRORED."""
    location = prepare(repo, commit, branch, launcher)
    from flows.ci import ci_build  # imported late: importing prefect costs a second

    console = Console(stderr=as_json)
    with console.status(f"building {location} …"):
        report = ci_build(repo=location, commit=commit, branch=branch)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        print_report(console, report)
    raise typer.Exit(EXIT_CODES[report.status])
