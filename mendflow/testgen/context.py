"""What the generator needs to know about the repo: code around each target, fixtures, test style."""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass, field

import pygit2

from mendflow.contracts import TestSpec
from mendflow.errors import MendflowError
from mendflow.snippets import SnippetSource, snippet

log = logging.getLogger(__name__)

SNIPPET_RADIUS = 40
RANKED_FILES = 20  # files asked of the code index when looking for the closest existing test file
BUILTIN_FIXTURES = (
    "tmp_path",
    "tmp_path_factory",
    "monkeypatch",
    "capsys",
    "capfd",
    "caplog",
    "request",
    "recwarn",
    "pytestconfig",
)


@dataclass
class RepoContext:
    tests_dir: str
    fixtures: dict[str, str] = field(default_factory=dict)  # name → conftest path
    style_sample: str = ""
    markers: list[str] = field(default_factory=list)
    snippets: dict[str, str] = field(default_factory=dict)  # target ref → numbered code


def _walk(tree: pygit2.Tree, prefix: str = "") -> list[tuple[str, pygit2.Object]]:
    out = []
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            out += _walk(entry, f"{path}/")  # type: ignore[arg-type]
        elif entry.type_str == "blob":
            out.append((path, entry))
    return out


def _text(obj: pygit2.Object) -> str:
    return obj.data.decode("utf-8", errors="replace") if isinstance(obj, pygit2.Blob) else ""


def fixtures_in(source: str) -> list[str]:
    """Functions decorated with ``@pytest.fixture`` (or ``@fixture``), by the name pytest uses."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            func = call.func if call else dec
            if ast.unparse(func).split(".")[-1] == "fixture":
                alias = next(
                    (
                        k.value.value
                        for k in (call.keywords if call else [])
                        if k.arg == "name" and isinstance(k.value, ast.Constant)
                    ),
                    None,
                )
                names.append(str(alias or node.name))
    return names


def _is_test_file(path: str, tests_dir: str) -> bool:
    return path.startswith(f"{tests_dir}/") and path.rsplit("/", 1)[-1].startswith("test_") and path.endswith(".py")


def _sample(path: str, obj: pygit2.Object) -> str:
    return f"# {path}\n" + "\n".join(_text(obj).splitlines()[:40])


def _style(files: list[tuple[str, pygit2.Object]], tests_dir: str, module_stems: set[str]) -> str:
    """The start of an existing test file, preferably one for the same module: its imports show the style."""
    tests = [(p, o) for p, o in files if _is_test_file(p, tests_dir)]
    tests.sort(key=lambda po: not any(stem in po[0] for stem in module_stems))
    return _sample(*tests[0]) if tests else ""


def _ranked_style(index: SnippetSource, by_path: dict[str, pygit2.Object], tests_dir: str, spec: TestSpec) -> str:
    """The existing test file the code index ranks first for the targets' modules and names: how this repository
    already tests that code, a better example than any test file whose name merely contains the module's."""
    words = {t.path.rsplit("/", 1)[-1].removesuffix(".py") for t in spec.targets}
    words |= {part for t in spec.targets for part in t.symbol.split(".") if part}
    try:
        hits = index.search_files("tests for " + " ".join(sorted(words)), k=RANKED_FILES)
    except (MendflowError, AttributeError, ValueError) as exc:
        log.info("no ranked test sample from the code index (%s); choosing by file name", exc)
        return ""
    path = next((str(h.path) for h in hits if _is_test_file(str(h.path), tests_dir) and h.path in by_path), None)
    return _sample(path, by_path[path]) if path else ""


def _markers(files: list[tuple[str, pygit2.Object]]) -> list[str]:
    for path, obj in files:
        if path == "pyproject.toml":
            import tomllib

            try:
                data = tomllib.loads(_text(obj))
            except tomllib.TOMLDecodeError:
                return []
            markers = data.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("markers", [])
            return [str(m) for m in markers] if isinstance(markers, list) else []
    return []


def gather(repo: pygit2.Repository, spec: TestSpec, tests_dir: str, index: SnippetSource | None) -> RepoContext:
    commit = repo.revparse_single(spec.parent_commit_sha).peel(pygit2.Commit)
    files = _walk(commit.tree)
    ctx = RepoContext(tests_dir=tests_dir)
    for path, obj in files:
        if path.rsplit("/", 1)[-1] == "conftest.py":
            for name in fixtures_in(_text(obj)):
                ctx.fixtures.setdefault(name, path)
    by_path = dict(files)
    for t in spec.targets:
        source = _text(by_path[t.path]) if t.path in by_path else ""
        ctx.snippets[t.ref] = snippet(t.path, t.start_line, t.end_line, SNIPPET_RADIUS, source, index, max_lines=160)
    ranked = _ranked_style(index, by_path, tests_dir, spec) if index is not None else ""
    ctx.style_sample = ranked or _style(files, tests_dir, {t.path.rsplit("/", 1)[-1][:-3] for t in spec.targets})
    ctx.markers = _markers(files)
    return ctx
