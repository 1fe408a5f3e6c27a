"""``mendflow run``: the whole self-healing loop, here on the embedded defaults or on a deployment's worker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown

from mendflow.cli.app import app
from mendflow.cli.build import print_report, short_name, showing_progress
from mendflow.cli.common import LauncherName, prepare
from mendflow.contracts import PipelineOutcome, PipelineResult
from mendflow.errors import InputError, RunNotFinishedError

DEPLOYMENT_NAME = re.compile(r"[^/\s]+/[^/\s]+")
EXIT_CODES = {
    PipelineOutcome.MERGED: 0,
    PipelineOutcome.READY: 0,
    PipelineOutcome.NOTHING_TO_ADD: 0,
    PipelineOutcome.NO_TESTS_KEPT: 4,
    PipelineOutcome.NO_COVERAGE: 4,
    PipelineOutcome.REGRESSION: 1,
    PipelineOutcome.HEALED: 0,
    PipelineOutcome.AWAITING_APPROVAL: 6,
}


def print_result(console: Console, result: PipelineResult) -> None:
    print_report(console, result.b3 or result.b2 or result.b1)
    if result.generated:
        gen = result.generated
        console.print(f"generated tests: {len(gen.kept)} kept, {len(gen.dropped)} dropped on {gen.branch_name}")
        for kept in gen.kept:
            gain = f"+{kept.lines_gained} lines, +{kept.branches_gained} branches of {kept.target}"
            console.print(f"  [green]kept[/] {kept.node_id} ({gain})", soft_wrap=True)
        for dropped in gen.dropped:
            console.print(
                f"  [yellow]dropped[/] {dropped.node_id}: {dropped.reason.value}", highlight=False, soft_wrap=True
            )
        for note in gen.notes:  # why nothing was generated ("no offline generator for go: …"), as `mendflow gen` says
            console.print(f"  note: {note}", highlight=False, soft_wrap=True, markup=False)
    if result.coverage_delta_pct is not None:
        console.print(f"coverage B1 → {'B3' if result.b3 else 'B2'}: {result.coverage_delta_pct:+.1f} points")
    if result.heal:
        heal = result.heal
        console.print(
            f"heal {heal.stage}: {heal.outcome.value}" + (f" on {heal.branch_name}" if heal.branch_name else "")
        )
        if heal.proposal:
            p = heal.proposal
            console.print(f"a fix to the code is proposed for review on {p.branch_name} ({len(p.passes)} test(s) pass)")
    if result.regression:
        console.print(f"[red]regression[/] {result.regression.id}: {result.regression.error_reason or ''}")
    console.print(f"[bold]{result.outcome.value}[/]" + (f" as {result.merged_sha[:12]}" if result.merged_sha else ""))


def run_here(
    repo: str, commit: str | None, branch: str | None, launcher: LauncherName | None, as_json: bool, verbose: bool
) -> int:
    location = prepare(repo, commit, branch, launcher, verbose)
    from flows.pipeline import self_healing_pipeline  # late: importing prefect costs a second
    from tasks.outcome import pipeline_result

    console = Console(stderr=as_json)
    with showing_progress(f"healing {short_name(location)}", phase_row=True):
        result = pipeline_result(self_healing_pipeline(repo=location, commit=commit, branch=branch, return_state=True))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        print_result(console, result)
    return EXIT_CODES[result.outcome]


def run_deployed(
    deployment: str, repo: str, commit: str | None, branch: str | None, wait: bool, timeout: float | None
) -> int:
    from mendflow import remote
    from tasks.outcome import STATE_NAMES

    # A path that exists here is made absolute (a worker on this machine); anything else is the worker's business.
    location = str(Path(repo).resolve()) if Path(repo).exists() else repo
    flow_run = remote.start(deployment, {"repo": location, "commit": commit, "branch": branch})
    console = Console(stderr=True)
    console.print(f"flow run {flow_run.name} ({flow_run.id}): {remote.run_page(flow_run.id)}", soft_wrap=True)
    if not wait:
        return 0
    with console.status(f"waiting for {flow_run.name} …"):
        state = remote.wait(flow_run, timeout)
    if summary := remote.artifact_markdown(flow_run.id, "pipeline-result"):
        Console().print(Markdown(summary))
    outcome = next((o for o, name in STATE_NAMES.items() if name == state.name), None)
    if outcome is not None:
        console.print(f"{state.name}: {state.message or ''}", soft_wrap=True)
        return EXIT_CODES[outcome]
    if state.is_completed():
        return 0
    raise RunNotFinishedError(
        f"flow run {flow_run.name} ended {state.name}: {state.message or 'no message'}",
        hint=f"see {remote.run_page(flow_run.id)}",
    )


@app.command("run")
def run(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="Commit sha, tag or branch.")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch the commit belongs to (merge target).")] = None,
    launcher: Annotated[LauncherName | None, typer.Option(help="Default from MENDFLOW_LAUNCHER.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the PipelineResult as JSON on stdout.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also show Prefect's log on stderr.")] = False,
    deployment: Annotated[
        str | None,
        typer.Option(help="Run on this Prefect deployment's worker instead, e.g. self-healing-pipeline/default."),
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="With --deployment: wait and exit with the outcome.")] = False,
    timeout: Annotated[
        float | None, typer.Option(min=0.0, help="With --wait: give up after this many seconds.")
    ] = None,
) -> None:
    """Build, write the missing tests, build again, merge; exit 0 merged/ready, 1 regression, 4 no test kept.

    With --deployment --wait, 5 when the run crashed, was cancelled or outlived --timeout.
    """
    if deployment is None:
        if wait or timeout is not None:
            raise InputError("--wait and --timeout go with --deployment", hint="a local run always waits")
        raise typer.Exit(run_here(repo, commit, branch, launcher, as_json, verbose))
    if not DEPLOYMENT_NAME.fullmatch(deployment):
        raise InputError(
            f"--deployment {deployment!r} is not FLOW/DEPLOYMENT", hint="e.g. self-healing-pipeline/default"
        )
    if launcher or as_json:
        raise InputError("--launcher and --json do not go with --deployment", hint="the deployment's worker decides")
    raise typer.Exit(run_deployed(deployment, repo, commit, branch, wait, timeout))
