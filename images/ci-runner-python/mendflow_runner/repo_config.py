"""Read what a repository declares: pyproject tables, pytest markers, mypy and coverage configuration."""

from __future__ import annotations

import configparser
import shlex
import tomllib
from pathlib import Path
from typing import Any

_INI_PYTEST = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


class RepoConfigError(Exception):
    """The repository's own configuration cannot be read: the build cannot honour it, so it must not guess."""


def pyproject(root: Path) -> dict[str, Any]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RepoConfigError(f"pyproject.toml is not valid TOML: {exc}") from exc


def _ini(path: Path) -> configparser.ConfigParser | None:
    if not path.is_file():
        return None
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return cp


def _marker_names(entries: list[str]) -> set[str]:
    # "fast: quick tests" or "fast(arg): ..." → "fast"
    return {e.split(":")[0].split("(")[0].strip() for e in entries if e.strip()}


def declared_markers(root: Path) -> set[str]:
    tool = pyproject(root).get("tool", {})
    names: set[str] = set()
    for table in (tool.get("pytest", {}).get("ini_options", {}), tool.get("pytest", {})):
        markers = table.get("markers") if isinstance(table, dict) else None
        if isinstance(markers, list):
            names |= _marker_names([str(m) for m in markers])
    for filename, section in _INI_PYTEST:
        cp = _ini(root / filename)
        if cp is not None and cp.has_option(section, "markers"):
            names |= _marker_names(cp.get(section, "markers").splitlines())
    return names


def pytest_addopts(root: Path) -> list[str]:
    """The ``addopts`` of the file pytest takes its configuration from, in pytest's own order of precedence."""
    for name in ("pytest.ini", ".pytest.ini"):
        cp = _ini(root / name)
        if cp is not None:
            return shlex.split(cp.get("pytest", "addopts", fallback=""))
    ini = pyproject(root).get("tool", {}).get("pytest", {}).get("ini_options")
    if isinstance(ini, dict):
        value = ini.get("addopts", "")
        return [str(v) for v in value] if isinstance(value, list) else shlex.split(str(value))
    for filename, section in _INI_PYTEST[1:]:
        cp = _ini(root / filename)
        if cp is not None and cp.has_section(section):
            return shlex.split(cp.get(section, "addopts", fallback=""))
    return []


def mypy_config(root: Path) -> dict[str, str] | None:
    """The repo's mypy options (only ``files`` matters to us), or None when it does not configure mypy."""
    tool = pyproject(root).get("tool", {})
    if "mypy" in tool:
        files = tool["mypy"].get("files", "")
        return {"files": ",".join(files) if isinstance(files, list) else str(files)}
    for filename in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        cp = _ini(root / filename)
        if cp is not None and cp.has_section("mypy"):
            return {"files": cp.get("mypy", "files", fallback="")}
    return None


def has_coverage_config(root: Path) -> bool:
    if "coverage" in pyproject(root).get("tool", {}) or (root / ".coveragerc").is_file():
        return True
    for filename in ("setup.cfg", "tox.ini"):
        cp = _ini(root / filename)
        if cp is not None and any(s.startswith("coverage:") for s in cp.sections()):
            return True
    return False


def coverage_run_options(root: Path) -> set[str]:
    """The option names of coverage.py's ``[run]`` section, from the file it takes its configuration from
    (its own order: ``.coveragerc``, ``setup.cfg``, ``tox.ini``, ``pyproject.toml``)."""
    rc = _ini(root / ".coveragerc")
    if rc is not None:  # coverage.py reads an existing .coveragerc and nothing else
        return set(rc.options("run")) if rc.has_section("run") else set()
    for filename in ("setup.cfg", "tox.ini"):
        cp = _ini(root / filename)
        if cp is not None and any(s.startswith("coverage:") for s in cp.sections()):
            return set(cp.options("coverage:run")) if cp.has_section("coverage:run") else set()
    run = pyproject(root).get("tool", {}).get("coverage", {}).get("run", {})
    return set(run) if isinstance(run, dict) else set()


def coverage_chooses_files(root: Path) -> bool:
    """Whether the repo's coverage configuration says which files are measured (``source`` or ``include``)."""
    return bool(coverage_run_options(root) & {"source", "include", "source_pkgs"})


def is_installable(root: Path) -> bool:
    return "project" in pyproject(root) or (root / "setup.py").is_file()


def wanted_extras(root: Path) -> list[str]:
    extras = pyproject(root).get("project", {}).get("optional-dependencies", {})
    return [e for e in ("test", "tests", "dev") if e in extras]


def has_ruff_config(root: Path) -> bool:
    """Whether the team chose its ruff rules and format (else the runner holds it to bug-level rules only)."""
    if (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        return True
    return "ruff" in pyproject(root).get("tool", {})
