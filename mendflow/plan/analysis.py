"""What the code itself says about a function: parameters, raises (with their guard), branches, risky calls.

Used offline to derive test-case goals ("divide raises CalcError when b == 0") and, on both sides of a diff,
to spot a changed public signature or a newly raised exception.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Calls whose arguments deserve a hostile-input test.
_SECURITY_SINKS = {
    "eval",
    "exec",
    "compile",
    "system",
    "popen",
    "run",
    "call",
    "check_output",
    "Popen",
    "loads",
    "load",
    "execute",
    "executemany",
    "open",
    "render_template_string",
    "format_map",
}
_SECURITY_MODULES = {"subprocess", "os", "pickle", "marshal", "yaml", "sqlite3", "shelve"}
_CONCURRENCY_NAMES = {
    "threading",
    "Lock",
    "RLock",
    "asyncio",
    "Thread",
    "ThreadPoolExecutor",
    "Queue",
    "Semaphore",
    "concurrent",
    "multiprocessing",
    "gather",
}


@dataclass(frozen=True)
class RaiseInfo:
    exception: str  # 'CalcError', or '' for a bare re-raise
    condition: str  # the guard that leads to it, '' when unconditional
    line: int


@dataclass(frozen=True)
class BranchInfo:
    condition: str
    lines: tuple[int, int]  # body span


@dataclass
class FunctionInfo:
    qualname: str
    start_line: int
    end_line: int
    params: list[str]
    signature: str
    is_async: bool = False
    raises: list[RaiseInfo] = field(default_factory=list)
    branches: list[BranchInfo] = field(default_factory=list)
    loops: int = 0
    concurrency: bool = False
    security_sinks: list[str] = field(default_factory=list)
    returns_value: bool = False

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def is_public(self) -> bool:
        parts = self.qualname.split(".")
        return not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts)

    @property
    def raised_types(self) -> set[str]:
        return {r.exception for r in self.raises if r.exception}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{prefix} {node.name}({ast.unparse(node.args)}){ret}"


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return [n for n in names if n not in ("self", "cls")]


def _exception_name(node: ast.Raise) -> str:
    exc = node.exc
    if exc is None:
        return ""
    target = exc.func if isinstance(exc, ast.Call) else exc
    return ast.unparse(target)


def _call_name(node: ast.Call) -> tuple[str, str]:
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = ast.unparse(func.value).split(".")[0]
        return owner, func.attr
    return "", ast.unparse(func)


class _BodyVisitor(ast.NodeVisitor):
    """Walks one function body, not nested functions/classes, tracking the guards of each raise."""

    def __init__(self, info: FunctionInfo) -> None:
        self.info = info
        self.guards: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # nested: analysed on its own
        return

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        cond = ast.unparse(node.test)
        self.info.branches.append(BranchInfo(cond, (node.body[0].lineno, node.body[-1].end_lineno or node.lineno)))
        self.visit(node.test)
        self._guarded(cond, node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            self.visit(node.orelse[0])  # an elif: its own condition says more than 'not (previous)'
        elif node.orelse:
            self._guarded(f"not ({cond})", node.orelse)

    def _guarded(self, cond: str, body: list[ast.stmt]) -> None:
        self.guards.append(cond)
        for stmt in body:
            self.visit(stmt)
        self.guards.pop()

    def visit_Raise(self, node: ast.Raise) -> None:
        guard = self.guards[-1] if self.guards else ""
        self.info.raises.append(RaiseInfo(_exception_name(node), guard, node.lineno))
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        self.info.loops += 1
        self.generic_visit(node)

    visit_While = visit_For
    visit_AsyncFor = visit_For

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.info.returns_value = True
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        owner, name = _call_name(node)
        if name in _SECURITY_SINKS and (owner in _SECURITY_MODULES or not owner or name in ("execute", "eval")):
            label = f"{owner}.{name}" if owner else name
            if label not in self.info.security_sinks:
                self.info.security_sinks.append(label)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _CONCURRENCY_NAMES:
            self.info.concurrency = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _CONCURRENCY_NAMES:
            self.info.concurrency = True
        self.generic_visit(node)

    def visit_Await(self, node: ast.Await) -> None:
        self.info.concurrency = True
        self.generic_visit(node)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> FunctionInfo:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    info = FunctionInfo(
        qualname=qualname,
        start_line=first,
        end_line=node.end_lineno or node.lineno,
        params=_params(node),
        signature=_signature(node),
        is_async=isinstance(node, ast.AsyncFunctionDef),
    )
    visitor = _BodyVisitor(info)
    for stmt in node.body:
        visitor.visit(stmt)
    return info


def functions_in(source: str) -> dict[str, FunctionInfo]:
    """Every function and method by coverage.py's qualified name ('Calculator.divide'); {} if unparsable."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, FunctionInfo] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found[f"{prefix}{child.name}"] = _function(child, f"{prefix}{child.name}")
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def statement_lines(source: str, start: int, end: int) -> set[int]:
    """Lines in [start, end] that begin a statement: a stand-in for coverage.py's count when it gave none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt)
        and start <= n.lineno <= end
        and not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
