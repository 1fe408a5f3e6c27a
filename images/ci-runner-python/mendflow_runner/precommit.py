"""The tool versions a repository pins in ``.pre-commit-config.yaml``: ruff's and mypy's hooks.

The runner is stdlib-only and pre-commit's file is YAML; only the few keys needed here are read, line by line:
each ``- repo:`` item's ``rev``, its hooks' ``id`` and ``additional_dependencies`` (flow ``[a, b]`` or block
``- a``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# pre-commit mirrors whose rev is the tool's own version (``v0.4.4`` is ruff 0.4.4).
TOOLS = {
    "ruff": ("astral-sh/ruff-pre-commit", "charliermarsh/ruff-pre-commit"),
    "mypy": ("pre-commit/mirrors-mypy",),
}
_KEY = re.compile(r"^(?P<indent>\s*)(?:-\s+)?(?P<key>[\w-]+):\s*(?P<value>.*?)\s*(?:#(?P<comment>.*))?$")
# `pre-commit autoupdate --freeze`: a commit for the rev, its tag in a comment (`rev: 25bcf95… # frozen: v0.17.3`).
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_FROZEN = re.compile(r"^\s*frozen:\s*(?P<tag>\S+)")
_ITEM = re.compile(r"^\s*-\s+(?P<value>[^#]+?)\s*(?:#.*)?$")


@dataclass
class Hook:
    repo: str
    rev: str = ""
    ids: list[str] = field(default_factory=list)
    additional_dependencies: list[str] = field(default_factory=list)


def hooks(root: Path) -> list[Hook]:
    path = root / ".pre-commit-config.yaml"
    if not path.is_file():
        return []
    found: list[Hook] = []
    in_deps = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _KEY.match(line)
        if m:
            key, value = m["key"], _unquote(m["value"])
            in_deps = key == "additional_dependencies"
            if key == "repo":
                found.append(Hook(value))
            elif found and key == "rev":
                found[-1].rev = _tag(value, m["comment"] or "")
            elif found and key == "id":
                found[-1].ids.append(value)
            elif found and in_deps and value.startswith("["):
                found[-1].additional_dependencies += [_unquote(v) for v in value.strip("[]").split(",") if v.strip()]
                in_deps = False
            continue
        item = _ITEM.match(line)
        if item and in_deps and found:
            found[-1].additional_dependencies.append(_unquote(item["value"]))
    return found


def _tag(rev: str, comment: str) -> str:
    """The tag a hook's ``rev`` stands for: itself, or a frozen commit's tag from its comment ("" where a commit
    has none: no version to pin). pytest-env 1.8.5 pins ruff's hook as ``25bcf95… # frozen: v0.17.3``; the commit
    itself was pinned as ruff's version, which uv refused."""
    if not _COMMIT.fullmatch(rev):
        return rev
    frozen = _FROZEN.match(comment)
    return frozen["tag"] if frozen else ""


def _unquote(text: str) -> str:
    return text.strip().strip("'\"")


def pinned(root: Path, tool: str) -> list[str]:
    """Requirements for ``tool`` as the repo's pre-commit hook pins it (``ruff==0.4.4``), with the hook's
    additional dependencies (mypy's stubs); [] when no hook pins it."""
    for hook in hooks(root):
        if hook.repo.rstrip("/").removesuffix(".git").endswith(TOOLS[tool]) and hook.rev:
            version = hook.rev.removeprefix("v")
            return [f"{tool}=={version}", *hook.additional_dependencies]
    return []


def hook_ids(root: Path) -> set[str]:
    """Every hook id the repository's pre-commit runs (``ruff-format``, ``black``, ...)."""
    return {i for hook in hooks(root) for i in hook.ids}
