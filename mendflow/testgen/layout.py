"""Where generated tests may go, and the checks on every path and file a generator proposes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import pygit2

from mendflow.contracts import DropReason

MAX_FILE_BYTES = 64 * 1024
MAX_FILE_LINES = 1500
MAX_TOTAL_BYTES = 256 * 1024
_LINK_MODE = 0o120000


@dataclass(frozen=True)
class Rejection:
    path: str
    reason: DropReason
    detail: str


def tests_dir(tree: pygit2.Tree) -> str:
    """The repo's tests directory: 'tests' or 'test' when present, else 'tests'."""
    for name in ("tests", "test"):
        if name in tree and tree[name].type_str == "tree":
            return name
    return "tests"


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
    if p.parts[:1] != (tests_dir_name,) or len(p.parts) < 2:
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
