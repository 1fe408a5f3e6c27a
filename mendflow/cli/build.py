"""``mendflow build``: run the Build/CI stage on the embedded defaults and print a summary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mendflow import snapshot
from mendflow.cli import app
from mendflow.contracts import BuildReport, BuildStatus
from mendflow.errors import InputError
from mendflow.render import coverage_rows
from mendflow.settings import get_settings
from mendflow.store import open_store

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


def _repo_location(repo: str) -> str:
    if "://" in repo or repo.startswith("git@"):
        return repo
    path = Path(repo).expanduser()
    if not path.exists():
        raise InputError(f"{repo}: no such path", hint="give the path of a git repository or a clone URL")
    return str(path.resolve())


@app.command("build")
def build(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="Commit sha, tag or branch to build.")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch name to record (and build if no --commit).")] = None,
    launcher: Annotated[str | None, typer.Option(help="local | kubernetes (default from settings).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the BuildReport as JSON on stdout.")] = False,
) -> None:
    """Build a commit in a sandbox: install, lint, test with coverage; exit 0 PASSED, 1 FAILED, 3 ERRORED."""
    location = _repo_location(repo)
    if launcher:
        os.environ["MENDFLOW_LAUNCHER"] = launcher
        get_settings.cache_clear()
    settings = get_settings()
    # Refuse bad input before anything starts: a missing repo, commit or store fails in a second, not after
    # Prefect has come up.
    snapshot.resolve_commit(snapshot.resolve_repo(location, settings), commit or branch)
    open_store(settings.resolved_store_url(), settings).check()
    # Without PREFECT_API_URL, Prefect starts a temporary local server; on a busy 2-core machine it needs more
    # than its default 20 s to come up.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no internet: telemetry only logs errors
    from flows.ci import ci_build  # imported late: importing prefect costs a second

    console = Console(stderr=as_json)
    with console.status(f"building {location} …"):
        report = ci_build(repo=location, commit=commit, branch=branch)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        print_report(console, report)
    raise typer.Exit(EXIT_CODES[report.status])
