"""A poetry project's test and development dependencies as PEP 508 requirements.

``pip install .`` of a poetry project installs its main dependencies only; the tests' own (pytest plugins,
stubs) live in ``[tool.poetry.group.<name>.dependencies]`` or the older ``[tool.poetry.dev-dependencies]``,
written in poetry's constraint syntax (``^1.2``, ``~1.2``, ``1.2.*``). Without a lockfile (an sdist rarely
ships one) they are translated here; with ``poetry.lock`` the locked pins apply on top (``lockfiles``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import repo_config

_VERSION = re.compile(r"^\d+(?:\.\d+)*(?:\.\*)?$")


def test_requirements(root: Path) -> list[str]:
    tool = repo_config.pyproject(root).get("tool", {}).get("poetry", {})
    tables = [tool.get("dev-dependencies", {})]
    groups = tool.get("group", {})
    if isinstance(groups, dict):
        tables += [
            g.get("dependencies", {}) for n, g in groups.items() if repo_config.for_tests(n) and isinstance(g, dict)
        ]
    out: list[str] = []
    for table in tables:
        if isinstance(table, dict):
            out += [r for name, spec in table.items() if name.lower() != "python" and (r := requirement(name, spec))]
    return sorted(set(out))


def requirement(name: str, spec: Any) -> str | None:
    """PEP 508 for one poetry dependency; None for what pip cannot install by name (a path, a git checkout)."""
    if isinstance(spec, str):
        spec = {"version": spec}
    if not isinstance(spec, dict) or {"path", "git", "url", "file"} & spec.keys():
        return None
    extras = spec.get("extras") or []
    head = f"{name}[{','.join(extras)}]" if extras else name
    version = specifier(str(spec.get("version", "*")))
    marker = spec.get("markers")
    return f"{head}{version}" + (f" ; {marker}" if isinstance(marker, str) and marker.strip() else "")


def specifier(constraint: str) -> str:
    """Poetry's version constraint as a PEP 440 specifier ('' for any version, or one poetry's ``||`` cannot
    narrow to)."""
    text = constraint.strip()
    if text in ("", "*") or "||" in text:
        return ""
    parts = [p.strip() for p in re.split(r",|\s+(?=[<>=!~^])", text) if p.strip()]
    return ",".join(_one(p) for p in parts)


def _one(part: str) -> str:
    if part.startswith("^"):
        return _caret(part[1:].strip())
    if part.startswith("~") and not part.startswith("~="):
        return _tilde(part[1:].strip())
    if _VERSION.match(part):
        return f"=={part}"
    return part


def _numbers(version: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", version.split("-")[0].split("+")[0])[:3]]


def _caret(version: str) -> str:
    """``^1.2.3`` → ``>=1.2.3,<2.0.0``: the left-most non-zero number may not change."""
    nums = _numbers(version) or [0]
    first = next((i for i, n in enumerate(nums) if n), len(nums) - 1)
    upper = [*nums[:first], nums[first] + 1] + [0] * (len(nums) - first - 1)
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    """``~1.2.3`` → ``>=1.2.3,<1.3.0``; ``~1`` → ``>=1,<2``."""
    nums = _numbers(version) or [0]
    keep = 1 if len(nums) == 1 else 2
    upper = [*nums[: keep - 1], nums[keep - 1] + 1] + [0] * (len(nums) - keep)
    return f">={version},<{'.'.join(map(str, upper))}"
