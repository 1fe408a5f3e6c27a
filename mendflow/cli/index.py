"""``mendflow index`` and ``mendflow search``: keep the code index fresh and query it from a shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mendflow.cli import app
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


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Free text, identifiers welcome.")],
    k: Annotated[int, typer.Option("-k", "--k", help="Number of results.")] = 10,
    alpha: Annotated[float | None, typer.Option(help="0 = BM25 only, 1 = vectors only.")] = None,
    repo: Annotated[str | None, typer.Option(help="Limit to this repository (path or indexed name).")] = None,
    ref: Annotated[str | None, typer.Option(help="Limit to this indexed ref.")] = None,
    path: Annotated[str | None, typer.Option(help="Path prefix or glob.")] = None,
    language: Annotated[str | None, typer.Option(help="e.g. python, go, typescript.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
) -> None:
    """Search the code index (hybrid when embeddings are configured, else BM25 + symbol names)."""
    from rag_indexer.api import open_index

    if not query.strip():
        raise InputError("the query is empty", hint="give words or identifiers to search for")
    filters = {"repo": repo, "ref": ref, "path": path, "language": language}
    with open_index(get_settings()) as code_index:
        hits = code_index.search(query, k=k, alpha=alpha, filters=filters)
    if as_json:
        typer.echo(json.dumps([h.model_dump() for h in hits], indent=2))
        return
    console = Console()
    if not hits:
        console.print("no results (is the repository indexed? run `mendflow index PATH`)")
        return
    table = Table()
    for column in ("score", "location", "symbol", "kind", "ref"):
        table.add_column(column, justify="right" if column == "score" else "left")
    for h in hits:
        table.add_row(f"{h.score:.3f}", h.location, h.symbol or "—", h.kind, h.ref)
    console.print(table)
