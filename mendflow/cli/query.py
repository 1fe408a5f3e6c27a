"""``mendflow search`` and ``mendflow grep``: query the code index from a shell, in a fraction of a second.

These two parse their arguments with argparse, not typer: ``main()`` sends them here before typer is imported,
because typer and its bundled click take ~0.15 s to import, half the time a grep may take end to end.
``cli/search.py`` lists them in ``mendflow --help`` and passes its arguments through to ``run``. Only what a
query needs is imported: no Prefect, no flow machinery, and rich only to draw the search table.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from mendflow.cli.fast_grep import locator_key
from mendflow.cli.fast_grep import write_lines as _write_lines
from mendflow.errors import InputError
from rag_indexer.store.embedded_read import IndexedRef

if TYPE_CHECKING:
    from collections.abc import Callable

    from rag_indexer.api import CodeIndex
    from rag_indexer.grep import GrepQuery
    from rag_indexer.models import Hit
    from rag_indexer.store.embedded_read import GrepScope, ReadOnlyIndex

SEARCH_HELP = "Search the code index (hybrid when embeddings are configured, else BM25 + symbol names)."
GREP_HELP = "Print every matching line of an indexed repository as path:line:text, as `rg -n` does; exit 1 if none."
NO_MATCH = 1  # grep's and rg's convention: 1 = no line matched


class _Parser(argparse.ArgumentParser):
    """argparse that raises the CLI's one-line usage error instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise InputError(message, hint="see --help")


def _parser(command: str, help_text: str) -> _Parser:
    return _Parser(prog=f"mendflow {command}", description=help_text, allow_abbrev=False)


def _search_parser() -> _Parser:
    p = _parser("search", SEARCH_HELP)
    p.add_argument("query", nargs="?", help="Free text, identifiers welcome.")
    p.add_argument("-k", "--k", type=int, default=10, help="Number of results.")
    p.add_argument("--alpha", type=float, help="0 = BM25 only, 1 = vectors only.")
    p.add_argument("--repo", help="Limit to this repository (owner/name, or a path).")
    p.add_argument("--ref", help="Limit to this indexed ref.")
    p.add_argument("--path", help="Path prefix or glob.")
    p.add_argument("--language", help="e.g. python, go, typescript.")
    p.add_argument("--files", action="store_true", help="Rank files (each with its best chunk), not chunks.")
    p.add_argument("--json", dest="as_json", action="store_true", help="Print hits as JSON.")
    return p


def _grep_parser() -> _Parser:
    p = _parser("grep", GREP_HELP)
    p.add_argument("pattern", nargs="?", help="A literal string (a regular expression with --regex).")
    p.add_argument("-i", "--ignore-case", action="store_true", help="Match regardless of case.")
    p.add_argument("--regex", action="store_true", help="PATTERN is a Python regular expression.")
    p.add_argument("--repo", help="The repository, by identity (owner/name) or path. Default: the current one.")
    p.add_argument("--ref", help="The indexed ref. Default: HEAD, else the latest indexed.")
    p.add_argument("--path", help="Path prefix or glob.")
    return p


def _parse(parser: _Parser, args: list[str], required: str, what: str) -> argparse.Namespace:
    """Options are checked before the positional argument, so an unknown option is named as such."""
    given, extra = parser.parse_known_args(args)
    if extra:
        what = "No such option" if extra[0].startswith("-") else "Got unexpected extra argument"
        parser.error(f"{what}: {extra[0]}")
    if getattr(given, required) is None:
        parser.error(f"Missing argument '{required.upper()}': give the {required} {what}")
    return given


def run(command: str, args: list[str]) -> int:
    """Run ``search`` or ``grep`` with its arguments; the exit code."""
    commands: dict[str, Callable[[list[str]], int]] = {"search": search, "grep": grep}
    return commands[command](args)


def search(args: list[str]) -> int:
    given = _parse(_search_parser(), args, "query", "to search for")
    if not given.query.strip():
        raise InputError("the query is empty", hint="give words or identifiers to search for")
    filters = {"repo": given.repo, "ref": given.ref, "path": given.path, "language": given.language}
    with _open() as code_index:
        ranked = code_index.search_files if given.files else code_index.search
        hits = ranked(given.query, k=given.k, alpha=given.alpha, filters=filters)
    if given.as_json:
        print(json.dumps([h.model_dump(mode="json") for h in hits], indent=2))
    else:
        _print_table(hits)
    return 0


def grep(args: list[str]) -> int:
    given = _parse(_grep_parser(), args, "pattern", "to look for")
    if not given.pattern:
        raise InputError("the pattern is empty", hint="give a string (or with --regex a regular expression)")
    from rag_indexer.grep import compile_query

    query = compile_query(given.pattern, given.regex, given.ignore_case)  # a bad regex is named before any index
    found = _grep_read_only(query, given.repo, given.ref, given.path)
    if found is None:
        with _open() as code_index:
            listed = code_index.refs(_given_repo(given.repo))
            refs = [IndexedRef(r.repo, r.ref, r.indexed_at.isoformat()) for r in listed]
            repo, ref = _grep_scope(refs, given.repo, given.ref)
            scope = {"repo": repo, "ref": ref, "path": given.path}
            found = _write_lines(code_index.grep_lines(given.pattern, given.regex, given.ignore_case, scope))
    return 0 if found else NO_MATCH


def _grep_read_only(query: GrepQuery, repo: str | None, ref: str | None, path: str | None) -> int | None:
    """Grep the embedded index through a read-only handle, without pydantic: the lines written.

    None when this path cannot tell (another backend or embeddings configured, no index or one to migrate,
    a work tree whose identity needs pygit2): the caller then asks the full ``CodeIndex``. When it can, it
    also locates the ref's grep pack for the next grep (``cli/fast_grep.py``), building it if need be.
    """
    from mendflow.quick_settings import query_state_dir
    from rag_indexer.store import grep_cache
    from rag_indexer.store.embedded_read import GrepScope, ReadOnlyIndex

    state_dir = query_state_dir()
    index = ReadOnlyIndex.open(state_dir / "index") if state_dir is not None else None
    if index is None:
        return None
    grep_cache.first_token(str(index.directory))
    token = grep_cache.refs_token(str(index.directory))  # before the index is read: a ref moving later voids it
    try:
        identity = _quick_identity(_given_repo(repo))
        refs = index.refs(identity) if identity else []
        if not refs:
            return None
        scope = GrepScope(*_grep_scope(refs, repo, ref), path=path)
        written = _write_lines(
            (p, n, line) for p, text in index.file_texts(scope, query) for n, line in query.lines(text)
        )
        _locate_pack(index, token, locator_key(repo, ref), scope)
        return written
    finally:
        index.close()


def _locate_pack(index: ReadOnlyIndex, token: str | None, key: str | None, scope: GrepScope) -> None:
    """Tell the next grep of ``key`` which pack answers it, and have the pack built if there is none yet."""
    from rag_indexer.store import grep_cache

    index_dir = str(index.directory)
    tree = index.tree(scope.repo, scope.ref)
    if not (token and key and tree) or not grep_cache.remember(index_dir, key, token, tree):
        return
    if not os.path.exists(grep_cache.pack_path(index_dir, tree)):
        grep_cache.build_detached(index_dir, scope.repo, scope.ref, tree)


def _given_repo(repo: str | None) -> str:
    return repo if repo is not None else str(Path.cwd())


def _quick_identity(repo: str) -> str | None:
    """A repository's identity as stored: a work tree's from the git command, else the name as given."""
    from mendflow.identity import work_tree_id

    return work_tree_id(Path(repo)) if Path(repo).exists() else repo


def _open() -> CodeIndex:
    from mendflow.quick_settings import query_state_dir
    from rag_indexer.api import open_index
    from rag_indexer.config import IndexerConfig

    state_dir = query_state_dir()
    if state_dir is None:  # Weaviate or embeddings: the full settings, and the network is the cost anyway
        from mendflow.settings import get_settings

        return open_index(get_settings())
    return open_index(config=IndexerConfig(index_dir=state_dir / "index"))


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


def _grep_scope(refs: list[IndexedRef], repo: str | None, ref: str | None) -> tuple[str, str]:
    """(repo, ref) to grep: lines of two refs or two repositories mixed would be ambiguous."""
    if not refs:
        hint = "run `mendflow index PATH` first, or pass --repo owner/name of an indexed repository"
        raise InputError(f"{repo or 'the current directory'}: no indexed repository by that name", hint=hint)
    if ref is None:
        ref = next((r.ref for r in refs if r.ref == "HEAD"), max(refs, key=lambda r: r.indexed_at).ref)
    elif not any(r.ref == ref for r in refs):
        raise InputError(f"ref {ref!r} of {refs[0].repo} is not indexed", hint="run `mendflow index PATH --ref REF`")
    return refs[0].repo, ref
