"""``mendflow heal``: heal one commit whose tests fail, and say what became of it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from mendflow.cli.app import app
from mendflow.cli.build import print_report, short_name, showing_progress
from mendflow.cli.common import LauncherName, prepare
from mendflow.contracts import BuildReport, BuildStatus, HealOutcome, HealResult

EXIT_CODES = {
    HealOutcome.HEALED: 0,
    HealOutcome.AWAITING_APPROVAL: 6,
    HealOutcome.REJECTED: 1,
    HealOutcome.NOT_HEALED: 1,
}


def print_heal(console: Console, result: HealResult) -> None:
    console.print(result.summary_md, markup=False, highlight=False)


@app.command("heal")
def heal(
    repo: Annotated[str, typer.Argument(help="Path of a git repository or a clone URL.")] = ".",
    commit: Annotated[str | None, typer.Option(help="The failing commit (sha, tag or branch).")] = None,
    branch: Annotated[str | None, typer.Option(help="The branch a healed commit merges into.")] = None,
    launcher: Annotated[LauncherName | None, typer.Option(help="Default from MENDFLOW_LAUNCHER.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the HealResult (or BuildReport) as JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also show Prefect's log on stderr.")] = False,
) -> None:
    """Heal a commit whose tests fail: exit 0 healed (or nothing to heal), 6 awaiting approval, 1 not healed."""
    location = prepare(repo, commit, branch, launcher, verbose)
    from flows.heal import heal_commit  # imported late: importing prefect costs a second

    console = Console(stderr=as_json)
    with showing_progress(f"healing {short_name(location)}"):
        result = heal_commit(repo=location, commit=commit, branch=branch)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    if isinstance(result, BuildReport):
        if not as_json:
            print_report(console, result)
        healthy = result.status is BuildStatus.PASSED
        console.print("nothing to heal: the build passed" if healthy else "not healable: no test failed in the build")
        raise typer.Exit(0 if healthy else 1)
    if not as_json:
        print_heal(console, result)
    raise typer.Exit(EXIT_CODES[result.outcome])
