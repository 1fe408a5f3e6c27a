"""Dropping generated tests that failed B2: mendflow's own candidates, never the user's tests.

B1 passed on the same code, so a generated test that fails B2 is a wrong candidate, not a finding about the
commit. What the healer could not repair is removed: the failing test functions (a parametrized id drops the
whole function, a method drops only itself), the imports only they used, and a file left without a test.
Everything is decided from the text's ``ast`` on the trusted side; B3 then builds what is left.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mendflow.contracts import BuildReport, DroppedTest, DropReason, GeneratedTests, KeptTest
from mendflow.heal.healer import test_path

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Drop:
    """What to commit (path → new text, ``None`` removes the file) and the generated tests that are left."""

    files: dict[str, str | None]
    generated: GeneratedTests


def drop_failed(generated: GeneratedTests, report: BuildReport, read: Callable[[str], str]) -> Drop | None:
    """The generated tests without those that failed ``report`` (files with lint findings go whole); None when
    something outside the generated files failed too (not a candidate's fault to drop) or nothing is left."""
    ours = set(generated.files)
    linted = {finding.split(":", 1)[0] for finding in report.lint_errors}
    failed = [t for t in report.failed_tests if test_path(t) not in linted]
    if not (linted or failed) or not linted <= ours or any(test_path(t) not in ours for t in failed):
        return None
    doomed = failing_by_file(failed, ours) | {path: {()} for path in linted}
    files = {path: None if () in tests else without_tests(read(path), tests) for path, tests in doomed.items()}
    doomed |= {path: {()} for path, text in files.items() if text is None}  # a file left without a test
    gone = [k for k in generated.kept if _dropped(k.node_id, doomed)]
    why = {t: "failed B2" for t in failed} | {path: "lint findings in B2" for path in linted}
    left = generated.model_copy(update={
        "kept": [k for k in generated.kept if k not in gone],
        "files": sorted(p for p in ours if files.get(p, "") is not None),
        "dropped": [*generated.dropped, *_dropped_tests(gone, why)],
    })  # fmt: skip
    return Drop(files, left) if left.kept else None


def _dropped(node_id: str, doomed: dict[str, set[tuple[str, ...]]]) -> bool:
    tests = doomed.get(test_path(node_id))
    if tests is None:
        return False
    names = tuple(p.split("[", 1)[0] for p in node_id.split("::")[1:])
    return () in tests or any(names[: len(t)] == t for t in tests)


def _dropped_tests(gone: list[KeptTest], why: dict[str, str]) -> list[DroppedTest]:
    fallback = "a test it shares a class with failed B2"
    return [
        DroppedTest(
            node_id=k.node_id,
            reason=DropReason.FAILS,
            detail=why.get(k.node_id) or why.get(test_path(k.node_id)) or fallback,
        )
        for k in gone
    ]


def failing_by_file(failed: Iterable[str], files: Iterable[str]) -> dict[str, set[tuple[str, ...]]]:
    """The failing node ids of ``files`` as ``path → {(Class, test) or (test,)}``; a path alone (a collection
    error) maps to ``{()}``: the whole file goes."""
    wanted = set(files)
    found: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for node_id in failed:
        path = test_path(node_id)
        if path in wanted:
            parts = node_id.split("::")[1:]
            found[path].add(tuple(p.split("[", 1)[0] for p in parts))
    return dict(found)


def without_tests(text: str, tests: set[tuple[str, ...]]) -> str | None:
    """``text`` without the named tests and the imports only they used; None when no test is left."""
    if () in tests:
        return None
    tree = ast.parse(text)
    removed = list(_doomed(tree, tests))
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for node in removed:
        drop.update(_lines_of(node, lines))
    remaining = ast.parse("".join(ln for i, ln in enumerate(lines, 1) if i not in drop))
    if not any(_is_test(n) for n in ast.walk(remaining)):
        return None
    imports = _unused_imports(tree, remaining, removed)
    kept = [imports.get(i, ln) for i, ln in enumerate(lines, 1) if i not in drop]
    return "".join(kept).lstrip("\n")  # a file opens with code, not with the blank lines a dropped import left


def _doomed(tree: ast.Module, tests: set[tuple[str, ...]]) -> Iterable[ast.stmt]:
    for node in tree.body:
        if isinstance(node, _DEFS) and (node.name,) in tests:
            yield node
        elif isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, _DEFS) and (node.name, m.name) in tests]
            if methods and len(methods) == sum(_is_test(m) for m in node.body):
                yield node  # a test class left with no test goes whole
            else:
                yield from methods


def _lines_of(node: ast.stmt, lines: list[str]) -> range:
    """The node's lines with its decorators and the blank lines before it (the spacing the next one keeps)."""
    first = start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    last = node.end_lineno or node.lineno
    while first > 1 and not lines[first - 2].strip():
        first -= 1
    while first == start and last < len(lines) and not lines[last].strip():
        last += 1  # the first of its block: the spacing after it goes instead
    return range(first, last + 1)


def _is_test(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _unused_imports(tree: ast.Module, remaining: ast.Module, removed: list[ast.stmt]) -> dict[int, str]:
    """Top-level single-line imports of names only the removed tests used (the repo's lint would flag them in
    B3): line → its text without those names ('' when none is left)."""
    used_by_removed, still_used = _names(removed), _names(remaining.body)
    rewritten: dict[int, str] = {}
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno != node.end_lineno:
            continue
        unused = [a for a in node.names if _bound(a) in used_by_removed and _bound(a) not in still_used]
        if not unused:
            continue
        left = [a for a in node.names if a not in unused]
        rewritten[node.lineno] = f"{ast.unparse(_with_names(node, left))}\n" if left else ""
    return rewritten


def _bound(alias: ast.alias) -> str:
    return (alias.asname or alias.name).split(".", 1)[0]


def _with_names(node: ast.Import | ast.ImportFrom, names: list[ast.alias]) -> ast.stmt:
    if isinstance(node, ast.Import):
        return ast.Import(names=names)
    return ast.ImportFrom(module=node.module, names=names, level=node.level)
