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
from dataclasses import dataclass

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
    """``from old.mod import X`` → ``from new.mod import X`` (split off when other names stay), and ``old.mod.X``
    uses of ``import old.mod`` → ``new.mod.X`` with ``import new.mod`` added."""
    moves = [m for m in changes.moves if not reading.name or m.name == reading.name]
    if reading.module:
        moves = [m for m in moves if m.old_module == reading.module] or [
            m for m in moves if reading.name and m.name == reading.name
        ]
    if not moves:
        return None
    src = _Source(text)
    reps: list[Replacement] = []
    added_imports: dict[int, set[str]] = {}  # end offset of an ``import old`` statement → modules to add
    for node in ast.walk(src.tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            moved = {a.name: _destination(moves, node.module, a.name) for a in node.names}
            if not any(moved.values()):
                continue
            indent = src.indent(node.lineno)
            by_module: dict[str, list[str]] = {}
            for alias in node.names:
                dest = moved[alias.name] or node.module or ""
                by_module.setdefault(dest, []).append(alias.name + (f" as {alias.asname}" if alias.asname else ""))
            if len(by_module) == 1:  # only the module changes: replace just its dotted name
                start, _ = src.span(node)
                at = src.text.index(node.module, start)
                reps.append((at, at + len(node.module), next(iter(by_module))))
                continue
            stmts = [f"from {mod} import {', '.join(names)}" for mod, names in by_module.items()]
            start, end = src.span(node)
            reps.append((start, end, f"\n{indent}".join(stmts)))
        elif isinstance(node, ast.Attribute):
            base = _dotted(node.value)
            module, local = _imported_module(_module_aliases(src.tree), base)
            target = _destination(moves, module, node.attr) if module else None
            if target:
                dest = target
                start, end = src.span(node.value)
                reps.append((start, end, dest))
                for imp in ast.walk(src.tree):
                    if isinstance(imp, ast.Import) and any((a.asname or a.name) == local for a in imp.names):
                        added_imports.setdefault(src.span(imp)[1], set()).add(dest)
                        break
    imported = {a.name for n in ast.walk(src.tree) if isinstance(n, ast.Import) for a in n.names}
    for end, modules in added_imports.items():
        indent = src.indent(_line_of(src.starts, end) + 1)
        extra = "".join(f"\n{indent}import {m}" for m in sorted(modules - imported))
        if extra:
            reps.append((end, end, extra))
    said = "; ".join(m.describe() for m in moves)
    edits = _edits(path, text, reps, f"deterministic: {said}")
    return Fix("moved_import", edits) if edits else None


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
