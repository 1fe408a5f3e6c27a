"""A Node project as its own CI sees it: its ``package.json``, the package manager its lockfile names, and the
tools its ``node_modules/.bin`` holds (the repository's own, at the versions it pins; the image brings none)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "package.json"
# Lockfile → package manager, in the order a repository with several is read.
LOCKFILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
)
ESLINT_CONFIGS = tuple(
    f"{stem}{ext}"
    for stem in ("eslint.config", ".eslintrc")
    for ext in (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".json", ".yaml", ".yml", "")
)
_QUIET = ("--no-audit", "--no-fund")


class ProjectError(ValueError):
    """The repository is not a Node project mendflow can build (its message says what to change)."""


@dataclass(frozen=True)
class Project:
    root: Path
    manifest: dict[str, Any]
    manager: str  # npm | pnpm | yarn
    lockfile: str | None

    @classmethod
    def read(cls, root: Path) -> Project:
        path = root / MANIFEST
        if not path.is_file():
            raise ProjectError("no package.json at the repository's root: this is not a Node project")
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProjectError(f"package.json is not valid JSON: {exc}") from exc
        if not isinstance(manifest, dict):
            raise ProjectError("package.json is not a JSON object")
        lockfile, manager = next(((f, m) for f, m in LOCKFILES if (root / f).is_file()), (None, _declared(manifest)))
        if manager == "bun":
            raise ProjectError("bun projects are not supported yet (mendflow builds npm, pnpm and yarn projects)")
        return cls(root, manifest, manager, lockfile)

    def install_argv(self) -> list[str]:
        """The frozen install the ecosystem's CI runs: the lockfile is the authority, never rewritten. With no
        lockfile (a published tarball), npm resolves the manifest's ranges and writes no lockfile."""
        if self.manager == "pnpm":
            return ["corepack", "pnpm", "install", *(["--frozen-lockfile"] if self.lockfile else [])]
        if self.manager == "yarn":
            frozen = "--immutable" if self.yarn_berry else "--frozen-lockfile"
            return ["corepack", "yarn", "install", *([frozen] if self.lockfile else [])]
        if self.lockfile:
            return ["npm", "ci", *_QUIET]
        return ["npm", "install", "--no-package-lock", *_QUIET]

    def script_argv(self, name: str) -> list[str]:
        return ["npm", "run", name] if self.manager == "npm" else ["corepack", self.manager, "run", name]

    @property
    def yarn_berry(self) -> bool:
        """Yarn 2+ (its lockfile is YAML with a ``__metadata`` entry; classic's starts ``# yarn lockfile v1``)."""
        lock = self.root / "yarn.lock"
        return lock.is_file() and "__metadata:" in lock.read_text(encoding="utf-8", errors="replace")[:2000]

    def bin(self, name: str) -> Path | None:
        """The repository's own installed tool (``node_modules/.bin/NAME``), or None."""
        path = self.root / "node_modules" / ".bin" / name
        return path if path.exists() else None

    def has_package(self, name: str) -> bool:
        return (self.root / "node_modules" / name / MANIFEST).is_file()

    @property
    def scripts(self) -> dict[str, str]:
        scripts = self.manifest.get("scripts")
        return {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else {}

    @property
    def tsconfig(self) -> Path | None:
        path = self.root / "tsconfig.json"
        return path if path.is_file() else None

    @property
    def configures_eslint(self) -> bool:
        return any((self.root / name).is_file() for name in ESLINT_CONFIGS) or "eslintConfig" in self.manifest


def _declared(manifest: dict[str, Any]) -> str:
    """``packageManager: "pnpm@9.1.0"`` names the manager when no lockfile does; npm otherwise."""
    declared = str(manifest.get("packageManager") or "npm").split("@", 1)[0]
    return declared if declared in ("npm", "pnpm", "yarn", "bun") else "npm"
