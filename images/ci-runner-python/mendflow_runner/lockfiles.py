"""Exact pins from a poetry, pdm or pipenv lockfile, for the groups a test run needs (uv cannot sync these).

The pins are installed as requirements beside the project, so the run gets the versions the repository
locked; a package's environment marker stays with its pin, so a Windows-only package is skipped, not built.
A lock that does not say which group needs a package (pdm's ``cross_platform`` strategy without
``inherit_metadata``) carries no markers either: it pins every group's packages for every Python, so its pins
only constrain what the project's own requirements resolve to (cattrs 24.1's lock pins ``backports-zoneinfo``,
which only Python < 3.9 needs and which no longer builds on 3.11).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import repo_config

# The lock's name for the project's own dependencies.
MAIN_GROUPS = {"poetry.lock": "main", "pdm.lock": "default", "Pipfile.lock": "default"}
PIPENV_GROUPS = ("default", "develop")  # what ``pipenv sync --dev`` installs


class LockfileError(repo_config.RepoConfigError):
    """The lockfile cannot be read: the build cannot honour it, so it must not guess."""


def lockfile(root: Path) -> Path | None:
    return next((root / name for name in MAIN_GROUPS if (root / name).is_file()), None)


@dataclass(frozen=True)
class Locked:
    pins: list[str]
    by_group: bool  # False: the pins are constraints (``uv pip install -c``), not requirements

    @property
    def option(self) -> str:
        return "-r" if self.by_group else "-c"


def read(path: Path) -> Locked:
    """The lock's pins, and whether it says which group needs each package."""
    if path.name == "Pipfile.lock":
        return Locked(_pipenv_pins(path), by_group=True)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LockfileError(f"{path.name} is not valid TOML: {exc}") from exc
    packages = data.get("package", [])
    if any("groups" in p or "category" in p for p in packages):
        return Locked(_pins(packages, MAIN_GROUPS[path.name]), by_group=True)
    return Locked(sorted(f"{p['name']}=={p['version']}" for p in packages if p.get("name") and p.get("version")), False)


def _pipenv_pins(path: Path) -> list[str]:
    """``name[extras]==version ; markers`` for each package of Pipfile.lock's default and develop sections; an
    entry with no version (the project itself, a git checkout) is left out."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LockfileError(f"{path.name} is not valid JSON: {exc}") from exc
    out = set()
    for group in PIPENV_GROUPS:
        entries = data.get(group) if isinstance(data, dict) else None
        for name, entry in entries.items() if isinstance(entries, dict) else ():
            pinned = isinstance(entry, dict) and str(entry.get("version", "")).startswith("==")
            if pinned and (pin := repo_config.pipfile_requirement(name, entry)):
                out.add(pin)
    return sorted(out)


def _pins(packages: list[dict[str, Any]], main: str) -> list[str]:
    """``name==version ; marker`` for every locked package of the main group and the test run's groups."""
    out = []
    for package in packages:
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
