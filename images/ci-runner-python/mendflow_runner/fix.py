"""Fix mode (``--fix PATHS``): the repository's own lint fixers on exactly the files the trusted side names.

unpack → ``ruff check --fix`` (safe fixes only, the repo's rules or the bug-level ones, like the lint phase)
→ ``ruff format`` when the repository configures ruff (the lint phase checks formatting only then) → the
findings left in those files → ``fixes.json`` (``mendflow.contracts.LintFixes``): per asked path, its fixed
text or ``null`` when unchanged.

No dependencies step: ruff comes from PATH, as in the lint phase, and needs no venv. The repo's config decides
what ruff does, so ruff runs as untrusted code would, under ``proc.offline`` (no network, nothing writable
but the source tree). Nothing here decides what is kept: the trusted side vets every text.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from . import lint, repo_config, unpack
from .config import JobConfig
from .proc import Log, run, sandbox

OUT_NAME = "fixes.json"


class FixError(Exception):
    """The job can fix nothing: its input or a fixer is broken. Its message goes into ``fixes.json``."""


def result(files: list[dict[str, Any]] | None = None, formatted: bool = False, error: str = "") -> dict[str, Any]:
    return {"schema_version": 1, "files": files or [], "formatted": formatted, "error": error}


def run_fix(cfg: JobConfig, log: Log) -> dict[str, Any]:
    """``fixes.json``'s content for ``cfg.fix``; a broken input or fixer is said in its ``error``."""
    try:
        src = _unpacked(cfg)
    except FixError as exc:
        return result(error=str(exc))
    asked = list(dict.fromkeys(cfg.fix or []))
    refused = {p: why for p in asked if (why := _refusal(src, p))}
    fixable = [p for p in asked if p not in refused]
    before = {p: (src / p).read_bytes() for p in fixable}
    try:
        fixer = Fixer(src, cfg, log)
        remaining = fixer.fix(fixable) if fixable else []
    except (FixError, lint.LintToolError) as exc:
        return result(error=str(exc))
    files = [_entry(src, p, before.get(p), refused.get(p, ""), remaining) for p in asked]
    return result(files, formatted=fixer.formats and bool(fixable))


def _unpacked(cfg: JobConfig) -> Path:
    src = cfg.workspace / "src"
    shutil.rmtree(src, ignore_errors=True)  # a re-run in the same workspace starts clean
    cfg.workspace.mkdir(parents=True, exist_ok=True)
    try:
        unpack.unpack(unpack.fetch(cfg.source, cfg.workspace), src)
        repo_config.pyproject(src)  # a config ruff cannot honour either: say so rather than half-fix
    except repo_config.RepoConfigError as exc:
        raise FixError(str(exc)) from exc
    except (unpack.UnsafeArchiveError, FileNotFoundError, tarfile.TarError) as exc:
        raise FixError(f"cannot unpack the source snapshot: {exc}") from exc
    except OSError as exc:
        raise FixError(f"cannot fetch the source snapshot: {exc}") from exc
    return src


def _refusal(src: Path, path: str) -> str:
    """Why ``path`` is not a file the fixers may run on ('' when it is): a regular ``.py`` file of the snapshot,
    named by a normalised relative path (a link could make ruff write, and us read, outside the file asked)."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or ".." in p.parts or p.as_posix() != path or p.suffix != ".py":
        return "not a normalised relative path to a .py file"
    target = src / path
    if target.is_symlink() or not target.is_file() or not target.resolve().is_relative_to(src.resolve()):
        return "not a regular file of the snapshot"
    return ""


class Fixer:
    """Runs ruff on a list of paths inside the sandbox; each step gets what is left of the job's budget."""

    def __init__(self, src: Path, cfg: JobConfig, log: Log) -> None:
        self.src, self.cfg, self.log = src, cfg, log
        self.env = dict(os.environ)
        self.formats = repo_config.formats_with_ruff(src)
        if shutil.which("ruff") is None:
            raise FixError("ruff is not on PATH")
        self.sandboxed = sandbox(self.src)  # only the source tree writable

    def _step(self, argv: list[str], ok: tuple[int, ...]) -> None:
        r = run(self.sandboxed(argv), cwd=self.src, env=self.env, timeout=self.cfg.remaining(), log=self.log)
        if r.timed_out or r.returncode not in ok:
            raise FixError(r.describe())

    def fix(self, paths: list[str]) -> list[str]:
        """Fix ``paths`` in place; the lint findings left in them."""
        where = lint.targets(paths)
        # --no-unsafe-fixes: a repo's `unsafe-fixes = true` must not let a fix change what a test does.
        fix = ["ruff", "check", "--fix", "--no-unsafe-fixes", "--no-cache", "--quiet", *lint.ruff_rules(self.src)]
        self._step([*fix, *where], ok=(0, 1))  # 1: findings no fix removes; they are reported below
        if self.formats:
            self._step(["ruff", "format", "--no-cache", "--quiet", *where], ok=(0,))
        left = self.cfg.remaining
        found = lint.ruff_check(self.src, self.env, left(), self.log, paths, self.sandboxed)
        return found + lint.ruff_format(self.src, self.env, left(), self.log, paths, self.sandboxed)


def _entry(src: Path, path: str, before: bytes | None, refused: str, remaining: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "text": None, "remaining": [], "error": refused}
    if before is None:
        return entry
    entry["remaining"] = [f for f in remaining if f.startswith(f"{path}:")]
    after = (src / path).read_bytes()
    if after == before:
        return entry
    try:
        entry["text"] = after.decode("utf-8")
    except UnicodeDecodeError:
        entry["error"] = "not UTF-8 after fixing"
    return entry
