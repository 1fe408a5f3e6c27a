"""The breakage corpus for ``heal_bench.py`` (issue 15): real libraries, one real source change per case.

    uv run --frozen python -m bench.heal_corpus [--out DIR] [--libraries toolz,parse] [--per-library 3]

For each pinned library (a PyPI sdist that ships its own tests, cached under ``~/.cache/mendflow/bench/sdists``)
it makes a git repo with one commit, "as shipped", checks that the library's tests pass there, and then
generates cases. A case is a git repo of its own: the as-shipped commit, then exactly one commit that changes
**source files only** (never a test):

- ``rename``: a top-level public function or class the tests use, renamed where it is defined and at every
  source reference (imports, ``module.name`` accesses, ``__all__``); no alias is left behind;
- ``move``: a function moved to a new module in the same package (a sibling module, or a submodule when it
  was defined in the package's ``__init__``); source imports updated, no re-export;
- ``reexport``: a package's ``__init__`` stops re-exporting a function or class it imports from one of its own
  modules (the import and its ``__all__`` entry go, source imports from the package point at that module);
  the definition itself is untouched, so only the code index can say where the tests should import it from;
- ``param_rename``: a parameter the tests pass by keyword, renamed in the function and at source call sites;
- ``signature``: the first two positional parameters swapped (source callers swapped too), or the default of
  the first defaulted parameter removed (source callers that left it out now pass it);
- ``return_type``: a function returning a list made to return a tuple, or a dict made to return its items;
- ``behaviour``: a real behaviour change (a comparison's boundary or sense, an inverted condition, an integer
  constant off by one) in a function the tests use. Tests *should* fail on it: a heal is a false heal.

Every refactoring is found with ``ast`` from what the tests actually reference and applied as text edits at the
nodes' spans, so a case's diff is minimal. A candidate becomes a case only if the changed tree is lint-clean
under the repo's ruff config and its changed modules import (else it is counted as invalid), and the library's
tests fail on it (pytest, whole suite); the others are counted as dropped. The as-shipped commit's ruff config
waives what the library already ships with (``per_file_ignores``), so a case's build fails on its tests and
nothing else. Choices are shuffled with a fixed seed, so the same arguments give the same cases and, because
the commits have fixed authors and dates, the same shas.

Output: ``DIR/repos/<library>`` (as shipped), ``DIR/cases/<id>`` (one repo per case) and ``DIR/cases.json``.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

CACHE = Path(os.environ.get("MENDFLOW_BENCH_CACHE", Path.home() / ".cache" / "mendflow" / "bench"))
DEFAULT_OUT = Path("/var/tmp/mendflow-heal-corpus")
CATEGORIES = ("rename", "move", "reexport", "param_rename", "signature", "return_type", "behaviour")
SEED = 15
MAX_TRIES = 15  # candidates run per library and category before giving up on it
TEST_TIMEOUT = 300
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The same minimal lint config pipeline_bench commits: the runner's broad default rule set would fail B1 on
# the libraries' own style before anything else happened.
LIBRARY_RUFF = '[lint]\nselect = ["E9", "F63", "F7", "F82"]\n\n[format]\nexclude = ["*"]\n'
GIT_ENV = {
    "GIT_AUTHOR_NAME": "heal-bench",
    "GIT_AUTHOR_EMAIL": "heal-bench@example.invalid",
    "GIT_COMMITTER_NAME": "heal-bench",
    "GIT_COMMITTER_EMAIL": "heal-bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


@dataclass(frozen=True)
class Library:
    name: str  # the PyPI name
    version: str
    modules: tuple[str, ...]  # top-level import names that are the library's source
    src: str = ""  # the directory holding them, relative to the sdist root ("" or "src")
    test_deps: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


# Small pure-Python libraries whose sdists ship tests that pass with plain pytest (checked 2026-11-25 on
# Python 3.11 and pytest 9). Left out: python-slugify 8.0.4 (no tests in the sdist) and boltons 24.1.0 (its
# conftest uses the ``path`` hook argument pytest 9 removed).
LIBRARIES: tuple[Library, ...] = (
    Library("inflection", "0.5.1", ("inflection",)),
    Library("parse", "1.20.2", ("parse",)),
    Library("schema", "0.7.7", ("schema",)),
    Library("humanize", "4.11.0", ("humanize",), src="src", test_deps=("freezegun", "coverage")),
    Library("isodate", "0.7.2", ("isodate",), src="src"),
    Library("cachetools", "5.5.0", ("cachetools",), src="src"),
    Library("semver", "3.0.2", ("semver",), src="src", test_deps=("pytest-cov",), pytest_args=("--no-cov",)),
    Library("toolz", "1.0.0", ("toolz",)),
    Library("tabulate", "0.9.0", ("tabulate",)),
)


@dataclass
class Candidate:
    category: str
    symbol: str  # dotted, e.g. 'toolz.itertoolz.groupby'
    description: str
    files: dict[str, str]  # new full text by path relative to the repo root (new files included)


@dataclass
class Case:
    id: str
    library: str
    version: str
    category: str
    symbol: str
    description: str
    repo: str
    parent_sha: str
    commit_sha: str
    files: list[str]
    failing_tests: list[str]
    diff_lines: int = 0


@dataclass
class Tally:
    """What happened to the candidates of one library and category."""

    tried: int = 0
    cases: int = 0
    dropped: int = 0  # applied cleanly but no test failed
    invalid: int = 0  # the edited source did not parse, or failed the repo's lint


class Skip(Exception):
    """A candidate this generator cannot apply safely."""


# -- source text and spans ------------------------------------------------------------------------------------
class Module:
    """One Python file of the library: text, tree, and offsets from ast's (line, UTF-8 byte column)."""

    def __init__(self, rel: str, name: str, text: str) -> None:
        self.rel, self.name, self.text = rel, name, text
        self.tree = ast.parse(text)
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    @property
    def is_package(self) -> bool:
        return self.rel.endswith("__init__.py")

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode()[:col].decode(errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def resolve(self, node: ast.ImportFrom) -> str:
        """The absolute module an ImportFrom names."""
        if not node.level:
            return node.module or ""
        parts = self.name.split(".")
        base = parts if self.is_package else parts[:-1]
        base = base[: len(base) - node.level + 1]
        return ".".join([*base, node.module] if node.module else base)


Edit = tuple[int, int, str]  # (start, end, replacement) in characters


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    ordered = sorted(set(edits))
    for (_, end, _), (start, _, _) in itertools.pairwise(ordered):
        if start < end:
            raise Skip("overlapping edits")
    for start, end, new in reversed(ordered):
        text = text[:start] + new + text[end:]
    return text


def name_edit(mod: Module, start: int, old: str, new: str) -> Edit:
    """Replace the identifier ``old`` at ``start``, checking it really is there (f-string spans can be off)."""
    if mod.text[start : start + len(old)] != old or _ident_char(mod.text, start + len(old)):
        raise Skip(f"{mod.rel}: {old!r} is not at {start}")
    return start, start + len(old), new


def _ident_char(text: str, i: int) -> bool:
    return i < len(text) and (text[i].isalnum() or text[i] == "_")


def def_name_start(mod: Module, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    start = mod.offset(node.lineno, node.col_offset)
    kw = "class" if isinstance(node, ast.ClassDef) else "def"
    match = re.compile(rf"{kw}\s+{re.escape(node.name)}\b").search(mod.text, start)
    if not match:
        raise Skip(f"no {kw} {node.name} in {mod.rel}")
    return match.end() - len(node.name)


def attr_start(mod: Module, node: ast.Attribute) -> int:
    return mod.offset(node.end_lineno or node.lineno, node.end_col_offset or 0) - len(node.attr)


def drop_item(mod: Module, items: list[ast.AST], index: int) -> Edit:
    """Remove one element of a comma-separated list (``__all__`` entries, import aliases)."""
    start, end = mod.span(items[index])
    if index + 1 < len(items):
        return start, mod.span(items[index + 1])[0], ""
    if index > 0:
        return mod.span(items[index - 1])[1], end, ""
    raise Skip("the only element")


def walk_shallow(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` of a function body that does not enter nested functions, lambdas or classes."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        yield child
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(child))


# -- the library: its source, its tests, and what the tests use ----------------------------------------------
def is_test_path(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


@dataclass
class Usage:
    """What the tests reference: names, call shapes (positional count, keywords) and the modules names come from."""

    names: Counter[str] = field(default_factory=Counter)
    calls: dict[str, list[tuple[int, frozenset[str]]]] = field(default_factory=lambda: defaultdict(list))
    origins: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                self.names[node.id] += 1
            elif isinstance(node, ast.Attribute):
                self.names[node.attr] += 1
                self.origins[node.attr].add(dotted(node.value))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    self.names[alias.name] += 1
                    self.origins[alias.name].add(node.module or "")
            elif isinstance(node, ast.Call):
                callee = callee_name(node)
                if callee:
                    npos = sum(not isinstance(a, ast.Starred) for a in node.args)
                    self.calls[callee].append((npos, frozenset(k.arg for k in node.keywords if k.arg)))


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def callee_name(call: ast.Call) -> str:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


class Project:
    """A library's tree on disk: its source modules and what its tests use."""

    def __init__(self, root: Path, lib: Library) -> None:
        self.root, self.lib = root, lib
        self.modules: dict[str, Module] = {}  # by dotted name
        self.usage = Usage()
        src = root / lib.src if lib.src else root
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            if is_test_path(rel):
                self.usage.add(ast.parse(text))
                continue
            inside = path.relative_to(src).with_suffix("").parts if path.is_relative_to(src) else ()
            if inside and inside[0] in lib.modules:
                parts = inside[:-1] if inside[-1] == "__init__" else inside
                self.modules[".".join(parts)] = Module(rel, ".".join(parts), text)

    def defs(self) -> Iterator[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]]:
        for mod in self.modules.values():
            for node in mod.tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    yield mod, node

    def functions(self, methods: bool = False) -> Iterator[tuple[Module, str, ast.FunctionDef]]:
        """(module, qualified name, node) of top-level functions and, with ``methods``, of classes' methods."""
        for mod, node in self.defs():
            if isinstance(node, ast.FunctionDef):
                yield mod, node.name, node
            elif methods and isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        yield mod, f"{node.name}.{item.name}", item

    def public_used(self, name: str) -> bool:
        return not name.startswith("_") and self.usage.names[name] > 0

    def def_counts(self) -> Counter[str]:
        return Counter(node.name for _, node in self.defs())

    def all_identifiers(self) -> set[str]:
        found: set[str] = set()
        for mod in self.modules.values():
            for node in ast.walk(mod.tree):
                if isinstance(node, ast.Name):
                    found.add(node.id)
                elif isinstance(node, ast.Attribute):
                    found.add(node.attr)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found.add(node.name)
                elif isinstance(node, ast.arg):
                    found.add(node.arg)
        return found | set(self.usage.names)

    def module_aliases(self, mod: Module) -> set[str]:
        """Names that are bound in ``mod`` to a module of the library (``import toolz``, ``from . import keys``)."""
        aliases: set[str] = set()
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in self.lib.modules:
                        aliases.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                base = mod.resolve(node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in self.modules:
                        aliases.add(alias.asname or alias.name)
        return aliases

    def imports_of(self, mod: Module, name: str, source: str | None = None) -> Iterator[tuple[ast.ImportFrom, int]]:
        """ImportFroms in ``mod`` that import ``name`` from the library (from ``source`` when given)."""
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ImportFrom):
                base = mod.resolve(node)
                if base in self.modules and (source is None or base == source):
                    for i, alias in enumerate(node.names):
                        if alias.name == name:
                            yield node, i

    def module_attr_refs(self, mod: Module, name: str) -> Iterator[ast.Attribute]:
        """``<library module>.name`` accesses in ``mod``."""
        aliases = self.module_aliases(mod)
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Attribute) and node.attr == name and dotted(node.value).split(".")[0] in aliases:
                yield node

    def calls_to(self, name: str, home: Module | None = None) -> Iterator[tuple[Module, ast.Call]]:
        """Calls of ``name`` in the source; with ``home``, bare-name calls only where the name is home's."""
        for mod in self.modules.values():
            aliases = self.module_aliases(mod)
            bound = home is None or mod is home or any(not i.names[k].asname for i, k in self.imports_of(mod, name))
            for node in ast.walk(mod.tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if (bound and isinstance(func, ast.Name) and func.id == name) or (
                    isinstance(func, ast.Attribute)
                    and func.attr == name
                    and dotted(func.value).split(".")[0] in aliases
                ):
                    yield mod, node

    def loads_outside_calls(self, name: str) -> int:
        """References to ``name`` in the source that are not the callee of a call (callbacks, aliases)."""
        count = 0
        for mod in self.modules.values():
            callees = {id(n.func) for n in ast.walk(mod.tree) if isinstance(n, ast.Call)}
            for node in ast.walk(mod.tree):
                named = (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) or (
                    isinstance(node, ast.Attribute) and node.attr == name
                )
                if named and id(node) not in callees:
                    count += 1
        return count


def all_entries(mod: Module) -> list[ast.Constant]:
    """The string elements of ``__all__ = [...]`` (or a tuple)."""
    for node in mod.tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.List | ast.Tuple):
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [e for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def string_edit(mod: Module, const: ast.Constant, old: str, new: str) -> Edit:
    start, end = mod.span(const)
    inner = mod.text.find(old, start, end)
    if inner < 0:
        raise Skip("string spelling")
    return inner, inner + len(old), new


# -- naming ---------------------------------------------------------------------------------------------------
VERBS = {"get": "fetch", "fetch": "get", "make": "build", "build": "make", "is": "check", "to": "as",
         "parse": "read", "format": "render", "compute": "calc", "find": "lookup", "create": "new"}  # fmt: skip
PARAMS = {"s": "text", "text": "s", "string": "text", "value": "val", "val": "value", "n": "count",
          "count": "n", "sep": "separator", "separator": "sep", "key": "keyfunc", "default": "fallback",
          "precision": "digits", "format": "fmt", "fmt": "format", "seq": "items", "items": "seq",
          "word": "term", "func": "fn", "fn": "func", "maxsize": "capacity", "ttl": "lifetime",
          "locale": "lang", "num": "number", "number": "num", "dt": "when", "value_str": "text"}  # fmt: skip


def new_symbol_name(old: str, taken: set[str]) -> str:
    if old[:1].isupper():
        new = f"{old}Type"
    else:
        head, _, tail = old.partition("_")
        new = f"{VERBS[head]}_{tail}" if tail and head in VERBS else f"compute_{old}"
    while new in taken:
        new += "_"
    return new


def new_param_name(old: str, taken: set[str]) -> str:
    new = PARAMS.get(old, f"{old}_value")
    while new in taken:
        new += "_"
    return new


def files_from(project: Project, edits: dict[str, list[Edit]]) -> dict[str, str]:
    by_rel = {m.rel: m for m in project.modules.values()}
    return {rel: apply_edits(by_rel[rel].text, e) for rel, e in edits.items() if e}


# -- rename ---------------------------------------------------------------------------------------------------
def rename_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    counts = project.def_counts()
    sites = [(m, n) for m, n in project.defs() if counts[n.name] == 1 and project.public_used(n.name)]
    rng.shuffle(sites)
    taken = project.all_identifiers()
    for mod, node in sites:
        new = new_symbol_name(node.name, taken)
        try:
            edits = rename_edits(project, mod, node, new)
        except Skip:
            continue
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        refs = sum(len(e) for e in edits.values()) - 1
        yield Candidate(
            "rename",
            f"{mod.name}.{node.name}",
            f"{kind} {mod.name}.{node.name} renamed to {new} ({refs} source references updated, no alias)",
            files_from(project, edits),
        )


def rename_edits(
    project: Project, home: Module, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, new: str
) -> dict[str, list[Edit]]:
    old = node.name
    edits: dict[str, list[Edit]] = defaultdict(list)
    edits[home.rel].append(name_edit(home, def_name_start(home, node), old, new))
    for mod in project.modules.values():
        bound = mod is home
        for imp, i in project.imports_of(mod, old):
            alias = imp.names[i]
            edits[mod.rel].append(name_edit(mod, mod.offset(alias.lineno, alias.col_offset), old, new))
            bound = bound or alias.asname is None
        for attr in project.module_attr_refs(mod, old):
            edits[mod.rel].append(name_edit(mod, attr_start(mod, attr), old, new))
        if bound:
            edits[mod.rel].extend(name_refs(mod, old, new))
            edits[mod.rel].extend(string_edit(mod, c, old, new) for c in all_entries(mod) if c.value == old)
    return edits


def name_refs(mod: Module, old: str, new: str) -> list[Edit]:
    out = []
    for n in ast.walk(mod.tree):
        if (isinstance(n, ast.arg) and n.arg == old) or (isinstance(n, ast.Global | ast.Nonlocal) and old in n.names):
            raise Skip(f"{old} is also a local name in {mod.rel}")
        if isinstance(n, ast.Name) and n.id == old:
            out.append(name_edit(mod, mod.offset(n.lineno, n.col_offset), old, new))
    return out


# -- move -----------------------------------------------------------------------------------------------------
def move_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    counts = project.def_counts()
    sites = [
        (m, n)
        for m, n in project.defs()
        if isinstance(n, ast.FunctionDef)
        and (m.is_package or "." in m.name)  # a new module needs a package to live in
        and counts[n.name] == 1
        and project.public_used(n.name)
        and tests_reach_through(project, m, n.name)
    ]
    rng.shuffle(sites)
    for mod, node in sites:
        try:
            files, new_mod = move_files(project, mod, node)
        except Skip:
            continue
        yield Candidate(
            "move",
            f"{mod.name}.{node.name}",
            f"function {node.name} moved from {mod.name} to new module {new_mod}; imports updated, no re-export",
            files,
        )


def tests_reach_through(project: Project, mod: Module, name: str) -> bool:
    """The tests import ``name`` from its own module (not only from the package), so a move can break them."""
    stem = mod.name.rsplit(".", 1)[-1]
    return any(o == mod.name or o.rsplit(".", 1)[-1] == stem for o in project.usage.origins[name])


def move_files(project: Project, home: Module, node: ast.FunctionDef) -> tuple[dict[str, str], str]:
    """The move's files: a function of ``pkg.mod`` goes to ``pkg.mod_<name>``, one of ``pkg/__init__.py`` (the
    package itself, e.g. inflection's functions) to the submodule ``pkg.pkg_<name>``."""
    name, stem = node.name, home.name.rsplit(".", 1)[-1]
    new_stem = f"{stem}_{name}"
    new_name = f"{new_parent(home)}.{new_stem}"
    if new_name in project.modules or _loads(home.tree, name, exclude=node):
        raise Skip("name taken, or the home module uses the function itself")
    edits: dict[str, list[Edit]] = defaultdict(list)
    edits[home.rel].append(cut_span(home, node))
    entries = all_entries(home)
    edits[home.rel].extend(drop_item(home, list(entries), i) for i, c in enumerate(entries) if c.value == name)
    for mod in project.modules.values():
        if any(True for _ in project.module_attr_refs(mod, name)) and mod is not home:
            raise Skip(f"{mod.rel} reaches it as a module attribute")
        edits[mod.rel].extend(repoint_imports(project, mod, home, name, new_stem))
    files = files_from(project, edits)
    new_rel = str(Path(home.rel).with_name(f"{new_stem}.py"))
    files[new_rel] = new_module_text(home, node)
    return files, new_name


def _loads(tree: ast.AST, name: str, exclude: ast.AST) -> bool:
    inside = {id(n) for n in ast.walk(exclude)}
    return any(isinstance(n, ast.Name) and n.id == name and id(n) not in inside for n in ast.walk(tree))


def new_parent(home: Module) -> str:
    """The package the new module goes in: the home's own package, or the home itself when it is one."""
    return home.name if home.is_package else home.name.rsplit(".", 1)[0]


def cut_span(mod: Module, node: ast.FunctionDef) -> Edit:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    start, end = mod.starts[first - 1], mod.starts[node.end_lineno or node.lineno]
    while end < len(mod.text) and mod.text[end] == "\n" and mod.text[start - 2 : start] == "\n\n":
        end += 1  # take the blank lines after it too, keeping the ones before
    if end >= len(mod.text):  # the last definition: the blank lines before it go too (no blank lines at the end)
        while start > 1 and mod.text[start - 2 : start] == "\n\n":
            start -= 1
    return start, end, ""


def repoint_imports(project: Project, mod: Module, home: Module, name: str, new_stem: str) -> list[Edit]:
    edits: list[Edit] = []
    for imp, i in project.imports_of(mod, name, source=home.name):
        line = import_line(imp, home, new_stem, [imp.names[i]])
        if len(imp.names) == 1:
            edits.append((*mod.span(imp), line.rstrip("\n")))
        else:
            edits.append(drop_item(mod, list(imp.names), i))
            edits.append((mod.span(imp)[1], mod.span(imp)[1], "\n" + " " * imp.col_offset + line.rstrip("\n")))
    for star in ast.walk(mod.tree):
        if isinstance(star, ast.ImportFrom) and star.names[0].name == "*" and mod.resolve(star) == home.name:
            end = mod.span(star)[1]
            edits.append((end, end, "\n" + import_line(star, home, new_stem, [ast.alias(name)]).rstrip("\n")))
    return edits


def import_line(imp: ast.ImportFrom, home: Module, new_stem: str, aliases: list[ast.alias]) -> str:
    """``imp`` (which imports from ``home``) pointed at the new module, spelled as ``imp`` spells it: absolute,
    or relative (``from .mod import`` → ``from .mod_f import``, ``from . import`` of a package → ``from .pkg_f``)."""
    names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in aliases)
    if not imp.level:
        return f"from {new_parent(home)}.{new_stem} import {names}\n"
    parts = imp.module.split(".") if imp.module else []
    module = ".".join([*parts, new_stem] if home.is_package else [*parts[:-1], new_stem])
    return f"from {'.' * imp.level}{module} import {names}\n"


def new_module_text(home: Module, node: ast.FunctionDef) -> str:
    """The moved function with what it needs: its imports copied, names the old module defines imported from it.

    The old module's ``from __future__`` imports come along, and imports it only makes under ``TYPE_CHECKING``
    stay under ``TYPE_CHECKING``.
    """
    needed = sorted(free_names(node) - set(dir(builtins)) - {node.name})
    future = [ast.unparse(s) for s in home.tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"]
    simple = {b: stmt for stmt in home.tree.body for b in import_bindings(stmt)}
    typing_only = {b: stmt for top in home.tree.body if is_type_checking(top) for stmt in top.body  # type: ignore[attr-defined]
                   for b in import_bindings(stmt)}  # fmt: skip
    defined = module_bindings(home.tree)
    lines: list[str] = []
    checking: list[str] = []
    from_home: list[str] = []
    for n in needed:
        if n in simple:
            lines.append(reduced_import(simple[n], n))
        elif n in typing_only:
            checking.append("    " + reduced_import(typing_only[n], n))
        elif n in defined:
            from_home.append(n)
        else:
            raise Skip(f"{n} is not bound in {home.rel}")
    if from_home:
        spelled = "." if home.is_package else f".{home.name.rsplit('.', 1)[-1]}"
        lines.append(f"from {spelled} import {', '.join(from_home)}")
    if checking:
        lines = ["from typing import TYPE_CHECKING", *lines, "", "if TYPE_CHECKING:", *checking]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    body = "".join(home.lines[first - 1 : node.end_lineno])
    header = "\n\n".join(b for b in ("\n".join(future), "\n".join(dict.fromkeys(lines))) if b)
    return "\n\n\n".join(b for b in (header, body.rstrip("\n")) if b) + "\n"


def is_type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and dotted(stmt.test).split(".")[-1] == "TYPE_CHECKING"


def free_names(fn: ast.FunctionDef) -> set[str]:
    loads: set[str] = set()
    bound: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n is not fn:
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
    return loads - bound


def import_bindings(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Import | ast.ImportFrom) and not any(a.name == "*" for a in stmt.names):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return []


def module_bindings(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    for stmt in tree.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                bound.add(n.id)
            elif isinstance(n, ast.alias):
                bound.add((n.asname or n.name).split(".")[0])
            if n is stmt and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(n.name)
    return bound


def reduced_import(stmt: ast.stmt, name: str) -> str:
    assert isinstance(stmt, ast.Import | ast.ImportFrom)
    aliases = [a for a in stmt.names if (a.asname or a.name).split(".")[0] == name]
    if isinstance(stmt, ast.Import):
        return ast.unparse(ast.Import(names=aliases))
    return ast.unparse(ast.ImportFrom(module=stmt.module, names=aliases, level=stmt.level))


# -- reexport -------------------------------------------------------------------------------------------------
def reexport_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    counts = project.def_counts()
    homes = {node.name: mod for mod, node in project.defs() if counts[node.name] == 1}
    sites = [
        (pkg, imp, i, homes[a.name])
        for pkg in project.modules.values()
        if pkg.is_package
        for imp in pkg.tree.body
        if isinstance(imp, ast.ImportFrom) and not any(a.name == "*" for a in imp.names)
        for i, a in enumerate(imp.names)
        if a.asname in (None, a.name)
        and a.name in homes
        and homes[a.name].name == pkg.resolve(imp)
        and project.public_used(a.name)
        and pkg.name in project.usage.origins[a.name]  # the tests reach it through the package
    ]
    rng.shuffle(sites)
    for pkg, imp, i, home in sites:
        name = imp.names[i].name
        try:
            files = reexport_files(project, pkg, imp, i, home)
        except Skip:
            continue
        said = f"{pkg.name} stops re-exporting {name} (defined in {home.name}); source imports point at {home.name}"
        yield Candidate("reexport", f"{pkg.name}.{name}", said, files)


def reexport_files(project: Project, pkg: Module, imp: ast.ImportFrom, index: int, home: Module) -> dict[str, str]:
    name = imp.names[index].name
    if _loads(pkg.tree, name, exclude=imp):
        raise Skip(f"{pkg.rel} uses {name} itself")
    edits: dict[str, list[Edit]] = defaultdict(list)
    if len(imp.names) == 1:
        start, end = pkg.span(imp)
        edits[pkg.rel].append((start, end + 1 if pkg.text[end : end + 1] == "\n" else end, ""))
    else:
        edits[pkg.rel].append(drop_item(pkg, list(imp.names), index))
    entries = all_entries(pkg)
    edits[pkg.rel].extend(drop_item(pkg, list(entries), k) for k, c in enumerate(entries) if c.value == name)
    for mod in project.modules.values():
        if mod is pkg:
            continue
        stars = [n for n in ast.walk(mod.tree) if isinstance(n, ast.ImportFrom) and n.names[0].name == "*"]
        if any(mod.resolve(n) == pkg.name for n in stars) or any(True for _ in project.module_attr_refs(mod, name)):
            raise Skip(f"{mod.rel} reaches {name} through the package another way")
        for other, k in project.imports_of(mod, name, source=pkg.name):
            line = f"from {home.name} import {_alias_text(other.names[k])}"
            if len(other.names) == 1:
                edits[mod.rel].append((*mod.span(other), line))
            else:
                end = mod.span(other)[1]
                edits[mod.rel].append(drop_item(mod, list(other.names), k))
                edits[mod.rel].append((end, end, f"\n{' ' * other.col_offset}{line}"))
    return files_from(project, edits)


def _alias_text(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


# -- param_rename ---------------------------------------------------------------------------------------------
def callables(project: Project) -> Iterator[tuple[Module, str, ast.FunctionDef]]:
    """Top-level functions, and classes as their ``__init__``: (module, the name callers use, the function)."""
    counts = project.def_counts()
    for mod, node in project.defs():
        if counts[node.name] != 1 or not project.public_used(node.name):
            continue
        if isinstance(node, ast.FunctionDef):
            yield mod, node.name, node
        elif isinstance(node, ast.ClassDef):
            init = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
            if init:
                yield mod, node.name, init


def param_rename_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    sites: list[tuple[Module, str, ast.FunctionDef, ast.arg]] = []
    for mod, callee, fn in callables(project):
        passed = set().union(*(kws for _, kws in project.usage.calls.get(callee, [])))
        params = [a for a in [*fn.args.args, *fn.args.kwonlyargs] if a.arg in passed and a.arg not in ("self", "cls")]
        sites.extend((mod, callee, fn, p) for p in params)
    rng.shuffle(sites)
    for mod, callee, fn, param in sites:
        taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {
            a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)
        }
        new = new_param_name(param.arg, taken)
        try:
            edits = param_rename_edits(project, mod, callee, fn, param, new)
        except Skip:
            continue
        yield Candidate(
            "param_rename",
            f"{mod.name}.{callee}",
            f"parameter {param.arg!r} of {mod.name}.{callee} renamed to {new!r} (source call sites updated)",
            files_from(project, edits),
        )


def param_rename_edits(
    project: Project, mod: Module, callee: str, fn: ast.FunctionDef, param: ast.arg, new: str
) -> dict[str, list[Edit]]:
    old = param.arg
    edits: dict[str, list[Edit]] = defaultdict(list)
    edits[mod.rel].append(name_edit(mod, mod.offset(param.lineno, param.col_offset), old, new))
    for n in ast.walk(fn):
        if isinstance(n, ast.arg) and n is not param and n.arg == old:
            raise Skip("shadowed in a nested scope")
        if isinstance(n, ast.Name) and n.id == old:
            edits[mod.rel].append(name_edit(mod, mod.offset(n.lineno, n.col_offset), old, new))
        if isinstance(n, ast.Call) and callee_name(n) == "locals":
            raise Skip("uses locals()")
    for caller, call in project.calls_to(callee, mod):
        for kw in call.keywords:
            if kw.arg == old:
                edits[caller.rel].append(name_edit(caller, caller.offset(kw.lineno, kw.col_offset), old, new))
    return edits


# -- signature ------------------------------------------------------------------------------------------------
def signature_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    sites: list[tuple[str, Module, str, ast.FunctionDef]] = []
    for mod, callee, fn in callables(project):
        if project.loads_outside_calls(callee) - sum(1 for _ in project.imports_of(mod, callee)) > 0:
            continue  # passed around as a value: a changed signature could break the source itself
        sites.extend((kind, mod, callee, fn) for kind in ("swap", "required"))
    rng.shuffle(sites)
    for kind, mod, callee, fn in sites:
        try:
            if kind == "swap":
                description, edits = swap_edits(project, mod, callee, fn)
            else:
                description, edits = required_edits(project, mod, callee, fn)
        except Skip:
            continue
        yield Candidate("signature", f"{mod.name}.{callee}", description, files_from(project, edits))


def positional(fn: ast.FunctionDef) -> list[ast.arg]:
    return [a for a in fn.args.args if a.arg not in ("self", "cls")]


def swap_edits(project: Project, mod: Module, callee: str, fn: ast.FunctionDef) -> tuple[str, dict[str, list[Edit]]]:
    params = positional(fn)
    n_required = len(fn.args.args) - len(fn.args.defaults)
    offset = len(fn.args.args) - len(params)
    if len(params) < 2 or n_required - offset < 2:
        raise Skip("fewer than two required positional parameters")
    if not any(npos >= 2 for npos, _ in project.usage.calls.get(callee, [])):
        raise Skip("the tests never pass two positionally")
    a, b = params[0], params[1]
    edits: dict[str, list[Edit]] = defaultdict(list)
    edits[mod.rel] += [(*mod.span(a), mod.segment(b)), (*mod.span(b), mod.segment(a))]
    for caller, call in project.calls_to(callee, mod):
        args = call.args
        if any(isinstance(x, ast.Starred) for x in args[:2]):
            raise Skip("a star-args caller")
        if len(args) >= 2:
            edits[caller.rel] += [(*caller.span(args[0]), caller.segment(args[1])),
                                  (*caller.span(args[1]), caller.segment(args[0]))]  # fmt: skip
        elif args and {k.arg for k in call.keywords} & {a.arg, b.arg}:
            continue
        elif args:
            raise Skip("a caller passes one positionally")
    return f"parameters {a.arg!r} and {b.arg!r} of {mod.name}.{callee} swapped (source callers swapped)", edits


def required_edits(
    project: Project, mod: Module, callee: str, fn: ast.FunctionDef
) -> tuple[str, dict[str, list[Edit]]]:
    args = fn.args
    if not args.defaults:
        raise Skip("no defaulted positional parameter")
    index = len(args.args) - len(args.defaults)
    param, default = args.args[index], args.defaults[0]
    try:
        ast.literal_eval(default)
    except ValueError as exc:
        raise Skip("the default is not a literal") from exc
    pos = index - (len(args.args) - len(positional(fn)))
    shapes = project.usage.calls.get(callee, [])
    if not any(npos <= pos and param.arg not in kws for npos, kws in shapes):
        raise Skip("no test call leaves it out")
    edits: dict[str, list[Edit]] = defaultdict(list)
    edits[mod.rel].append((mod.span(param)[1], mod.span(default)[1], ""))
    value = mod.segment(default)
    for caller, call in project.calls_to(callee, mod):
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            raise Skip("a star-args caller")
        if len(call.args) > pos or param.arg in {k.arg for k in call.keywords}:
            continue
        edits[caller.rel].append(append_argument(caller, call, f"{param.arg}={value}"))
    return f"default of parameter {param.arg!r} of {mod.name}.{callee} removed: callers must pass it", edits


def append_argument(mod: Module, call: ast.Call, text: str) -> Edit:
    parts: list[ast.AST] = [*call.args, *call.keywords]
    end = mod.span(call)[1]
    if mod.text[end - 1] != ")":
        raise Skip("call text")
    if not parts:
        return end - 1, end - 1, text
    last = max(mod.span(p)[1] for p in parts)
    return last, last, f", {text}"


# -- return_type ---------------------------------------------------------------------------------------------
KIND_CALLS = {"list": "list", "sorted": "list", "dict": "dict", "OrderedDict": "dict", "tuple": "tuple"}
KIND_METHODS = {"split": "list", "rsplit": "list", "splitlines": "list", "findall": "list"}
CHANGES = {  # what a return of each kind becomes, and how the description says it
    "list": ("tuple({})", "a tuple instead of a list"),
    "tuple": ("list({})", "a list instead of a tuple"),
    "dict": ("list(({}).items())", "a list of (key, value) items instead of a dict"),
}


def return_type_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    sites = [(m, q, f) for m, q, f in project.functions(methods=True) if project.public_used(f.name)]
    rng.shuffle(sites)
    for mod, qual, fn in sites:
        if any(True for _ in project.calls_to(fn.name)):
            continue  # the source uses the result itself (passing the function on, e.g. to curry, is fine)
        kind = return_kind(fn)
        if kind is None:
            continue
        template, change = CHANGES[kind]
        edits = [(*mod.span(r.value), template.format(mod.segment(r.value))) for r in returns(fn) if r.value]
        yield Candidate(
            "return_type",
            f"{mod.name}.{qual}",
            f"{mod.name}.{qual} returns {change}",
            {mod.rel: apply_edits(mod.text, edits)},
        )


def returns(fn: ast.FunctionDef) -> list[ast.Return]:
    return [n for n in walk_shallow(fn) if isinstance(n, ast.Return)]


def return_kind(fn: ast.FunctionDef) -> str | None:
    """'list', 'tuple' or 'dict' when every return of ``fn`` returns that kind, else None."""
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in walk_shallow(fn)):
        return None
    rets = returns(fn)
    if not rets or any(r.value is None for r in rets):
        return None
    assigned: dict[str, set[str | None]] = defaultdict(set)
    for n in walk_shallow(fn):
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    assigned[t.id].add(expr_kind(n.value, {}))
    kinds = {expr_kind(r.value, assigned) for r in rets if r.value is not None}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def expr_kind(node: ast.expr, assigned: dict[str, set[str | None]]) -> str | None:
    if isinstance(node, ast.List | ast.ListComp):
        return "list"
    if isinstance(node, ast.Tuple) and len(node.elts) > 1 and not any(isinstance(e, ast.Starred) for e in node.elts):
        return "tuple"
    if isinstance(node, ast.Dict | ast.DictComp):
        return "dict"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return KIND_CALLS.get(node.func.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return KIND_METHODS.get(node.func.attr)
    if isinstance(node, ast.Name) and len(assigned.get(node.id, set())) == 1:
        return next(iter(assigned[node.id]))
    return None


# -- behaviour ------------------------------------------------------------------------------------------------
FLIPS = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "=="}
OP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def behaviour_candidates(project: Project, rng: random.Random) -> Iterator[Candidate]:
    sites: list[tuple[Module, str, ast.AST]] = []
    for mod, qual, fn in project.functions(methods=True):
        if project.public_used(fn.name) or (fn.name == "__init__" and project.public_used(qual.split(".")[0])):
            sites.extend((mod, qual, n) for n in walk_shallow(fn) if mutable(n))
    rng.shuffle(sites)
    seen: set[str] = set()
    for mod, qual, node in sites:
        if qual in seen:
            continue  # one behaviour change per function
        try:
            edit, what = mutate(mod, node)
        except Skip:
            continue
        seen.add(qual)
        line = node.lineno  # type: ignore[attr-defined]
        yield Candidate(
            "behaviour",
            f"{mod.name}.{qual}",
            f"{what} in {mod.name}.{qual} (line {line})",
            {mod.rel: apply_edits(mod.text, [edit])},
        )


def mutable(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return len(node.ops) == 1 and type(node.ops[0]) in FLIPS
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        return True
    return isinstance(node, ast.Constant) and type(node.value) is int


def mutate(mod: Module, node: ast.AST) -> tuple[Edit, str]:
    if isinstance(node, ast.Compare):
        gap_start, gap_end = mod.span(node.left)[1], mod.span(node.comparators[0])[0]
        old = OP_TEXT[type(node.ops[0])]
        at = mod.text.find(old, gap_start, gap_end)
        if at < 0 or mod.text[gap_start:gap_end].count(old) != 1:
            raise Skip("operator text")
        new = FLIPS[type(node.ops[0])]
        return (at, at + len(old), new), f"comparison `{old}` changed to `{new}`"
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        start, end = mod.span(node.test)
        return (start, end, f"not ({mod.text[start:end]})"), "condition inverted"
    assert isinstance(node, ast.Constant) and isinstance(node.value, int)
    start, end = mod.span(node)
    if not mod.text[start:end].isdigit():
        raise Skip("not a plain decimal literal")
    value = node.value
    return (start, end, str(value + 1)), f"constant {value} changed to {value + 1} (off by one)"


GENERATORS: dict[str, Callable[[Project, random.Random], Iterator[Candidate]]] = {
    "rename": rename_candidates,
    "move": move_candidates,
    "reexport": reexport_candidates,
    "param_rename": param_rename_candidates,
    "signature": signature_candidates,
    "return_type": return_type_candidates,
    "behaviour": behaviour_candidates,
}


# -- fetching, git and pytest ---------------------------------------------------------------------------------
def sdist(lib: Library) -> Path:
    """The library's sdist, downloaded once into the cache."""
    cache = CACHE / "sdists"
    found = sorted(cache.glob(f"{lib.name.replace('-', '[-_]')}-{lib.version}.tar.gz"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip"]
    if subprocess.run([*pip, "--version"], capture_output=True).returncode != 0:
        pip = ["uv", "tool", "run", "pip"]  # the uv venv has no pip (and "python3" on its PATH is the venv's)
    subprocess.run([*pip, "download", "-q", "--no-deps", "--no-binary", ":all:", f"{lib.name}=={lib.version}",
                    "-d", str(cache)], check=True)  # fmt: skip
    return sdist(lib)


def venv_python(lib: Library) -> str:
    """A venv with pytest, the library's test dependencies, and the released library (for its metadata and deps).

    The tests import the tree under test: it comes first on PYTHONPATH.
    """
    venv = CACHE / "venvs" / lib.key
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run(["uv", "venv", "-q", "--python", "3.11", str(venv)], check=True)
        subprocess.run(["uv", "pip", "install", "-q", "--python", str(python), f"{lib.name}=={lib.version}",
                        "pytest", *lib.test_deps], check=True)  # fmt: skip
    return str(python)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def import_library(lib: Library, dest: Path) -> Path:
    """The sdist unpacked into a git repo on branch main with one commit, "as shipped" (plus the lint config)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist(lib)) as tar:
        tar.extractall(dest.parent / f".{lib.key}", filter="data")
    unpacked = next((dest.parent / f".{lib.key}").iterdir())
    shutil.move(unpacked, dest)
    (dest.parent / f".{lib.key}").rmdir()
    init_repo(dest, f"{lib.key} as shipped")
    return dest


def init_repo(root: Path, message: str) -> str:
    config = root / "ruff.toml"
    if not config.exists():
        config.write_text(LIBRARY_RUFF)  # first, so the findings waived are this config's, not ruff's defaults
        config.write_text(LIBRARY_RUFF + per_file_ignores(ruff_findings(root)))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A", "--force")  # everything the sdist ships, even what its .gitignore names
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def ruff_findings(root: Path) -> dict[str, set[str]]:
    """Codes ruff reports under ``root``'s own config, by file (the runner fails a build on any of them)."""
    argv = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "json", "."]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ruff check failed in {root}: {proc.stderr.strip()}")
    found: dict[str, set[str]] = defaultdict(set)
    for finding in json.loads(proc.stdout or "[]"):
        rel = Path(finding["filename"]).resolve().relative_to(root.resolve()).as_posix()
        found[rel].add(finding["code"] or "syntax-error")
    return found


def per_file_ignores(found: dict[str, set[str]]) -> str:
    """A ruff.toml table waiving what the library ships with (toolz 1.0.0's ``del exceptions`` is an F821 ruff
    cannot see is bound by a submodule import): the as-shipped commit must pass lint, or no case could ever
    get back to green and every heal would fail on lint, not on the case's own break."""
    if not found:
        return ""
    rows = "".join(f"{json.dumps(rel)} = {json.dumps(sorted(codes))}\n" for rel, codes in sorted(found.items()))
    return f"\n[lint.per-file-ignores]\n{rows}"


@dataclass
class TestRun:
    __test__ = False
    returncode: int
    failing: list[str]
    seconds: float
    tail: str


def run_tests(root: Path, python: str, lib: Library) -> TestRun:
    """The library's whole suite: the tree under test first on the path, no bytecode written, a fixed hash seed."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = str(root / lib.src) if lib.src else str(root)
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rfE", "--no-header", "--color=no",
            "--continue-on-collection-errors", "-o", "console_output_style=classic", *lib.pytest_args]  # fmt: skip
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=TEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        return TestRun(-1, ["<timeout>"], time.perf_counter() - start, "timeout")
    failing = []
    for line in ANSI.sub("", proc.stdout).splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            failing.append(line.split(" ", 1)[1].split(" - ", 1)[0])
    tail = "\n".join(proc.stdout.splitlines()[-3:])
    return TestRun(proc.returncode, sorted(set(failing)), time.perf_counter() - start, tail)


def source_modules(lib: Library, rels: Iterable[str]) -> list[str]:
    """The dotted names of the library's source files among ``rels`` ('src/pkg/__init__.py' → 'pkg')."""
    names = []
    for rel in rels:
        parts = Path(rel).with_suffix("").parts
        parts = parts[1:] if lib.src and parts[:1] == (lib.src,) else parts
        parts = parts[:-1] if parts[-1:] == ("__init__",) else parts
        if parts and parts[0] in lib.modules:
            names.append(".".join(parts))
    return sorted(names)


def imports_cleanly(root: Path, python: str, lib: Library, rels: Iterable[str]) -> bool:
    """Every changed source module imports (a move can make an import cycle through the new module: no test
    edit could heal that, so it is no case)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = str(root / lib.src) if lib.src else str(root)
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)"
    argv = [python, "-c", code, *source_modules(lib, rels)]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, timeout=TEST_TIMEOUT).returncode == 0


class Worktree:
    """A scratch copy of the as-shipped tree: candidates are written into it, tested, and rolled back."""

    def __init__(self, base: Path, dest: Path) -> None:
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(base), str(dest)], check=True)  # exactly the committed tree
        self.root = dest

    def apply(self, files: dict[str, str]) -> dict[str, str | None]:
        saved: dict[str, str | None] = {}
        for rel, text in files.items():
            path = self.root / rel
            saved[rel] = path.read_text(encoding="utf-8") if path.exists() else None
            path.write_text(text, encoding="utf-8")
        return saved

    def restore(self, saved: dict[str, str | None]) -> None:
        for rel, text in saved.items():
            path = self.root / rel
            if text is None:
                path.unlink()
            else:
                path.write_text(text, encoding="utf-8")


def make_case_repo(base: Path, dest: Path, cand: Candidate) -> tuple[str, str, int]:
    """A clone of the as-shipped repo with the candidate as one commit: (parent sha, case sha, diff lines)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(base), str(dest)], check=True)
    git(dest, "remote", "remove", "origin")
    parent = git(dest, "rev-parse", "HEAD")
    for rel, text in cand.files.items():
        (dest / rel).write_text(text, encoding="utf-8")
    git(dest, "add", *cand.files)
    git(dest, "commit", "-q", "-m", f"{cand.category}: {cand.description}")
    numstat = git(dest, "diff", "--numstat", parent, "HEAD")
    changed = sum(int(a) + int(d) for a, d, _ in (row.split("\t") for row in numstat.splitlines()))
    return parent, git(dest, "rev-parse", "HEAD"), changed


# -- the corpus -----------------------------------------------------------------------------------------------
@dataclass
class LibraryResult:
    library: str
    version: str
    baseline: TestRun | None = None
    cases: list[Case] = field(default_factory=list)
    tallies: dict[str, Tally] = field(default_factory=dict)
    error: str = ""


def build_library(
    lib: Library,
    base: Path,
    out: Path,
    python: str,
    per_library: int,
    categories: Iterable[str] = CATEGORIES,
    seed: int = SEED,
) -> LibraryResult:
    """Cases of every category for one library whose as-shipped repo is ``base``."""
    result = LibraryResult(lib.name, lib.version)
    work = Worktree(base, out / "work" / lib.key)
    result.baseline = run_tests(work.root, python, lib)
    if result.baseline.returncode != 0:
        result.error = f"tests do not pass as shipped: {result.baseline.tail}"
        return result
    project = Project(work.root, lib)
    for category in categories:
        tally = result.tallies.setdefault(category, Tally())
        rng = random.Random(f"{seed}:{lib.key}:{category}")
        for cand in GENERATORS[category](project, rng):
            if tally.tried >= MAX_TRIES or tally.cases >= per_library:
                break
            tally.tried += 1
            case = try_candidate(lib, base, out, python, work, cand, tally)
            if case:
                result.cases.append(case)
    shutil.rmtree(work.root, ignore_errors=True)
    return result


def try_candidate(
    lib: Library, base: Path, out: Path, python: str, work: Worktree, cand: Candidate, tally: Tally
) -> Case | None:
    try:
        for rel, text in cand.files.items():
            ast.parse(text, filename=rel)
    except SyntaxError:
        tally.invalid += 1
        return None
    saved = work.apply(cand.files)
    try:
        # A refactoring leaves lint-clean code and a library that imports: the case must fail on its tests only.
        if ruff_findings(work.root) or not imports_cleanly(work.root, python, lib, cand.files):
            tally.invalid += 1
            return None
        run = run_tests(work.root, python, lib)
    finally:
        work.restore(saved)
    if not run.failing:
        tally.dropped += 1
        return None
    tally.cases += 1
    case_id = f"{lib.name}-{cand.category}-{tally.cases}"
    repo = out / "cases" / case_id
    parent, sha, diff_lines = make_case_repo(base, repo, cand)
    return Case(case_id, lib.name, lib.version, cand.category, cand.symbol, cand.description, str(repo), parent,
                sha, sorted(cand.files), run.failing, diff_lines)  # fmt: skip


def build_corpus(
    out: Path,
    libraries: Iterable[Library] = LIBRARIES,
    per_library: int = 3,
    seed: int = SEED,
    categories: Iterable[str] = CATEGORIES,
) -> list[LibraryResult]:
    results = []
    for lib in libraries:
        print(f"[corpus] {lib.key}", file=sys.stderr, flush=True)
        base = import_library(lib, out / "repos" / lib.key)
        result = build_library(lib, base, out, venv_python(lib), per_library, categories, seed)
        results.append(result)
        print(f"[corpus] {lib.key}: {len(result.cases)} cases {result.error}", file=sys.stderr, flush=True)
    write_manifest(out, results, seed)
    return results


def write_manifest(out: Path, results: list[LibraryResult], seed: int = SEED) -> Path:
    manifest = {
        "seed": seed,
        "libraries": [
            {"library": r.library, "version": r.version, "baseline_tests_sec": r.baseline and r.baseline.seconds,
             "error": r.error, "tallies": {c: asdict(t) for c, t in r.tallies.items()}}
            for r in results
        ],
        "cases": [asdict(c) for r in results for c in r.cases],
    }  # fmt: skip
    path = out / "cases.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def load_cases(manifest: Path) -> list[Case]:
    return [Case(**c) for c in json.loads(manifest.read_text())["cases"]]


def summary(results: list[LibraryResult], categories: Iterable[str] = CATEGORIES) -> str:
    categories = list(categories)
    head = ["library", *categories]
    rows = [" | ".join(head)]
    totals: Counter[str] = Counter()
    for r in results:
        cells = [f"{r.library} {r.version}"]
        for c in categories:
            t = r.tallies.get(c, Tally())
            totals[c] += t.cases
            cells.append(f"{t.cases} (dropped {t.dropped}, invalid {t.invalid})")
        rows.append(" | ".join(cells) + (f"  ERROR {r.error}" if r.error else ""))
    rows.append(" | ".join(["total", *(str(totals[c]) for c in categories)]))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--libraries", default="", help="comma-separated PyPI names; default: all")
    parser.add_argument("--per-library", type=int, default=3, help="cases per library and category, at most")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--categories", default="", help=f"comma-separated, of {', '.join(CATEGORIES)}; default: all")
    args = parser.parse_args(argv)
    categories = [c for c in args.categories.split(",") if c] or list(CATEGORIES)
    if unknown := set(categories) - set(CATEGORIES):
        parser.error(f"unknown categories: {', '.join(sorted(unknown))}")
    wanted = {n for n in args.libraries.split(",") if n}
    libs = [lib for lib in LIBRARIES if not wanted or lib.name in wanted]
    results = build_corpus(args.out, libs, args.per_library, args.seed, categories)
    print(summary(results, categories))
    print(f"manifest: {args.out / 'cases.json'}")


if __name__ == "__main__":
    main()
