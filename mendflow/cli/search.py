"""``mendflow search`` and ``mendflow grep``: query the code index from a shell, in a fraction of a second.

Only what a query needs is imported: no Prefect, no flow machinery, and rich only to draw the search table.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mendflow.cli import app
from mendflow.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rag_indexer.api import CodeIndex
    from rag_indexer.models import Hit


def _open() -> CodeIndex:
    from mendflow.quick_settings import query_state_dir
    from rag_indexer.api import open_index  # late: numpy loads in ~0.05 s
    from rag_indexer.config import IndexerConfig

    state_dir = query_state_dir()
    if state_dir is None:  # Weaviate or embeddings: the full settings, and the network is the cost anyway
        from mendflow.settings import get_settings

        return open_index(get_settings())
    return open_index(config=IndexerConfig(index_dir=state_dir / "index"))


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Free text, identifiers welcome.")],
    k: Annotated[int, typer.Option("-k", "--k", help="Number of results.")] = 10,
    alpha: Annotated[float | None, typer.Option(help="0 = BM25 only, 1 = vectors only.")] = None,
    repo: Annotated[str | None, typer.Option(help="Limit to this repository (owner/name, or a path).")] = None,
    ref: Annotated[str | None, typer.Option(help="Limit to this indexed ref.")] = None,
    path: Annotated[str | None, typer.Option(help="Path prefix or glob.")] = None,
    language: Annotated[str | None, typer.Option(help="e.g. python, go, typescript.")] = None,
    files: Annotated[bool, typer.Option("--files", help="Rank files (each with its best chunk), not chunks.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
) -> None:
    """Search the code index (hybrid when embeddings are configured, else BM25 + symbol names)."""
    if not query.strip():
        raise InputError("the query is empty", hint="give words or identifiers to search for")
    filters = {"repo": repo, "ref": ref, "path": path, "language": language}
    with _open() as code_index:
        ranked = code_index.search_files if files else code_index.search
        hits = ranked(query, k=k, alpha=alpha, filters=filters)
    if as_json:
        typer.echo(json.dumps([h.model_dump(mode="json") for h in hits], indent=2))
        return
    _print_table(hits)


def _print_table(hits: list[Hit]) -> None:
    from rich.console import Console
    from rich.table import Table

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


@app.command("grep")
def grep(
    pattern: Annotated[str, typer.Argument(help="A literal string (a regular expression with --regex).")],
    ignore_case: Annotated[bool, typer.Option("-i", "--ignore-case", help="Match regardless of case.")] = False,
    regex: Annotated[bool, typer.Option("--regex", help="PATTERN is a Python regular expression.")] = False,
    repo: Annotated[
        str | None, typer.Option(help="The repository, by identity (owner/name) or path. Default: the current one.")
    ] = None,
    ref: Annotated[str | None, typer.Option(help="The indexed ref. Default: HEAD, else the latest indexed.")] = None,
    path: Annotated[str | None, typer.Option(help="Path prefix or glob.")] = None,
) -> None:
    """Print every matching line of an indexed repository as path:line:text, as `rg -n` does; exit 1 if none."""
    if not pattern:
        raise InputError("the pattern is empty", hint="give a string (or with --regex a regular expression)")
    from rag_indexer.grep import compile_query

    compile_query(pattern, regex, ignore_case)  # a bad regex is named before any index is opened
    with _open() as code_index:
        scope = _grep_scope(code_index, repo, ref)
        found = _write_lines(code_index.grep_lines(pattern, regex, ignore_case, {**scope, "path": path}))
    if not found:
        raise typer.Exit(1)  # grep's and rg's convention: 1 = no line matched


def _grep_scope(code_index: CodeIndex, repo: str | None, ref: str | None) -> dict[str, str]:
    """(repo, ref) to grep: lines of two refs or two repositories mixed would be ambiguous."""
    given = repo if repo is not None else str(Path.cwd())
    refs = code_index.refs(given)
    if not refs:
        hint = "run `mendflow index PATH` first, or pass --repo owner/name of an indexed repository"
        raise InputError(f"{repo or 'the current directory'}: no indexed repository by that name", hint=hint)
    if ref is None:
        ref = next((r.ref for r in refs if r.ref == "HEAD"), max(refs, key=lambda r: r.indexed_at).ref)
    elif not any(r.ref == ref for r in refs):
        raise InputError(f"ref {ref!r} of {refs[0].repo} is not indexed", hint="run `mendflow index PATH --ref REF`")
    return {"repo": refs[0].repo, "ref": ref}


def _write_lines(lines: Iterable[tuple[str, int, str]]) -> int:
    """Write ``path:line:text`` rows in blocks (print per line costs more than the search); count them."""
    out: list[str] = []
    count = 0
    try:
        for path, number, text in lines:
            out.append(f"{path}:{number}:{text}\n")
            count += 1
            if len(out) >= 4096:
                sys.stdout.write("".join(out))
                out.clear()
        sys.stdout.write("".join(out))
        sys.stdout.flush()
    except BrokenPipeError:  # `mendflow grep ... | head`: the reader has what it wanted
        # Python's own recipe: point stdout at /dev/null so the flush at exit raises nothing either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return count
