"""``mendflow run``: the whole self-healing loop on the embedded defaults."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from mendflow.cli import app
from mendflow.cli.build import print_report
from mendflow.cli.common import prepare
from mendflow.contracts import PipelineOutcome, PipelineResult

EXIT_CODES = {
    PipelineOutcome.MERGED: 0,
    PipelineOutcome.READY: 0,
    PipelineOutcome.NOTHING_TO_ADD: 0,
    PipelineOutcome.NO_TESTS_KEPT: 4,
    PipelineOutcome.REGRESSION: 1,
}


def print_result(console: Console, result: PipelineResult) -> None:
    print_report(console, result.b2 or result.b1)
    if result.generated:
        gen = result.generated
        console.print(f"generated tests: {len(gen.kept)} kept, {len(gen.dropped)} dropped on {gen.branch_name}")
        for kept in gen.kept:
            console.print(f"  [green]kept[/] {kept.node_id} (+{kept.lines_gained} lines of {kept.target})")
        for dropped in gen.dropped:
            console.print(f"  [yellow]dropped[/] {dropped.node_id}: {dropped.reason.value}", highlight=False)
    if result.coverage_delta_pct is not None:
        console.print(f"coverage B1 → B2: {result.coverage_delta_pct:+.1f} points")
    if result.regression:
        console.print(f"[red]regression[/] {result.regression.id}: {result.regression.error_reason or ''}")
    console.print(f"[bold]{result.outcome.value}[/]" + (f" as {result.merged_sha[:12]}" if result.merged_sha else ""))


@app.command("run")
def run(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="Commit sha, tag or branch.")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch the commit belongs to (merge target).")] = None,
    launcher: Annotated[str | None, typer.Option(help="local | kubernetes (default from settings).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the PipelineResult as JSON on stdout.")] = False,
) -> None:
    """Build, write the missing tests, build again, merge; exit 0 merged/ready, 1 regression, 4 no test kept."""
    location = prepare(repo, commit, branch, launcher)
    from flows.pipeline import self_healing_pipeline  # imported late: importing prefect costs a second

    console = Console(stderr=as_json)
    with console.status(f"healing {location} …"):
        result = self_healing_pipeline(repo=location, commit=commit, branch=branch)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        print_result(console, result)
    raise typer.Exit(EXIT_CODES[result.outcome])
