"""Where generated tests may go, and the checks on every path and file a generator proposes."""

from __future__ import annotations

import configparser
import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath

import pygit2

from mendflow.contracts import DropReason

MAX_FILE_BYTES = 64 * 1024
MAX_FILE_LINES = 1500
MAX_TOTAL_BYTES = 256 * 1024
READ_LIMIT = 256 * 1024  # manifests, build files and sources read for a prompt
_LINK_MODE = 0o120000


@dataclass(frozen=True)
class Rejection:
    path: str
    reason: DropReason
    detail: str


# The files pytest takes its configuration from, in its own order: the first present one wins (pyproject.toml
# and tox.ini/setup.cfg only when they have pytest's table or section).
_PYTEST_CONFIG = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", ""),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
_CONFIG_BYTES = 1024 * 1024
_CONVENTIONAL_DIRS = ("tests", "test")


def tests_dir(tree: pygit2.Tree) -> str:
    """Where the repo's own test command looks: a directory of pytest's ``testpaths`` (the first named like a
    test directory, else the first; ``testpaths = src tests`` also collects doctests from the sources), else
    ``tests`` or ``test`` when present, else ``tests``. Tests written anywhere else would pass the gates and
    never run in B2."""
    dirs = [p.as_posix() for p in map(PurePosixPath, testpaths(tree)) if _is_plain_dir(tree, p)]
    if dirs:
        return min(dirs, key=lambda d: "test" not in PurePosixPath(d).name.lower())  # min keeps the first of equals
    for name in _CONVENTIONAL_DIRS:
        if _node(tree, (name,)) == "tree":
            return name
    return "tests"


def testpaths(tree: pygit2.Tree) -> list[str]:
    """pytest's ``testpaths`` as the repository configures it ([] when it does not)."""
    for name, section in _PYTEST_CONFIG:
        text = blob_text(tree, name)
        if text is None:
            continue
        if name == "pyproject.toml":
            table = _pyproject_pytest(text)
            if table is None:
                continue
            value = table.get("testpaths", [])
            return [str(v) for v in value] if isinstance(value, list) else str(value).split()
        ini = configparser.ConfigParser(interpolation=None)
        try:
            ini.read_string(text)
        except configparser.Error:
            continue
        if name.endswith("pytest.ini") or ini.has_section(section):
            return ini.get(section, "testpaths", fallback="").split()
    return []


def _pyproject_pytest(text: str) -> dict[str, object] | None:
    """``[tool.pytest.ini_options]`` (or pytest 9's ``[tool.pytest]``), None when pyproject.toml has neither."""
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return None
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    ini = table.get("ini_options", table)
    return ini if isinstance(ini, dict) else None


def _is_plain_dir(tree: pygit2.Tree, p: PurePosixPath) -> bool:
    """A directory of the tree named plainly: no glob, no way out of the repository, no symlink on the way."""
    plain = p.parts and not p.is_absolute() and ".." not in p.parts and not re.search(r"[*?\[]", str(p))
    return bool(plain) and _node(tree, p.parts) == "tree" and _is_link(tree, p.parts) is None


def blob_text(tree: pygit2.Tree, name: str, limit: int = _CONFIG_BYTES) -> str | None:
    """The text of the file ``name`` in ``tree``; None when absent, not a file, or over ``limit`` bytes."""
    try:
        obj = tree[name]
    except KeyError:
        return None
    if not isinstance(obj, pygit2.Blob) or obj.size > limit:
        return None
    return obj.data.decode("utf-8", errors="replace")


def _node(tree: pygit2.Tree, parts: tuple[str, ...]) -> str:
    """'tree', 'blob' or '' (absent) for a path in the tree."""
    try:
        return str(tree["/".join(parts)].type_str)
    except KeyError:
        return ""


def test_file_for(target_path: str, tests_dir_name: str, taken: dict[str, str], tree: pygit2.Tree) -> str:
    """``tests/test_<module>_mendflow.py``; the parent package joins the name when two stems clash, and a number
    (``test_<module>_2_mendflow.py``) when ``tree`` already has the file: earlier generated tests stay as
    they are, the new ones go beside them."""
    p = PurePosixPath(target_path)
    for stem in (p.stem, f"{p.parent.name}_{p.stem}"):
        base = f"{tests_dir_name}/test_{stem}"
        if taken.get(f"{base}_mendflow.py", target_path) == target_path:
            break
    name, n = f"{base}_mendflow.py", 1
    while name in tree or taken.get(name, target_path) != target_path:
        n += 1
        name = f"{base}_{n}_mendflow.py"
    taken[name] = target_path
    return name


def _is_link(tree: pygit2.Tree, parts: tuple[str, ...]) -> str | None:
    """The first prefix of ``parts`` that is a symlink in the tree, if any."""
    node: pygit2.Object = tree
    for i, part in enumerate(parts):
        if not isinstance(node, pygit2.Tree) or part not in node:
            return None
        entry = node[part]
        if entry.filemode == _LINK_MODE:
            return "/".join(parts[: i + 1])
        node = entry
    return None


def check_candidate(path: str, content: str, tests_dir_name: str, tree: pygit2.Tree) -> Rejection | None:
    """Refuse anything outside the tests dir (absolute, traversal, symlinked, not .py) and oversize files."""
    norm = path.strip()
    p = PurePosixPath(norm)
    if not norm or "\\" in norm or "\0" in norm or p.is_absolute() or ".." in p.parts or norm.startswith("~"):
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, "absolute path or '..' traversal")
    under = PurePosixPath(tests_dir_name).parts
    if p.parts[: len(under)] != under or len(p.parts) <= len(under):
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, f"tests may only be written under {tests_dir_name}/")
    if p.suffix != ".py" or not re.fullmatch(r"[\w.-]+", p.name):
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, "only Python files with plain names")
    link = _is_link(tree, p.parts)
    if link:
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, f"{link} is a symlink in the repository")
    size = len(content.encode())
    if size > MAX_FILE_BYTES or content.count("\n") > MAX_FILE_LINES:
        return Rejection(path, DropReason.OVERSIZE, f"{size} bytes / {content.count(chr(10))} lines is too large")
    return None


def module_of(target_path: str, tree: pygit2.Tree) -> tuple[str, str]:
    """(dotted module, import root) for a source file: the root is above the topmost package dir."""
    parts = list(PurePosixPath(target_path).with_suffix("").parts)
    root_len = len(parts) - 1
    while root_len > 0:
        init = "/".join([*parts[:root_len], "__init__.py"])
        try:
            tree[init]
        except KeyError:
            break
        root_len -= 1
    module = parts[root_len:-1] if parts[-1] == "__init__" else parts[root_len:]  # a package is its __init__
    return ".".join(module), "/".join(parts[:root_len]) or "."
