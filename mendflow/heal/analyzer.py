"""Seed 004's error analyzer: what kind of break a failing test shows, and whether the commit's intended change
explains it.

The category comes from the exception and its message. A failure is *explained by change* only when the name,
module or keyword it complains about is one the commit renamed, moved or re-signed (``CommitChanges``); an
assertion about behaviour never is (the caller reports it as a regression). ``choose_by_decision_tree`` is the
seed's tree for the healing method, kept on its own: the knowledge base uses it as its prior.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from mendflow.contracts import Assessment, ErrorCategory, FailureKind, HealMethod, Scope, TestFailure
from mendflow.heal.changes import CommitChanges, SignatureChange

_E_LINE = re.compile(r"^E\s+(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Timeout|Failed)?):\s?(?P<msg>.*)$")
_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>[\w.]+)' from '(?P<module>[\w.]+)'")
_NO_MODULE = re.compile(r"No module named '(?P<module>[\w.]+)'")
_NAME_NOT_DEFINED = re.compile(r"name '(?P<name>\w+)' is not defined")
_MODULE_ATTR = re.compile(r"module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")
_OBJECT_ATTR = re.compile(r"(?:'(?P<cls>\w+)' object|type object '(?P<tcls>\w+)') has no attribute '(?P<name>\w+)'")
_CALL = re.compile(r"^(?P<func>[\w.<>]+)\(\) (?P<what>.*)$")
_UNEXPECTED_KW = re.compile(r"got an unexpected keyword argument '(?P<kw>\w+)'")
_MISSING = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: (?P<names>.*)")
_TAKES = re.compile(r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:was|were) given")
_MULTIPLE = re.compile(r"got multiple values for argument '(?P<kw>\w+)'")
_POS_ONLY = re.compile(r"got some positional-only arguments passed as keyword arguments: '(?P<kw>\w+)'")
_ARGUMENT_TYPE_ERRORS = (_UNEXPECTED_KW, _MISSING, _TAKES, _MULTIPLE, _POS_ONLY)


@dataclass(frozen=True)
class Reading:
    """What a failure's exception and message say: the category and the name, module or keyword at fault."""

    exception: str
    message: str
    category: ErrorCategory
    name: str = ""  # the missing name or attribute
    module: str = ""  # the module it was looked up in
    owner: str = ""  # the class, for a missing attribute of an instance or a class
    func: str = ""  # the function a TypeError is about, as the message names it ('f', 'Calc.add')
    keywords: tuple[str, ...] = field(default_factory=tuple)  # keywords or parameters the message names


def _exception_and_message(failure: TestFailure) -> tuple[str, str]:
    exception, message = failure.exception.rsplit(".", 1)[-1], failure.message
    if exception and message:
        return exception, message
    for line in reversed(failure.traceback.splitlines()):
        m = _E_LINE.match(line)
        if m:
            return exception or m["exc"].rsplit(".", 1)[-1], message or m["msg"].strip()
    return exception, message


def read_failure(failure: TestFailure) -> Reading:
    """The category of ``failure`` and the subject of its message."""
    exc, msg = _exception_and_message(failure)
    low = msg.lower()
    if exc in ("ImportError", "ModuleNotFoundError"):
        if m := _CANNOT_IMPORT.search(msg):
            return Reading(exc, msg, ErrorCategory.IMPORT, name=m["name"], module=m["module"])
        if m := _NO_MODULE.search(msg):
            return Reading(exc, msg, ErrorCategory.IMPORT, module=m["module"])
        return Reading(exc, msg, ErrorCategory.IMPORT)
    if exc in ("NameError", "UnboundLocalError"):
        m = _NAME_NOT_DEFINED.search(msg)
        return Reading(exc, msg, ErrorCategory.NAME, name=m["name"] if m else "")
    if exc == "AttributeError":
        if m := _MODULE_ATTR.search(msg):
            return Reading(exc, msg, ErrorCategory.NAME, name=m["name"], module=m["module"])
        if m := _OBJECT_ATTR.search(msg):
            return Reading(exc, msg, ErrorCategory.NAME, name=m["name"], owner=m["cls"] or m["tcls"])
        return Reading(exc, msg, ErrorCategory.NAME)
    if exc == "TypeError" and any(p.search(msg) for p in _ARGUMENT_TYPE_ERRORS):
        call = _CALL.match(msg)
        keywords: list[str] = []
        for pattern in (_UNEXPECTED_KW, _MULTIPLE, _POS_ONLY):
            if m := pattern.search(msg):
                keywords.append(m["kw"])
        if m := _MISSING.search(msg):
            keywords += re.findall(r"'(\w+)'", m["names"])
        return Reading(exc, msg, ErrorCategory.SIGNATURE, func=call["func"] if call else "", keywords=tuple(keywords))
    if exc == "AssertionError" or (not exc and msg.startswith("assert ")):
        return Reading(exc, msg, ErrorCategory.ASSERTION)
    if exc in ("SyntaxError", "IndentationError", "TabError"):
        return Reading(exc, msg, ErrorCategory.SYNTAX)
    if "timeout" in exc.lower() or "timeout" in low.split(":", 1)[0] or low.startswith("timeout"):
        return Reading(exc, msg, ErrorCategory.TIMEOUT)
    if (
        exc == "FixtureLookupError"
        or re.search(r"fixture '\w+' not found", msg)
        or (failure.kind is FailureKind.ERROR and "::" in failure.node_id and not exc)
    ):
        return Reading(exc, msg, ErrorCategory.FIXTURE)
    return Reading(exc, msg, ErrorCategory.OTHER)


def _func_name(func: str) -> str:
    """'Calc.add' → 'Calc.add'; 'Calc.__init__' → 'Calc.__init__'; '<lambda>' → ''."""
    return "" if func.startswith("<") else func


def _callable_names(qualname: str) -> set[str]:
    """Names a call of ``qualname`` is written with: the function, the method, or the class for ``__init__``."""
    parts = qualname.split(".")
    if parts[-1] == "__init__" and len(parts) > 1:
        return {parts[-2]}
    return {parts[-1]}


def called_positionally(tree: ast.Module | None, qualname: str) -> bool:
    if tree is None:
        return False
    names = _callable_names(qualname)
    return any(isinstance(node, ast.Call) and node.args and _callee(node) in names for node in ast.walk(tree))


def _callee(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


@dataclass(frozen=True)
class Explanation:
    change: str
    identifiers: tuple[str, ...]  # identifiers in the test file a fix would touch
    modules: tuple[str, ...] = ()  # dotted modules in the test file a fix would touch


def explain(reading: Reading, changes: CommitChanges, tree: ast.Module | None) -> Explanation | None:
    """The commit's change behind ``reading``, or None when the commit did not change what the test relies on."""
    cat = reading.category
    if cat is ErrorCategory.IMPORT:
        return _explain_import(reading, changes)
    if cat is ErrorCategory.NAME:
        return _explain_name(reading, changes)
    if cat is ErrorCategory.SIGNATURE:
        return _explain_signature(reading, changes)
    if cat in (ErrorCategory.OTHER,) and reading.exception == "TypeError":
        # a positional reorder makes calls pass the wrong values: the body fails, not the call
        for sc in changes.signature_changes:
            if sc.reordered and called_positionally(tree, sc.qualname):
                return Explanation(sc.describe(), tuple(_callable_names(sc.qualname)))
    return None


def _explain_import(reading: Reading, changes: CommitChanges) -> Explanation | None:
    if reading.name:
        target = changes.moved_to(reading.module, reading.name) or changes.moved_to(None, reading.name)
        if target:
            move = next(m for m in changes.moves_of(reading.name) if m.new_module == target)
            return Explanation(move.describe(), (reading.name,), (reading.module,))
        renames = [r for r in changes.renames_of(reading.name) if "." not in r.old]
        exact = [r for r in renames if r.module == reading.module] or renames
        if len({r.new for r in exact}) == 1:
            return Explanation(exact[0].describe(), (reading.name,))
        return None
    if reading.module:
        moved = [m for m in changes.moves if m.old_module == reading.module]
        if moved:
            said = "; ".join(m.describe() for m in moved)
            return Explanation(said, tuple(m.name for m in moved), (reading.module,))
    return None


def _explain_name(reading: Reading, changes: CommitChanges) -> Explanation | None:
    if not reading.name:
        return None
    renames = changes.renames_of(reading.name)
    if reading.owner:
        renames = [r for r in renames if r.old.split(".")[0] == reading.owner] or [r for r in renames if "." in r.old]
    elif reading.module:
        renames = [r for r in renames if r.module == reading.module] or [r for r in renames if "." not in r.old]
    if len({r.new for r in renames}) == 1:
        return Explanation(renames[0].describe(), (reading.name,))
    moves = changes.moves_of(reading.name)
    if reading.module:
        moves = [m for m in moves if m.old_module == reading.module]
    if len({m.new_module for m in moves}) == 1 and not reading.owner:
        return Explanation(moves[0].describe(), (reading.name,), tuple({m.old_module for m in moves}))
    return None


def _explain_signature(reading: Reading, changes: CommitChanges) -> Explanation | None:
    func = _func_name(reading.func)
    candidates = [func] if func else []
    if not candidates:
        candidates = [p.qualname for kw in reading.keywords for p in changes.param_renames_by_old(kw)]
    for qualname in candidates:
        renamed = changes.param_renames(qualname)
        if renamed and (not reading.keywords or set(reading.keywords) & (set(renamed) | set(renamed.values()))):
            pr = next(p for p in changes.parameter_renames if p.renames == tuple(renamed.items()))
            return Explanation(pr.describe(), tuple(_callable_names(pr.qualname)) + tuple(renamed))
        sc = changes.signature_change(qualname)
        if sc is not None and _signature_explains(reading, sc):
            return Explanation(sc.describe(), tuple(_callable_names(sc.qualname)))
    return None


def _signature_explains(reading: Reading, sc: SignatureChange) -> bool:
    if not reading.keywords:
        return True  # "takes 2 positional arguments but 3 were given" of a function whose signature changed
    names = {p.name for p in (*sc.old, *sc.new)}
    return bool(set(reading.keywords) & names)


def _occurrence_lines(tree: ast.Module, identifiers: tuple[str, ...], modules: tuple[str, ...]) -> list[int]:
    """Lines a fix would touch: every use of a renamed identifier; for a move (``modules`` given), only the
    imports from the old module and the ``module.name`` accesses."""
    lines: set[int] = set()
    idents = set(identifiers)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for node in ast.walk(tree):  # ``from pkg import mod`` binds the old module too: its line changes as well
        if isinstance(node, ast.ImportFrom) and modules:
            for alias in node.names:
                if any(m == f"{node.module}.{alias.name}" for m in modules):
                    imported.add(alias.asname or alias.name)
                    lines.add(node.lineno)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in idents and not modules:
            lines.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in idents:
            if not modules or _dotted(node.value) in imported:
                lines.add(node.end_lineno or node.lineno)
        elif (isinstance(node, ast.keyword) and node.arg in idents) or (
            isinstance(node, ast.ImportFrom)
            and any(a.name in idents for a in node.names)
            and (not modules or node.module in modules)
        ):
            lines.add(node.lineno)
    return sorted(lines)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _test_path(failure: TestFailure) -> str:
    return failure.node_id.split("::", 1)[0]


def _failing_line(failure: TestFailure, path: str) -> int:
    where, _, line = failure.location.rpartition(":")
    return int(line) if where == path and line.isdigit() else 0


def _uniqueness(text: str, needle: str) -> float:
    if not needle:
        return 0.0
    count = len(re.findall(rf"(?<![\w.]){re.escape(needle)}(?!\w)", text)) if needle.isidentifier() else 0
    count = count or text.count(needle)
    return 1.0 / count if count else 0.0


def _scope(lines: int) -> Scope:
    if lines <= 1:
        return Scope.LOCAL
    return Scope.MULTI_LINE if lines < 10 else Scope.FILE_WIDE


def analyze(failure: TestFailure, changes: CommitChanges, test_text: str) -> Assessment:
    """Seed 004's assessment of ``failure`` in the test file whose text is ``test_text``."""
    reading = read_failure(failure)
    path = _test_path(failure)
    try:
        tree: ast.Module | None = ast.parse(test_text)
    except (SyntaxError, ValueError):
        tree = None
    category = reading.category
    explanation = None if category is ErrorCategory.ASSERTION else explain(reading, changes, tree)
    if explanation is not None and category is ErrorCategory.OTHER:
        category = ErrorCategory.SIGNATURE  # a reorder the calls did not follow
    if explanation is not None and tree is not None:
        lines = _occurrence_lines(tree, explanation.identifiers, explanation.modules)
        needle = explanation.identifiers[0] if explanation.identifiers else ""
        if explanation.modules and category is ErrorCategory.IMPORT:
            import_lines = [n for n in lines if explanation.modules[0] in _line(test_text, n)]
            needle = _line(test_text, import_lines[0]).strip() if import_lines else needle
        uniqueness = _uniqueness(test_text, needle)
    else:
        failing = _failing_line(failure, path)
        lines = [failing] if failing else []
        uniqueness = _uniqueness(test_text, _line(test_text, failing).strip()) if failing else 0.0
    assessment = Assessment(
        category=category,
        scope=_scope(len(lines)),
        locations=[f"{path}:{n}" for n in lines],
        uniqueness=round(uniqueness, 4),
        lines_to_change=len(lines),
        explained_by_change=explanation is not None,
        change=explanation.change if explanation else "",
    )
    return assessment.model_copy(update={"suggested_method": choose_by_decision_tree(assessment)})


def _line(text: str, n: int) -> str:
    lines = text.splitlines()
    return lines[n - 1] if 0 < n <= len(lines) else ""


def choose_by_decision_tree(assessment: Assessment) -> HealMethod:
    """Seed 004's ``choose_healing_method``: update for a unique local import/name break, patch for a few lines
    in one place, rewrite otherwise."""
    if (
        assessment.category in (ErrorCategory.NAME, ErrorCategory.IMPORT)
        and assessment.uniqueness == 1.0
        and assessment.scope is Scope.LOCAL
    ):
        return HealMethod.UPDATE
    if assessment.lines_to_change < 10 and len(assessment.locations) == 1:
        return HealMethod.PATCH
    return HealMethod.REWRITE


__all__ = ["Reading", "analyze", "choose_by_decision_tree", "explain", "read_failure"]
