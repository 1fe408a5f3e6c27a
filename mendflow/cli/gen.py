"""``mendflow gen``: a TestSpec → generated, gated tests committed on ``agt/testbuilder/<spec_id>``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mendflow.cli.app import app
from mendflow.cli.common import repo_location
from mendflow.cli.plan import read_model, write_atomic
from mendflow.contracts import BuildStatus, GeneratedTests, TestSpec
from mendflow.settings import get_settings

EXIT_CODES = {BuildStatus.PASSED: 0, BuildStatus.FAILED: 1, BuildStatus.ERRORED: 3}


def result_table(result: GeneratedTests) -> Table:
    table = Table(title=f"{result.spec_id}: {result.precheck.value} ({result.generator})")
    table.add_column("test")
    table.add_column("outcome")
    for k in result.kept:
        table.add_row(k.node_id, f"kept: +{k.lines_gained} line(s), +{k.branches_gained} branch(es) of {k.target}")
    for d in result.dropped:
        table.add_row(d.node_id, f"dropped: {d.reason.value} {d.detail[:80]}")
    return table


@app.command("gen")
def gen(
    spec: Annotated[Path, typer.Option(help="TestSpec JSON written by `mendflow plan`.")],
    repo: Annotated[str, typer.Option(help="The repository the spec was planned from (path or URL).")] = ".",
    out: Annotated[Path | None, typer.Option(help="Also write the GeneratedTests JSON here.")] = None,
    offline: Annotated[bool, typer.Option(help="Use Pynguin even when an LLM is configured.")] = False,
) -> None:
    """Generate tests for a TestSpec, gate them in the sandbox, commit the keepers; exit 0 PASSED, 1 FAILED."""
    from mendflow.testgen import build_tests  # late: keeps `mendflow --help` fast

    settings = get_settings()  # a bad setting is reported before any work
    location = repo_location(repo)
    test_spec = read_model(spec, TestSpec, "TestSpec")
    console = Console(stderr=True)
    with console.status(f"building tests for {test_spec.id} …"):
        result = build_tests(test_spec, location, settings, use_llm=False if offline else None)
    if out is not None:
        write_atomic(out, result.model_dump_json(indent=2) + "\n")
    console.print(result_table(result))
    for note in result.notes:
        console.print(f"note: {note}", highlight=False)
    if result.commit_sha:
        console.print(f"committed {result.commit_sha[:12]} on {result.branch_name}", highlight=False)
    raise typer.Exit(EXIT_CODES[result.precheck])
