"""A Node project as its own CI sees it: its ``package.json``, the package manager its lockfile names, and the
tools its ``node_modules/.bin`` holds (the repository's own, at the versions it pins; the image brings none)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
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
# npm asks the registry again for everything a warm cache holds: each tarball a lockfile pins by its integrity
# (330 requests for the TypeScript example, 1.4 s through the egress proxy), and the pinned pnpm or yarn release
# ``npm exec`` runs. A cached one is the one they name. Without a lockfile the manifest's ranges resolve against
# the registry as of today, so it is asked. pnpm and yarn ask nothing for what their stores hold.
_PREFER_CACHE = ("--prefer-offline",)
# The pnpm or yarn a project gets when its ``packageManager`` field names no version: the newest of the line that
# writes its lockfile. They come from the npm registry through ``npm exec`` (npm checks their integrity), not
# through corepack: its signature check fails against a registry mirror that serves no signatures.
PNPM_FOR_LOCKFILE = {"5": "7.33.7", "6": "8.15.9", "9": "9.15.9"}
YARN_CLASSIC, YARN_BERRY = "1.22.22", "4.18.1"
_YARN_PACKAGES = {True: "@yarnpkg/cli-dist", False: "yarn"}  # by yarn_berry
_RC_VALUE = re.compile(r"^(?P<key>yarnPath|nodeLinker):\s*[\"']?(?P<value>[^\"'#\s]+)", re.MULTILINE)
_LOCKFILE_VERSION = re.compile(r"^lockfileVersion:\s*'?(?P<major>\d+)", re.MULTILINE)
_SCRIPT_WORDS = re.compile(r"[\s;&|()]+")  # a script's words, split at the shell's blanks and operators
DEPENDENCY_FIELDS = ("dependencies", "devDependencies")
TYPESCRIPT_SOURCES = (".ts", ".mts", ".cts")
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")  # types of JavaScript: nothing to compile
# Type tests of a JavaScript package's declarations: tsd's and tstyche's, each checked by its tool with options of
# its own (tsd's esModuleInterop: @pinojs/redact 0.4.0's index.test-d.ts fails a bare tsc of its tsconfig).
_TYPE_TESTS = tuple(f"{kind}{ext}" for kind in (".test-d", ".tst") for ext in TYPESCRIPT_SOURCES)
_STANDARD_STYLES = ("standard", "semistandard", "ts-standard")  # standard-engine linters: one output format


class ProjectError(ValueError):
    """The repository is not a Node project mendflow can build (its message says what to change)."""


@dataclass(frozen=True)
class Project:
    root: Path
    manifest: dict[str, Any]
    manager: str  # npm | pnpm | yarn
    lockfile: str | None
    # Where the installed tree really is, when the offline steps see it at root/node_modules (a kept install
    # bound there read-only: ``installed.KeptInstall.lend``), not in it.
    installed: Path | None = None

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
        project = cls(root, manifest, manager, lockfile)
        if project.yarn_berry and project.yarnrc.get("nodeLinker", "pnp") == "pnp":
            raise ProjectError(
                "Yarn Plug'n'Play projects are not supported yet: mendflow runs the tools in node_modules "
                "(`nodeLinker: node-modules` in .yarnrc.yml)"
            )
        return project

    def install_argv(self) -> list[str]:
        """The frozen install the ecosystem's CI runs: the lockfile is the authority, never rewritten. With no
        lockfile (a published tarball), npm resolves the manifest's ranges and writes no lockfile."""
        if self.manager == "pnpm":
            return [*self._manager_argv(), "install", *(["--frozen-lockfile"] if self.lockfile else [])]
        if self.manager == "yarn":
            frozen = "--immutable" if self.yarn_berry else "--frozen-lockfile"
            return [*self._manager_argv(), "install", *([frozen] if self.lockfile else [])]
        if self.lockfile:
            return ["npm", "ci", *_QUIET, *_PREFER_CACHE]
        return ["npm", "install", "--no-package-lock", *_QUIET]

    def _manager_argv(self) -> list[str]:
        """How to run the project's pnpm or yarn: a checked-in yarn release (``yarnPath``) as it is, else the
        version its ``packageManager`` field pins, else the line its lockfile was written by."""
        if self.manager == "yarn" and (release := self.yarnrc.get("yarnPath")):
            return ["node", release]
        package = "pnpm" if self.manager == "pnpm" else _YARN_PACKAGES[self.yarn_berry]
        pinned = f"--package={package}@{self.manager_version}"
        return ["npm", "exec", "--yes", *_PREFER_CACHE, pinned, "--", self.manager]

    @property
    def manager_version(self) -> str:
        declared, _, version = str(self.manifest.get("packageManager") or "").partition("@")
        if declared == self.manager and version:
            return version.split("+", 1)[0]  # "pnpm@9.15.0+sha512.…": the hash is corepack's
        if self.manager == "yarn":
            return YARN_BERRY if self.yarn_berry else YARN_CLASSIC
        lock = self.root / "pnpm-lock.yaml"
        text = lock.read_text(encoding="utf-8", errors="replace")[:500] if lock.is_file() else ""
        major = match["major"] if (match := _LOCKFILE_VERSION.search(text)) else "9"
        return PNPM_FOR_LOCKFILE.get(major, PNPM_FOR_LOCKFILE["9"])

    @property
    def yarnrc(self) -> dict[str, str]:
        """``yarnPath`` and ``nodeLinker`` from ``.yarnrc.yml`` (the two keys the runner reads)."""
        rc = self.root / ".yarnrc.yml"
        text = rc.read_text(encoding="utf-8", errors="replace") if rc.is_file() else ""
        return {m["key"]: m["value"] for m in _RC_VALUE.finditer(text)}

    def script_argv(self, name: str, hooks: bool = True) -> list[str]:
        """A package script, run as every manager runs one (``sh -c`` with ``node_modules/.bin`` on PATH), with its
        ``pre`` and ``post`` scripts or (not ``hooks``) without them."""
        return ["npm", "run", *([] if hooks else ["--ignore-scripts"]), name]

    @property
    def yarn_berry(self) -> bool:
        """Yarn 2+: its lockfile has a ``__metadata`` entry (classic's starts ``# yarn lockfile v1``), or, with no
        lockfile, its ``packageManager`` field says ``yarn@2`` or later."""
        if self.manager != "yarn":
            return False
        lock = self.root / "yarn.lock"
        if lock.is_file():
            return "__metadata:" in lock.read_text(encoding="utf-8", errors="replace")[:2000]
        declared = str(self.manifest.get("packageManager") or "")
        return declared.startswith("yarn@") and not declared.startswith("yarn@1.")

    def bin(self, name: str) -> Path | None:
        """The repository's own installed tool (``node_modules/.bin/NAME``), or None."""
        return self.root / "node_modules" / ".bin" / name if (self._tree / ".bin" / name).exists() else None

    def has_package(self, name: str) -> bool:
        return (self._tree / name / MANIFEST).is_file()

    def package_major(self, name: str) -> int | None:
        """The major version of the installed package ``name`` (None if it is not installed or says none)."""
        version = self.package_version(name)
        return version[0] if version else None

    def package_version(self, name: str) -> tuple[int, int] | None:
        """The major and minor version of the installed package ``name`` (None if it is not installed or says
        none)."""
        try:
            manifest = json.loads((self._tree / name / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        found = re.match(r"(\d+)\.(\d+)", str(manifest.get("version", ""))) if isinstance(manifest, dict) else None
        return (int(found[1]), int(found[2])) if found else None

    @property
    def _tree(self) -> Path:
        return self.installed or self.root / "node_modules"

    @property
    def scripts(self) -> dict[str, str]:
        scripts = self.manifest.get("scripts")
        return {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else {}

    @property
    def tsconfig(self) -> Path | None:
        path = self.root / "tsconfig.json"
        return path if path.is_file() else None

    def depends_on(self, name: str) -> bool:
        """``name`` is the package's own dependency or devDependency, not one another package brought along."""
        return any(isinstance(deps := self.manifest.get(f), dict) and name in deps for f in DEPENDENCY_FIELDS)

    def script_runs(self, tool: str) -> bool:
        """Some package script runs ``tool`` (``tsc -p test/types``, ``npx tsc``, ``node_modules/.bin/tsc``)."""
        words = (w for script in self.scripts.values() for w in _SCRIPT_WORDS.split(script))
        return any(PurePosixPath(word).name == tool for word in words)

    @property
    def has_typescript_sources(self) -> bool:
        """A ``.ts``/``.mts``/``.cts`` file that is not a declaration file nor a type test, outside node_modules
        and hidden directories (``.git``)."""
        for _, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if d != "node_modules" and not d.startswith(".")]
            if any(f.endswith(TYPESCRIPT_SOURCES) and not f.endswith(_DECLARATIONS + _TYPE_TESTS) for f in files):
                return True
        return False

    @property
    def configures_eslint(self) -> bool:
        return any((self.root / name).is_file() for name in ESLINT_CONFIGS) or "eslintConfig" in self.manifest

    @property
    def linter(self) -> str | None:
        """The tool the repository lints with: eslint where it configures it, else xo or a JavaScript Standard
        Style linter (standard, semistandard, ts-standard), eslint with a configuration of its own that needs none
        in the tree, that it depends on and a script runs; None for neither."""
        if self.configures_eslint:
            return "eslint"
        own = ("xo", *_STANDARD_STYLES)
        return next((tool for tool in own if self.depends_on(tool) and self.script_runs(tool)), None)


def _declared(manifest: dict[str, Any]) -> str:
    """``packageManager: "pnpm@9.1.0"`` names the manager when no lockfile does; npm otherwise."""
    declared = str(manifest.get("packageManager") or "npm").split("@", 1)[0]
    return declared if declared in ("npm", "pnpm", "yarn", "bun") else "npm"
