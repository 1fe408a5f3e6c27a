"""Where a name the commit took away from a module lives now: candidates from the code index, confirmed by blob.

The commit's AST diff (``mendflow.heal.changes``) sees only the files the commit touched. It misses a symbol that
a module offered only through a re-export (``from pkg.core import f`` in ``pkg/__init__.py``) when the commit
drops the re-export and leaves ``pkg/core.py`` alone, and a duplicate definition deleted in favour of one that
already lived elsewhere. For each name a changed module bound at the parent and binds no longer, that no rename
or move explains:

1. the definition the name stood for at the parent: the module's own ``def``/``class``, or what its
   ``from X import name`` pointed at (followed through re-exports a few hops), and its fingerprint (the AST
   without the name, as for moves);
2. the symbol lookup of the code index, indexed at the commit, gives every definition named ``name``;
3. each candidate's blob is read by its sha and kept when it holds a top-level definition with the same
   fingerprint, outside test code.

Exactly one module left is a ``Move`` (``found_by="index"``); none or several are nothing, so no healer guesses.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pygit2

from mendflow.contracts import is_test_file
from mendflow.heal.changes import (
    CommitChanges,
    Move,
    blob_text,
    commit_of,
    fingerprint_of,
    module_name,
    parse_module,
)
from rag_indexer.models import Hit

Locate = Callable[[str], Sequence[Hit]]  # name → the index's definitions of that name at the commit

_REEXPORT_HOPS = 4
_DEFINITION = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Lost:
    """A name ``module`` bound at the parent and no longer binds, with the definition it stood for."""

    module: str
    name: str
    kind: str  # 'function' or 'class'
    fingerprint: str


def lost_names(repo: pygit2.Repository, changes: CommitChanges) -> list[Lost]:
    """The names the commit's changed modules stopped binding, that its own renames and moves do not explain."""
    old, new = commit_of(repo, changes.parent), commit_of(repo, changes.commit)
    if old.id == new.id:
        return []
    parent_modules = _modules(old.tree)
    lost: list[Lost] = []
    for delta in old.tree.diff_to_tree(new.tree).deltas:
        path = delta.old_file.path
        if not path.endswith(".py") or delta.status == pygit2.enums.DeltaStatus.ADDED:
            continue
        before = parse_module(blob_text(repo, delta.old_file.id), path)
        after = parse_module(blob_text(repo, delta.new_file.id), delta.new_file.path)
        if before is None or after is None or _star_import(after):
            continue  # unreadable, or a star import that may still bind anything
        module = module_name(path)
        for name in sorted(_bound(before) - _bound(after)):
            if changes.moved_to(module, name) or changes.renamed_to(module, name):
                continue
            found = _definition(repo, old.tree, parent_modules, module, name, _REEXPORT_HOPS)
            if found is not None:
                lost.append(Lost(module, name, *found))
    return lost


def index_moves(repo: pygit2.Repository, lost: Sequence[Lost], locate: Locate) -> tuple[Move, ...]:
    """A move for each lost name whose same definition the index finds in exactly one other module."""
    moves = []
    for item in lost:
        homes = {module_name(h.path) for h in locate(item.name) if _same_definition(repo, h, item)}
        homes.discard(item.module)
        if len(homes) == 1:
            moves.append(Move(item.name, item.module, homes.pop(), item.kind, found_by="index"))
    return tuple(moves)


def with_moves(changes: CommitChanges, moves: Sequence[Move]) -> CommitChanges:
    return dataclasses.replace(changes, moves=(*changes.moves, *moves)) if moves else changes


def _same_definition(repo: pygit2.Repository, hit: Hit, item: Lost) -> bool:
    if hit.language != "python" or hit.kind != item.kind or hit.symbol != item.name or is_test_file(hit.path):
        return False
    try:
        text = blob_text(repo, pygit2.Oid(hex=hit.blob_sha))
    except ValueError:  # not a sha: nothing this index can vouch for
        return False
    tree = parse_module(text, hit.path)
    return tree is not None and any(
        isinstance(node, _DEFINITION) and node.name == item.name and fingerprint_of(node, item.name) == item.fingerprint
        for node in tree.body
    )


def _definition(
    repo: pygit2.Repository, tree: pygit2.Tree, modules: dict[str, str], module: str, name: str, hops: int
) -> tuple[str, str] | None:
    """(kind, fingerprint) of what ``module.name`` was at the parent; the last binding wins, as in Python."""
    path = modules.get(module)
    if path is None:
        return None
    parsed = parse_module(blob_text(repo, tree[path].id), path)
    if parsed is None:
        return None
    found: tuple[str, str] | None = None
    for stmt in _top_level(parsed):
        if isinstance(stmt, _DEFINITION) and stmt.name == name:
            found = ("class" if isinstance(stmt, ast.ClassDef) else "function", fingerprint_of(stmt, name))
        elif isinstance(stmt, ast.ImportFrom) and hops > 0 and _imports_as_itself(stmt, name):
            source = _absolute(module, path, stmt)
            found = _definition(repo, tree, modules, source, name, hops - 1) if source else None
    return found


def _imports_as_itself(stmt: ast.ImportFrom, name: str) -> bool:
    return any(a.name == name and a.asname in (None, name) for a in stmt.names)


def _absolute(module: str, path: str, stmt: ast.ImportFrom) -> str | None:
    """The module ``from ... import`` reads, relative imports resolved against ``module``."""
    if stmt.level == 0:
        return stmt.module
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for _ in range(stmt.level - 1):
        package = package.rpartition(".")[0]
    if not package:
        return None
    return f"{package}.{stmt.module}" if stmt.module else package


def _top_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module-level statements in order, including those under ``if``/``try``/``with`` (not inside defs)."""
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.If | ast.Try | ast.With):
            nested = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
            nested += [s for h in getattr(stmt, "handlers", []) for s in h.body]
            stack += reversed(nested)


def _bound(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level."""
    names: set[str] = set()
    for stmt in _top_level(tree):
        if isinstance(stmt, _DEFINITION):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _star_import(tree: ast.Module) -> bool:
    return any(isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names) for stmt in _top_level(tree))


def _modules(tree: pygit2.Tree, prefix: str = "") -> dict[str, str]:
    """Every ``.py`` file of ``tree`` by its dotted module name."""
    found: dict[str, str] = {}
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            found.update(_modules(entry, f"{path}/"))
        elif path.endswith(".py"):
            found.setdefault(module_name(path), path)
    return found
