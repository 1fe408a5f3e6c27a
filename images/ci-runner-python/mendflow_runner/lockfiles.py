"""Exact pins from a poetry or pdm lockfile, for the groups a test run needs (uv cannot sync either format).

The pins are installed as requirements beside the project, so the run gets the versions the repository
locked; a package's environment marker stays with its pin, so a Windows-only package is skipped, not built.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from . import repo_config

# The lock's name for the project's own dependencies.
MAIN_GROUPS = {"poetry.lock": "main", "pdm.lock": "default"}


class LockfileError(repo_config.RepoConfigError):
    """The lockfile cannot be read: the build cannot honour it, so it must not guess."""


def lockfile(root: Path) -> Path | None:
    return next((root / name for name in MAIN_GROUPS if (root / name).is_file()), None)


def pins(path: Path) -> list[str]:
    """``name==version ; marker`` for every locked package of the main group and the test run's groups."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LockfileError(f"{path.name} is not valid TOML: {exc}") from exc
    main = MAIN_GROUPS[path.name]
    out = []
    for package in data.get("package", []):
        groups = _groups(package, main)
        chosen = [g for g in groups if g == main or repo_config.for_tests(g)]
        # an optional package belongs to an extra; the extras a test run wants come with the project itself
        if chosen and not package.get("optional") and package.get("name") and package.get("version"):
            out.append(_pin(package, chosen))
    return sorted(out)


def _groups(package: dict[str, Any], main: str) -> list[str]:
    groups = package.get("groups")
    if isinstance(groups, list):
        return [str(g) for g in groups]
    category = package.get("category")  # poetry lock format 1.x: "main" or "dev"
    return [str(category)] if category else [main]


def _pin(package: dict[str, Any], groups: list[str]) -> str:
    pin = f"{package['name']}=={package['version']}"
    marker = package.get("markers", package.get("marker"))
    if isinstance(marker, dict):  # poetry 2: one marker per group
        parts = [str(marker[g]) for g in groups if g in marker]
        marker = " or ".join(f"({m})" for m in parts) if len(parts) == len(groups) else None
    return f"{pin} ; {marker}" if isinstance(marker, str) and marker.strip() else pin
