"""Offline healers: seed 004's ``update`` payloads for breaks the commit explains, without an LLM.

Each rule finds the exact nodes with ``ast`` and replaces only their source segments: a moved import, a renamed
function, class or method, a renamed keyword argument, a call adapted to a changed signature when the mapping is
unambiguous. The edits of a fix are the smallest ones: one per changed line (or statement), each ``old_str``
made unique in the file, at the time it is applied, by including its whole line and, if needed, its neighbours.
Applying a fix's edits in order (``str.replace(old, new, 1)``) gives the healed file.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from mendflow.contracts import Assessment, ErrorCategory, HealEdit, TestFailure, UpdateEdit
from mendflow.heal.analyzer import Reading, read_failure
from mendflow.heal.changes import CommitChanges, Move, Param, SignatureChange

Replacement = tuple[int, int, str]  # start and end offsets (characters) in the text, and the new text


@dataclass(frozen=True)
class Fix:
    rule: str
    edits: list[HealEdit]


class _Source:
    """A test file's text, its AST, and the offsets of nodes in it (``ast`` columns are UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = ast.parse(text)
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def indent(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[: len(line) - len(line.lstrip())]


def _line_of(starts: list[int], offset: int) -> int:
    """0-based line index holding ``offset``."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _edits(path: str, text: str, replacements: list[Replacement], reasoning: str) -> list[HealEdit] | None:
    """``update`` edits making ``replacements``, one per group of lines they touch, applied bottom-up; None when
    they overlap or an ``old_str`` cannot be made unique."""
    reps = sorted(set(replacements))
    if not reps or any(a[1] > b[0] for a, b in itertools.pairwise(reps)):
        return None
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    # Group the replacements by the lines they touch (merging groups that share a line).
    groups: list[tuple[int, int, list[Replacement]]] = []
    for rep in reps:
        first, last = _line_of(starts, rep[0]), _line_of(starts, max(rep[1] - 1, rep[0]))
        if groups and first <= groups[-1][1]:
            g = groups[-1]
            groups[-1] = (g[0], max(g[1], last), [*g[2], rep])
        else:
            groups.append((first, last, [rep]))
    edits: list[HealEdit] = []
    current = text
    for first, last, group in reversed(groups):  # bottom-up: the lines above keep their offsets
        lines = current.splitlines(keepends=True)
        region_start, region_end = starts[first], starts[last + 1] if last + 1 < len(starts) else len(current)
        new_region = current[region_start:region_end]
        for start, end, new in sorted(group, reverse=True):
            new_region = new_region[: start - region_start] + new + new_region[end - region_start :]
        lo, hi = first, last + 1
        while True:
            old_str = "".join(lines[lo:hi])
            if old_str and current.count(old_str) == 1:
                break
            if lo == 0 and hi >= len(lines):
                return None
            lo, hi = max(lo - 1, 0), min(hi + 1, len(lines))
        new_str = "".join(lines[lo:first]) + new_region + "".join(lines[last + 1 : hi])
        if new_str == old_str:
            continue
        edits.append(
            HealEdit(reasoning=reasoning, file_to_patch=path, update=UpdateEdit(old_str=old_str, new_str=new_str))
        )
        current = current.replace(old_str, new_str, 1)
    try:
        ast.parse(current)
    except SyntaxError:
        return None
    return edits or None


def apply_fix(fix: Fix, text: str) -> str:
    """``text`` with the fix's edits applied in order (each ``old_str`` must occur once)."""
    for edit in fix.edits:
        assert edit.update is not None
        if text.count(edit.update.old_str) != 1:
            raise ValueError(f"old_str is not unique: {edit.update.old_str!r}")
        text = text.replace(edit.update.old_str, edit.update.new_str, 1)
    return text


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → module, for ``import a.b`` ('a.b' → 'a.b') and ``import a.b as m`` ('m' → 'a.b')."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name] = alias.name
    return out


def _alias_token(src: _Source, node: ast.ImportFrom | ast.Import, alias: ast.alias) -> tuple[int, int] | None:
    """The span of ``alias.name`` inside the import statement (aliases carry positions from Python 3.10)."""
    if hasattr(alias, "lineno"):
        start = src.offset(alias.lineno, alias.col_offset)
        if src.text.startswith(alias.name, start):
            return start, start + len(alias.name)
    return None


# --- rules -----------------------------------------------------------------------------------------------------


def fix_moved_import(reading: Reading, changes: CommitChanges, path: str, text: str) -> Fix | None:
    """Imports and module accesses of a moved function pointed at its new module, with the smallest edits:

    - ``from old.mod import X`` → ``from new.mod import X``; when other names stay, ``X`` leaves the list (a
      parenthesised, multi-line one keeps its lines) and ``from new.mod import X`` follows the statement;
    - ``old.mod.X`` after ``import old.mod`` → ``new.mod.X``, with ``import new.mod`` added;
    - ``mod.X`` after ``from pkg import mod`` → ``new_mod.X``, with ``new_mod`` imported the same way (``mod``
      stays imported only while the test still uses it, so no unused import is left behind)."""
    moves = [m for m in changes.moves if not reading.name or m.name == reading.name]
    if reading.module:
        moves = [m for m in moves if m.old_module == reading.module] or [
            m for m in moves if reading.name and m.name == reading.name
        ]
    if not moves:
        return None
    src = _Source(text)
    plans: dict[int, _ImportPlan] = {}
    reps = _moved_names(src, moves, plans)
    attrs = _moved_attributes(src, moves, plans)
    if attrs is None:
        return None
    reps += attrs
    for node in ast.walk(src.tree):
        if isinstance(node, ast.ImportFrom) and id(node) in plans:
            rendered = _render_plan(src, node, plans[id(node)])
            if rendered is None:
                return None
            reps += rendered
    said = "; ".join(m.describe() for m in moves)
    edits = _edits(path, text, reps, f"deterministic: {said}")
    return Fix("moved_import", edits) if edits else None


@dataclass
class _ImportPlan:
    """The changes to one ``from m import ...`` statement, rendered together so their edits never overlap."""

    drop: set[int] = field(default_factory=set)  # aliases (by index) that leave the statement
    replace: dict[int, str] = field(default_factory=dict)  # alias index → the text that takes its place
    insert: dict[int, list[str]] = field(default_factory=dict)  # alias index → names added right after it
    after: dict[str, list[str]] = field(default_factory=dict)  # module → names imported on a line of their own


def _moved_names(src: _Source, moves: list[Move], plans: dict[int, _ImportPlan]) -> list[Replacement]:
    """``from old import X``: the module replaced when every name goes to one place, else a plan that drops
    the moved names and imports them from their new modules on the next line."""
    reps: list[Replacement] = []
    for node in ast.walk(src.tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        moved = {i: _destination(moves, node.module, a.name) for i, a in enumerate(node.names)}
        targets = {i: d for i, d in moved.items() if d}
        if not targets:
            continue
        if len(targets) == len(node.names) and len(set(targets.values())) == 1:  # only the module changes
            at = src.text.index(node.module, src.span(node)[0])
            reps.append((at, at + len(node.module), next(iter(targets.values()))))
            continue
        plan = plans.setdefault(id(node), _ImportPlan())
        for i, dest in targets.items():
            plan.drop.add(i)
            plan.after.setdefault(dest, []).append(_alias_text(node.names[i]))
    return reps


def _alias_text(alias: ast.alias) -> str:
    return alias.name + (f" as {alias.asname}" if alias.asname else "")


def _moved_attributes(src: _Source, moves: list[Move], plans: dict[int, _ImportPlan]) -> list[Replacement] | None:
    """``module.X`` accesses of a moved ``X``: the module expression replaced, and its import planned; None when
    the new module's name is already bound to something else in the test file."""
    reps: list[Replacement] = []
    bindings = _module_bindings(src.tree, moves)
    added: dict[int, set[str]] = {}  # end offset of an ``import old`` statement → modules to add
    from_uses: dict[tuple[int, int], str] = {}  # (statement, alias) of ``from pkg import mod`` → new local name
    replaced: dict[str, int] = {}  # local name → accesses rewritten
    looked_up: dict[str, list[tuple[ast.expr, str]]] = {}  # ``m = importlib.import_module(...)``: m's accesses
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.Attribute):
            continue
        module, local = _imported_module({k: v[0] for k, v in bindings.items()}, _dotted(node.value))
        dest = _destination(moves, module, node.attr) if module else None
        if not dest:
            continue
        _, stmt, alias_index = bindings[local]
        replaced[local] = replaced.get(local, 0) + 1
        if isinstance(stmt, ast.Import):
            reps.append((*src.span(node.value), dest))
            added.setdefault(src.span(stmt)[1], set()).add(dest)
            continue
        if isinstance(stmt, ast.Assign):
            looked_up.setdefault(local, []).append((node.value, dest))
            continue
        new_local = dest.rsplit(".", 1)[-1]
        if new_local != local and new_local in _bound_names(src.tree):
            return None
        reps.append((*src.span(node.value), new_local))
        from_uses[(id(stmt), alias_index)] = dest
    reps += _added_imports(src, added)
    for local, accesses in looked_up.items():
        reps += _looked_up_module(src, local, accesses)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.ImportFrom):
            for i, alias in enumerate(node.names):
                if (id(node), i) in from_uses:
                    local = alias.asname or alias.name
                    still_used = _name_uses(src.tree, local) > replaced.get(local, 0)
                    _plan_module_import(node, i, from_uses[(id(node), i)], still_used, plans)
    return reps


def _looked_up_module(src: _Source, local: str, accesses: list[tuple[ast.expr, str]]) -> list[Replacement]:
    """``m = importlib.import_module("old")``: when the moved names are all ``m`` is used for, the literal becomes
    the new module; else each access looks the new module up itself (``m`` stays what the rest of the test,
    e.g. a monkeypatch of the old module, relies on)."""
    dests = {dest for _, dest in accesses}
    if len(dests) == 1 and _name_loads(src.tree, local) == len(accesses):
        literals = [
            n.value.args[0]
            for n in ast.walk(src.tree)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _dotted(n.targets[0]) == local
        ]
        return [(*src.span(lit), _quoted(src.segment(lit), dests.pop())) for lit in literals]
    call = next(
        n.value
        for n in ast.walk(src.tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _dotted(n.targets[0]) == local
    )
    func, literal = src.segment(call.func), src.segment(call.args[0])
    return [(*src.span(value), f"{func}({_quoted(literal, dest)})") for value, dest in accesses]


def _quoted(literal: str, text: str) -> str:
    """``text`` as a string literal with the quotes of ``literal``."""
    return f"{literal[0]}{text}{literal[0]}"


def _name_loads(tree: ast.Module, name: str) -> int:
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))


def _added_imports(src: _Source, added: dict[int, set[str]]) -> list[Replacement]:
    """``import new.mod`` after each ``import old.mod`` whose accesses moved, unless already imported."""
    imported = {a.name for n in ast.walk(src.tree) if isinstance(n, ast.Import) for a in n.names}
    reps: list[Replacement] = []
    for end, modules in added.items():
        indent = src.indent(_line_of(src.starts, end) + 1)
        extra = "".join(f"\n{indent}import {m}" for m in sorted(modules - imported))
        if extra:
            reps.append((end, end, extra))
    return reps


def _plan_module_import(
    node: ast.ImportFrom, index: int, dest: str, still_used: bool, plans: dict[int, _ImportPlan]
) -> None:
    """``from pkg import mod`` when ``mod.X`` now reads ``new_mod.X``: ``new_mod`` imported from its package, in
    the same statement when it is the same package; ``mod`` kept only while still used."""
    package, _, new_local = dest.rpartition(".")
    plan = plans.setdefault(id(node), _ImportPlan())
    if package == node.module and still_used:
        plan.insert.setdefault(index, []).append(new_local)
    elif package == node.module:
        plan.replace[index] = new_local
    else:
        if not still_used:
            plan.drop.add(index)
        plan.after.setdefault(package, []).append(new_local)


_Binding = tuple[str, ast.Import | ast.ImportFrom | ast.Assign, int]


def _module_bindings(tree: ast.Module, moves: list[Move]) -> dict[str, _Binding]:
    """Local name → (module, the statement binding it, the alias's index): ``import a.b`` binds 'a.b', ``import
    a.b as m`` binds 'm', ``from a import b`` binds 'b' when ``a.b`` is (or holds) a module a move left, and
    ``m = importlib.import_module("a.b")`` binds 'm' (humanize's tests reach ``i18n.activate`` that way)."""
    old_modules = {m.old_module for m in moves}
    out: dict[str, _Binding] = _import_module_calls(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for i, alias in enumerate(node.names):
                out[alias.asname or alias.name] = (alias.name, node, i)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for i, alias in enumerate(node.names):
                full = f"{node.module}.{alias.name}"
                if any(old == full or old.startswith(f"{full}.") for old in old_modules):
                    out[alias.asname or alias.name] = (full, node, i)
    return out


def _import_module_calls(tree: ast.Module) -> dict[str, _Binding]:
    """Names assigned ``importlib.import_module("<literal>")``, only where every binding of the name in the file
    is that same call (a name that is anything else somewhere would make the mapping a guess)."""
    found: dict[str, list[tuple[str, ast.Assign]]] = {}
    stores: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg | ast.alias):
            stores[node.arg if isinstance(node, ast.arg) else node.asname or node.name] = 2**31  # never a module
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            module = _import_module_literal(node.value)
            if module:
                found.setdefault(node.targets[0].id, []).append((module, node))
    return {
        name: (calls[0][0], calls[0][1], 0)
        for name, calls in found.items()
        if len({m for m, _ in calls}) == 1 and stores.get(name) == len(calls)
    }


def _import_module_literal(value: ast.expr) -> str | None:
    if (
        isinstance(value, ast.Call)
        and _dotted(value.func) in ("importlib.import_module", "import_module")
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    ):
        return value.args[0].value
    return None


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the test file binds or reads (a new import must not shadow one of them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _name_uses(tree: ast.Module, name: str) -> int:
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name)


def _render_plan(src: _Source, node: ast.ImportFrom, plan: _ImportPlan) -> list[Replacement] | None:
    """The edits of one statement's plan; None when it cannot be done in place (a ``;`` after it)."""
    after = [f"from {module} import {', '.join(names)}" for module, names in plan.after.items()]
    start, end = src.span(node)
    indent = src.indent(node.lineno)
    if len(plan.drop) == len(node.names):  # every name goes: the statement becomes the new ones
        return [(start, end, f"\n{indent}".join(after))]
    reps = [_alias_replacement(src, node.names[i], text) for i, text in plan.replace.items()]
    for i, names in plan.insert.items():
        at = src.span(node.names[i])[1]
        reps.append((at, at, "".join(f", {n}" for n in names)))
    reps += _dropped(src, node.names, plan.drop)
    if after:
        line_end = src.starts[(node.end_lineno or node.lineno)] - 1
        rest = src.text[end : line_end + 1]
        if ";" in rest.split("#", 1)[0]:
            return None
        at = line_end if src.text[line_end : line_end + 1] == "\n" else len(src.text)
        reps.append((at, at, "".join(f"\n{indent}{stmt}" for stmt in after)))
    return reps


def _alias_replacement(src: _Source, alias: ast.alias, text: str) -> Replacement:
    return (*src.span(alias), text)


def _dropped(src: _Source, aliases: list[ast.alias], drop: set[int]) -> list[Replacement]:
    """Removals of the dropped aliases, one per run of adjacent ones, taking the comma on the side that keeps
    the list's layout: ``a, b, c`` → ``a, c``; a name alone on its line of a parenthesised list loses the line."""
    reps: list[Replacement] = []
    runs: list[list[int]] = []
    for i in sorted(drop):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    for run in runs:
        first, last = src.span(aliases[run[0]]), src.span(aliases[run[-1]])
        prev = src.span(aliases[run[0] - 1]) if run[0] > 0 else None
        nxt = src.span(aliases[run[-1] + 1]) if run[-1] + 1 < len(aliases) else None
        whole = _whole_lines(src, first[0], last[1])
        if prev and _same_line(src, prev[1], first[0]):
            reps.append((prev[1], last[1], ""))
        elif nxt and _same_line(src, last[1], nxt[0]):
            reps.append((first[0], nxt[0], ""))
        elif whole:
            reps.append(whole)
        elif prev:
            reps.append((prev[1], last[1], ""))
        elif nxt:
            reps.append((first[0], nxt[0], ""))
    return reps


def _same_line(src: _Source, a: int, b: int) -> bool:
    return _line_of(src.starts, a) == _line_of(src.starts, b)


def _whole_lines(src: _Source, start: int, end: int) -> Replacement | None:
    """The lines from ``start`` to ``end`` when they hold nothing else but their commas: (line start, next line
    start, '')."""
    line_start = src.starts[_line_of(src.starts, start)]
    after_line = src.starts[_line_of(src.starts, end) + 1]
    before, rest = src.text[line_start:start], src.text[end:after_line]
    if before.strip() or rest.strip() != ",":
        return None
    return line_start, after_line, ""


def _imported_module(aliases: dict[str, str], dotted: str) -> tuple[str | None, str]:
    """The module ``dotted`` names through an import, and the imported name it goes through: ``pkg.sub`` after
    ``import pkg`` is ``('pkg.sub', 'pkg')`` (a submodule reached as an attribute of its package)."""
    parts = dotted.split(".") if dotted else []
    for cut in range(len(parts), 0, -1):
        local = ".".join(parts[:cut])
        if local in aliases:
            return ".".join([aliases[local], *parts[cut:]]), local
    return None, ""


def _destination(moves: list[Move], module: str | None, name: str) -> str | None:
    found = {m.new_module for m in moves if m.name == name and m.old_module == module}
    return found.pop() if len(found) == 1 else None


def fix_rename(reading: Reading, changes: CommitChanges, path: str, text: str) -> Fix | None:
    """A renamed function or class: its import and every use in the test file; a renamed method: its attribute
    accesses."""
    if not reading.name:
        return None
    renames = changes.renames_of(reading.name)
    if reading.owner:
        renames = [r for r in renames if "." in r.old and r.old.split(".")[0] == reading.owner] or [
            r for r in renames if "." in r.old
        ]
    elif reading.module:
        renames = [r for r in renames if r.module == reading.module] or [r for r in renames if "." not in r.old]
    if len({r.new_name for r in renames}) != 1:
        return None
    rename = renames[0]
    old, new = rename.old_name, rename.new_name
    src = _Source(text)
    reps: list[Replacement] = []
    if "." in rename.old:  # a method: obj.old → obj.new
        for node in ast.walk(src.tree):
            if isinstance(node, ast.Attribute) and node.attr == old:
                _, end = src.span(node)
                reps.append((end - len(old), end, new))
    else:
        bare = False  # the old name is bound in the test file by an import without ``as``
        modules = _module_aliases(src.tree)
        for node in ast.walk(src.tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == old:
                        token = _alias_token(src, node, alias)
                        if token is None:
                            return None
                        reps.append((*token, new))
                        bare = bare or alias.asname is None
            elif isinstance(node, ast.Attribute) and node.attr == old and _dotted(node.value) in modules:
                _, end = src.span(node)
                reps.append((end - len(old), end, new))
            elif isinstance(node, ast.Constant) and node.value == f"{rename.module}.{old}":  # mock.patch targets
                start, end = src.span(node)
                quote = src.text[start]
                reps.append((start, end, f"{quote}{rename.module}.{new}{quote}"))
        if bare or reading.category is ErrorCategory.NAME:
            for node in ast.walk(src.tree):
                if isinstance(node, ast.Name) and node.id == old:
                    start, end = src.span(node)
                    reps.append((start, end, new))
    edits = _edits(path, text, reps, f"deterministic: {rename.describe()}")
    return Fix("rename", edits) if edits else None


def _calls(tree: ast.Module, qualname: str) -> list[ast.Call]:
    """Calls of ``qualname`` ('f', 'Calc.m', 'Calc.__init__') as the test writes them, ``as`` aliases included."""
    parts = qualname.split(".")
    names = {parts[-2]} if parts[-1] == "__init__" and len(parts) > 1 else {parts[-1]}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname for a in node.names if a.asname and a.name in names}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            callee = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if callee in names:
                out.append(node)
    return out


def fix_param_rename(reading: Reading, changes: CommitChanges, path: str, text: str) -> Fix | None:
    """Keyword arguments renamed in the calls of the function whose parameters the commit renamed."""
    candidates = [p for p in changes.parameter_renames if not reading.func or _same_func(p.qualname, reading.func)]
    if reading.keywords:
        candidates = [p for p in candidates if any(old in reading.keywords for old, _ in p.renames)] or candidates
    if len({(p.qualname, p.renames) for p in candidates}) != 1:
        return None
    pr = candidates[0]
    renamed = dict(pr.renames)
    src = _Source(text)
    reps: list[Replacement] = []
    for call in _calls(src.tree, pr.qualname):
        for kw in call.keywords:
            if kw.arg in renamed:
                start = src.offset(kw.lineno, kw.col_offset)
                if not src.text.startswith(kw.arg, start):
                    return None
                reps.append((start, start + len(kw.arg), renamed[kw.arg]))
    edits = _edits(path, text, reps, f"deterministic: {pr.describe()}")
    return Fix("param_rename", edits) if edits else None


def _same_func(qualname: str, said: str) -> bool:
    return qualname == said or qualname.rsplit(".", 1)[-1] == said.rsplit(".", 1)[-1]


def _adapted_call(src: _Source, call: ast.Call, sc: SignatureChange) -> str | bool | None:
    """The call's new source when it must change, False when it needs nothing, None when the mapping is
    ambiguous (a removed parameter passed, a required one missing, ``*args``/``**kwargs``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    old_pos: list[Param] = [p for p in sc.old if p.positional][1 if sc.bound else 0 :]
    new_params = {p.name: p for p in sc.new}
    if len(call.args) > len(old_pos):
        return None  # more positional arguments than parameters: *args are not mapped
    bound: dict[str, str] = {}  # parameter → argument source, as the old signature binds the call
    positional: list[str] = []
    for param, arg in zip(old_pos, call.args, strict=False):
        bound[param.name] = src.segment(arg)
        positional.append(param.name)
    for kw in call.keywords:
        assert kw.arg is not None
        bound[kw.arg] = src.segment(kw.value)
    if any(name not in new_params for name in bound):
        return None  # a removed parameter is passed: which value goes where is not known
    new_pos = [p for p in sc.new if p.positional][1 if sc.bound else 0 :]
    keep = 0  # leading positional arguments still at the same parameter
    while keep < len(positional) and keep < len(new_pos) and new_pos[keep].name == positional[keep]:
        keep += 1
    as_keywords = positional[keep:]
    if any(new_params[n].kind == "posonly" for n in as_keywords):
        return None
    missing_defaults: list[str] = []
    for p in sc.new:
        if p.name in bound or p.kind in ("vararg", "varkw") or p.default is not None:
            continue
        old = next((o for o in sc.old if o.name == p.name), None)
        if old is None or old.default is None:
            return None  # a new required parameter: its value is not known
        try:
            ast.literal_eval(old.default)
        except (ValueError, SyntaxError):
            return None
        missing_defaults.append(p.name)  # its default was removed: pass the old default, the old behaviour
    if not as_keywords and not missing_defaults:
        return False
    parts = [src.segment(a) for a in call.args[:keep]]
    parts += [f"{n}={bound[n]}" for n in as_keywords]
    parts += [src.segment(k) for k in call.keywords]
    old_defaults = {p.name: p.default for p in sc.old}
    parts += [f"{n}={old_defaults[n]}" for n in missing_defaults]
    return f"{src.segment(call.func)}({', '.join(parts)})"


def fix_signature(reading: Reading, changes: CommitChanges, path: str, text: str) -> Fix | None:
    """Calls adapted to a changed signature only when the mapping is unambiguous: a positional reorder becomes
    keywords, a removed default is passed explicitly; a parameter added or removed with a default needs nothing.
    Any call that cannot be mapped for sure means no fix at all."""
    changed = [s for s in changes.signature_changes if not reading.func or _same_func(s.qualname, reading.func)]
    if len({(s.qualname, s.old, s.new) for s in changed}) != 1:
        return None
    sc = changed[0]
    src = _Source(text)
    reps: list[Replacement] = []
    for call in _calls(src.tree, sc.qualname):
        new = _adapted_call(src, call, sc)
        if new is None:
            return None
        if isinstance(new, str):
            reps.append((*src.span(call), new))
    edits = _edits(path, text, reps, f"deterministic: {sc.describe()}")
    return Fix("signature", edits) if edits else None


Rule = Callable[[Reading, CommitChanges, str, str], "Fix | None"]
_RULES: dict[ErrorCategory, tuple[Rule, ...]] = {
    ErrorCategory.IMPORT: (fix_moved_import, fix_rename),
    ErrorCategory.NAME: (fix_rename, fix_moved_import),
    ErrorCategory.SIGNATURE: (fix_param_rename, fix_signature),
}


def deterministic_fixes(
    failure: TestFailure, assessment: Assessment, changes: CommitChanges, test_path: str, test_text: str
) -> list[Fix]:
    """The offline fixes for ``failure`` in ``test_path``, best first; [] unless the commit explains it."""
    if not assessment.explained_by_change:
        return []
    try:
        ast.parse(test_text)
    except (SyntaxError, ValueError):
        return []
    reading = read_failure(failure)
    if reading.category is not assessment.category:  # e.g. a reorder the analyzer read as a signature break
        reading = Reading(reading.exception, reading.message, assessment.category)
    fixes: list[Fix] = []
    for rule in _RULES.get(assessment.category, ()):
        fix = rule(reading, changes, test_path, test_text)
        if fix is not None and all(f.edits != fix.edits for f in fixes):
            fixes.append(fix)
    return fixes
