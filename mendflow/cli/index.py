"""``mendflow index``: keep the code index fresh (``cli/search.py`` queries it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mendflow.cli.app import app
from mendflow.errors import InputError
from mendflow.settings import get_settings


def _existing(path: str) -> str:
    if not path.strip():
        raise InputError("the path is empty", hint="give the path of a git work tree")
    if not Path(path).expanduser().exists():
        raise InputError(f"{path}: no such path", hint="give the path of a git work tree")
    return str(Path(path).expanduser().resolve())


@app.command("index")
def index(
    path: Annotated[str, typer.Argument(help="A git work tree (or bare repository).")] = ".",
    ref: Annotated[str, typer.Option(help="Branch, tag or commit to index.")] = "HEAD",
    as_json: Annotated[bool, typer.Option("--json", help="Print the IndexReport as JSON.")] = False,
) -> None:
    """Index a commit's tree at file and symbol granularity; only blobs not seen before are parsed."""
    from rag_indexer.api import open_index  # late: tree-sitter and numpy load in ~0.2 s

    location = _existing(path)
    with open_index(get_settings()) as code_index:
        report = code_index.index(location, ref)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    console = Console()
    table = Table(title=f"{report.repo} @ {report.ref}")
    for column in ("", "added", "changed", "removed"):
        table.add_column(column, justify="left" if not column else "right")
    for label, counts in (("files", report.files), ("symbols", report.symbols)):
        table.add_row(label, str(counts.added), str(counts.changed), str(counts.removed))
    console.print(table)
    was = f" (was {report.previous_commit})" if report.previous_commit not in (None, report.commit) else ""
    console.print(f"indexed commit {report.commit}{was}", highlight=False)
    state = "no change" if report.noop else f"parsed {report.blobs_parsed} blobs, reused {report.blobs_reused}"
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items()))
    console.print(f"{state}; {report.seconds:.2f} s" + (f"; skipped: {skipped}" if skipped else ""))
