"""What a commit changed in the code's symbols, against a parent: the analyzer's evidence of an *intended* change.

Both sides of every changed ``.py`` file are read with pygit2 and parsed with ``ast`` (a file that fails to parse
on either side is ignored). From the top-level functions and classes, and the methods of classes present on both
sides, it finds:

- **renames**: a symbol gone from a module and one with a new name in the same module whose body is the same
  (the function's own name inside its body, e.g. a recursive call, counts as the same);
- **moves**: a symbol gone from module A and present in module B with the same name and body;
- **parameter renames**: a function kept under its name whose parameters differ only in their names;
- **signature changes**: parameters added, removed, reordered, or their defaults or kinds changed;
- **removed** symbols no rename or move explains, and the changed line ranges of each file.

Module names are dotted paths, src-layout aware: ``src/pkg/mod.py`` → ``pkg.mod``, ``pkg/__init__.py`` → ``pkg``.
"""

from __future__ import annotations

import ast
import copy
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pygit2

from mendflow.errors import CommitNotFoundError, RepoNotFoundError

_ZERO = "0" * 40


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # 'posonly', 'pos', 'vararg', 'kwonly', 'varkw'
    default: str | None = None  # the default's source, None when it has none

    @property
    def positional(self) -> bool:
        return self.kind in ("posonly", "pos")


@dataclass(frozen=True)
class Symbol:
    module: str
    qualname: str  # 'func', 'Class' or 'Class.method'
    kind: str  # 'function', 'class', 'method'
    path: str
    line: int
    end_line: int
    params: tuple[Param, ...] = ()
    bound: bool = False  # a method called on an instance or class: its first parameter is not passed
    fingerprint: str = field(default="", repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Rename:
    module: str
    old: str  # qualname
    new: str
    kind: str

    @property
    def old_name(self) -> str:
        return self.old.rsplit(".", 1)[-1]

    @property
    def new_name(self) -> str:
        return self.new.rsplit(".", 1)[-1]

    def describe(self) -> str:
        return f"{self.module}.{self.old} renamed to {self.module}.{self.new}"


@dataclass(frozen=True)
class Move:
    name: str
    old_module: str
    new_module: str
    kind: str
    found_by: str = "diff"  # 'diff': both ends in the commit's diff; 'index': the new home found in the code index

    def describe(self) -> str:
        said = f"{self.old_module}.{self.name} moved to {self.new_module}.{self.name}"
        return said + (" (found in the code index)" if self.found_by == "index" else "")


@dataclass(frozen=True)
class ParamRename:
    module: str
    qualname: str
    renames: tuple[tuple[str, str], ...]  # (old, new) per renamed parameter

    def describe(self) -> str:
        said = ", ".join(f"{o!r} → {n!r}" for o, n in self.renames)
        return f"parameters of {self.module}.{self.qualname} renamed: {said}"


@dataclass(frozen=True)
class SignatureChange:
    module: str
    qualname: str
    old: tuple[Param, ...]
    new: tuple[Param, ...]
    bound: bool = False

    @property
    def added(self) -> tuple[Param, ...]:
        before = {p.name for p in self.old}
        return tuple(p for p in self.new if p.name not in before)

    @property
    def removed(self) -> tuple[Param, ...]:
        after = {p.name for p in self.new}
        return tuple(p for p in self.old if p.name not in after)

    @property
    def reordered(self) -> bool:
        """The positional parameters both sides share are in another order."""
        shared = {p.name for p in self.old if p.positional} & {p.name for p in self.new if p.positional}
        return [p.name for p in self.old if p.name in shared] != [p.name for p in self.new if p.name in shared]

    def describe(self) -> str:
        def sig(params: tuple[Param, ...]) -> str:
            return ", ".join(p.name + (f"={p.default}" if p.default is not None else "") for p in params)

        return f"signature of {self.module}.{self.qualname} changed: ({sig(self.old)}) → ({sig(self.new)})"


@dataclass(frozen=True)
class CommitChanges:
    """What ``commit`` changed against ``parent``, symbol by symbol, with lookups for the analyzer and healers."""

    parent: str
    commit: str
    renames: tuple[Rename, ...] = ()
    moves: tuple[Move, ...] = ()
    parameter_renames: tuple[ParamRename, ...] = ()
    signature_changes: tuple[SignatureChange, ...] = ()
    removed: tuple[Symbol, ...] = ()
    changed_lines: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict, hash=False)
    modules: dict[str, str] = field(default_factory=dict, hash=False)  # module → path, both sides

    @property
    def empty(self) -> bool:
        return not (self.renames or self.moves or self.parameter_renames or self.signature_changes or self.removed)

    def renamed_to(self, module: str | None, name: str) -> str | None:
        """The new qualname of ``name`` (a qualname) renamed in ``module``; any module when None and unique."""
        found = {r.new for r in self.renames if r.old == name and (module is None or r.module == module)}
        return found.pop() if len(found) == 1 else None

    def renames_of(self, name: str) -> list[Rename]:
        """Renames whose old (last) name is ``name``, in any module or class."""
        return [r for r in self.renames if r.old_name == name]

    def moved_to(self, module: str | None, name: str) -> str | None:
        """The module ``name`` moved to from ``module`` (any module when None and the answer is unique)."""
        found = {m.new_module for m in self.moves if m.name == name and (module is None or m.old_module == module)}
        return found.pop() if len(found) == 1 else None

    def moves_of(self, name: str) -> list[Move]:
        return [m for m in self.moves if m.name == name]

    def param_renames(self, qualname: str, module: str | None = None) -> dict[str, str]:
        """old → new parameter names of ``qualname`` ('func' or 'Class.method'); {} when none or ambiguous."""
        found = [p for p in self.parameter_renames if _named(p.qualname, qualname) and module in (None, p.module)]
        if len({p.renames for p in found}) != 1:
            return {}
        return dict(found[0].renames)

    def param_renames_by_old(self, param: str) -> list[ParamRename]:
        return [p for p in self.parameter_renames if any(old == param for old, _ in p.renames)]

    def signature_change(self, qualname: str, module: str | None = None) -> SignatureChange | None:
        found = [s for s in self.signature_changes if _named(s.qualname, qualname) and module in (None, s.module)]
        return found[0] if len({(s.old, s.new) for s in found}) == 1 else None

    def removed_names(self) -> set[str]:
        return {s.name for s in self.removed}

    def touches(self, path: str, line: int) -> bool:
        return any(start <= line <= end for start, end in self.changed_lines.get(path, ()))


def _named(qualname: str, asked: str) -> bool:
    """``asked`` is the qualname or its last part ('Calc.add' is asked as 'Calc.add' or 'add')."""
    return qualname == asked or qualname.rsplit(".", 1)[-1] == asked


def module_name(path: str) -> str:
    """Dotted module of a repository path, src-layout aware: 'src/pkg/mod.py' → 'pkg.mod'."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _params(args: ast.arguments) -> tuple[Param, ...]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [
        Param(a.arg, "posonly" if i < len(args.posonlyargs) else "pos", None if d is None else ast.unparse(d))
        for i, (a, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, "vararg"))
    out += [
        Param(a.arg, "kwonly", None if d is None else ast.unparse(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg is not None:
        out.append(Param(args.kwarg.arg, "varkw"))
    return tuple(out)


def fingerprint_of(node: ast.AST, name: str) -> str:
    """The node's AST without its own name (nor uses of it, e.g. a recursive call): equal across a rename."""
    clone = copy.deepcopy(node)
    if isinstance(clone, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        clone.name = ""
    for n in ast.walk(clone):
        if isinstance(n, ast.Name) and n.id == name:
            n.id = ""
        elif isinstance(n, ast.Attribute) and n.attr == name:
            n.attr = ""
    return ast.dump(clone, include_attributes=False)


def _is_bound(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def _symbols(tree: ast.Module, module: str, path: str) -> dict[str, Symbol]:
    """Top-level functions and classes, and the classes' methods, by qualname."""
    found: dict[str, Symbol] = {}

    def add(node: ast.AST, qualname: str, kind: str, params: tuple[Param, ...] = (), bound: bool = False) -> None:
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        found[qualname] = Symbol(
            module, qualname, kind, path, node.lineno, node.end_lineno or node.lineno, params, bound,
            fingerprint_of(node, node.name),
        )  # fmt: skip

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node, node.name, "function", _params(node.args))
        elif isinstance(node, ast.ClassDef):
            add(node, node.name, "class")
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    add(item, f"{node.name}.{item.name}", "method", _params(item.args), _is_bound(item))
    return found


def parse_module(text: str, path: str) -> ast.Module | None:
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None


def blob_text(repo: pygit2.Repository, oid: pygit2.Oid) -> str:
    if str(oid) == _ZERO:
        return ""
    blob = repo.get(oid)
    if not isinstance(blob, pygit2.Blob) or blob.is_binary:
        return ""
    return blob.data.decode("utf-8", errors="replace")


def commit_of(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise CommitNotFoundError(
            f"commit {rev!r} is not in the repository", hint="pass a commit of this repository"
        ) from exc


def _compare_params(old: Symbol, new: Symbol) -> tuple[ParamRename | None, SignatureChange | None]:
    """A pure parameter rename (same positions, kinds and defaults; only new names), else a signature change."""
    if old.params == new.params:
        return None, None
    same_shape = len(old.params) == len(new.params) and all(
        (a.kind, a.default) == (b.kind, b.default) for a, b in zip(old.params, new.params, strict=True)
    )
    if same_shape:
        old_names = {p.name for p in old.params}
        pairs = tuple((a.name, b.name) for a, b in zip(old.params, new.params, strict=True) if a.name != b.name)
        if not any(b in old_names for _, b in pairs):  # a name that moved to another place is a reorder
            return ParamRename(new.module, new.qualname, pairs), None
    return None, SignatureChange(new.module, new.qualname, old.params, new.params, new.bound)


def commit_changes(repo: Path, parent: str, commit: str) -> CommitChanges:
    """The symbol-level changes from ``parent`` to ``commit`` in the repository at ``repo``."""
    try:
        git = pygit2.Repository(str(repo))
    except pygit2.GitError as exc:
        raise RepoNotFoundError(f"{repo} is not a git repository") from exc
    old_commit, new_commit = commit_of(git, parent), commit_of(git, commit)
    if old_commit.id == new_commit.id:
        return CommitChanges(parent=str(old_commit.id), commit=str(new_commit.id))
    diff = old_commit.tree.diff_to_tree(new_commit.tree, context_lines=0)
    diff.find_similar()

    before: dict[str, dict[str, Symbol]] = defaultdict(dict)  # module → qualname → symbol
    after: dict[str, dict[str, Symbol]] = defaultdict(dict)
    modules: dict[str, str] = {}
    changed_lines: dict[str, tuple[tuple[int, int], ...]] = {}
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        ranges = tuple((h.new_start, h.new_start + max(h.new_lines, 1) - 1) for h in patch.hunks)
        if ranges:
            changed_lines[delta.new_file.path] = ranges
        old_path, new_path = delta.old_file.path, delta.new_file.path
        if not (old_path.endswith(".py") or new_path.endswith(".py")):
            continue
        old_text, new_text = blob_text(git, delta.old_file.id), blob_text(git, delta.new_file.id)
        old_tree, new_tree = parse_module(old_text, old_path), parse_module(new_text, new_path)
        if old_tree is None or new_tree is None:
            continue  # a file that does not parse says nothing reliable about its symbols
        if old_path.endswith(".py"):
            mod = module_name(old_path)
            modules.setdefault(mod, old_path)
            before[mod].update(_symbols(old_tree, mod, old_path))
            after.setdefault(mod, {})
        if new_path.endswith(".py"):
            mod = module_name(new_path)
            modules[mod] = new_path
            after[mod].update(_symbols(new_tree, mod, new_path))
            before.setdefault(mod, {})

    gone: dict[tuple[str, str], Symbol] = {}
    came: dict[tuple[str, str], Symbol] = {}
    param_renames: list[ParamRename] = []
    signatures: list[SignatureChange] = []
    for mod in sorted(set(before) | set(after)):
        old_syms, new_syms = before.get(mod, {}), after.get(mod, {})
        for q, s in old_syms.items():
            if q not in new_syms:
                gone[(mod, q)] = s
        for q, s in new_syms.items():
            if q not in old_syms:
                came[(mod, q)] = s
            elif s.kind != "class":
                pr, sc = _compare_params(old_syms[q], s)
                param_renames += [pr] if pr else []
                signatures += [sc] if sc else []

    renames: list[Rename] = []
    moves: list[Move] = []
    # Renames: same module, same parent class, same kind and body; only when the match is unique both ways.
    for (mod, q), s in list(gone.items()):
        parent_cls = q.rsplit(".", 1)[0] if "." in q else ""
        matches = [
            (k, t)
            for k, t in came.items()
            if k[0] == mod and t.kind == s.kind and t.fingerprint == s.fingerprint
            and (k[1].rsplit(".", 1)[0] if "." in k[1] else "") == parent_cls
        ]  # fmt: skip
        if len(matches) != 1:
            continue
        key, t = matches[0]
        rivals = [g for g in gone.values() if g.module == mod and g.kind == s.kind and g.fingerprint == t.fingerprint]
        if len(rivals) != 1:
            continue
        renames.append(Rename(mod, q, t.qualname, s.kind))
        del gone[(mod, q)], came[key]
        if s.kind == "class":  # its methods came along under the new class name
            for k in [k for k in gone if k[0] == mod and k[1].startswith(f"{q}.")]:
                del gone[k]
                came.pop((mod, f"{t.qualname}.{k[1].split('.', 1)[1]}"), None)
    # Moves: a top-level symbol gone from one module and present, same name and body, in another.
    for (mod, q), s in list(gone.items()):
        if s.kind == "method":
            continue
        matches = [(k, t) for k, t in came.items() if k[1] == q and k[0] != mod and t.fingerprint == s.fingerprint]
        if len(matches) != 1:
            continue
        key, _t = matches[0]
        moves.append(Move(q, mod, key[0], s.kind))
        del gone[(mod, q)], came[key]
        if s.kind == "class":
            for k in [k for k in gone if k[0] == mod and k[1].startswith(f"{q}.")]:
                del gone[k]
                came.pop((key[0], k[1]), None)

    return CommitChanges(
        parent=str(old_commit.id),
        commit=str(new_commit.id),
        renames=tuple(renames),
        moves=tuple(moves),
        parameter_renames=tuple(param_renames),
        signature_changes=tuple(signatures),
        removed=tuple(sorted(gone.values(), key=lambda s: (s.module, s.qualname))),
        changed_lines=changed_lines,
        modules=modules,
    )
