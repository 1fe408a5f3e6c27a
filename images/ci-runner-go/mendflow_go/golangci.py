"""golangci-lint, when the repository configures it: its findings as ``path:line:col LINTER message``.

The image carries golangci-lint v2 (``images/ci-runner-go/Dockerfile``). It refuses a v1 configuration (no
``version: "2"``), which many published modules still carry: that one runs as ``golangci-lint migrate`` converts it,
the upgrade golangci-lint's migration guide gives, from a copy beside it (so its relative paths mean the same), and
an advisory says so. The converted configuration is kept in the repository's cache, keyed by the v1 file's bytes
and the golangci-lint binary, so the next job with that file runs it at once, without the refused run and the
conversion (a second of each warm job of hbollon/go-edlib 1.7.0, whose whole suite takes 0.9 s). A configuration
it cannot convert is a lint failure in golangci-lint's words, like a broken ruff config. A repository that
configures it on a host without it gets one advisory line instead of silence.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

from mendflow_runner.proc import StepResult

CONFIGS = (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")
ABSENT = "is configured but not installed where this job runs; its checks were skipped"


class GolangciError(Exception):
    """golangci-lint could not run on the repository (a bad configuration, a crash): in its own words."""


V1_REFUSED = "unsupported version of the configuration"
MIGRATED = ".golangci.mendflow-v2"
MIGRATIONS = "golangci-migrated"  # under the repository's Go cache: converted v1 configurations
KEPT_MIGRATIONS = 8  # the most recently used; a repository has one configuration per module, rarely more


def config_file(module: Path, root: Path) -> Path | None:
    """The configuration file that governs ``module``: in it or a directory above it, up to the repository root
    (where golangci-lint itself looks, in this order of names)."""
    for directory in [module, *module.parents]:
        found = next((directory / name for name in CONFIGS if (directory / name).is_file()), None)
        if found is not None or directory == root:
            return found
    return None


# golangci-lint reads its configuration with viper, whose keys match in any case, and a YAML, TOML or JSON key may
# be spelt with escapes (``"\x63ustom"``, ``"\u0063ustom"``, a backslash before a line break) or come through a
# YAML tag: any of these may name the ``custom`` section. A longer key is another one: gci's ``custom-order``
# (jarcoal/httpmock 1.4.2) had its golangci-lint lint from nothing each job, 8.5 s of a 9.3 s job.
_MAY_NAME_CUSTOM = re.compile(rb"custom(?![\w-])|\\[xu\s]|!!", re.IGNORECASE)


def loads_plugins(config: Path) -> bool:
    """Whether the configuration may load a plugin (``custom`` linters: a Go plugin's ``.so``, which could be the
    repository's). By its text, erring towards yes: a false alarm only costs the shared caches."""
    return _MAY_NAME_CUSTOM.search(config.read_bytes()) is not None


def argv(config: Path | None = None) -> list[str]:
    chosen = ["--config", str(config)] if config is not None else []
    return ["golangci-lint", "run", *chosen, "--output.json.path=stdout", "--output.text.path=stderr", "./..."]


def refuses_v1(step: StepResult) -> bool:
    """Whether golangci-lint v2 refused a v1 configuration."""
    return step.returncode == 3 and V1_REFUSED in step.stderr


def migration(config: Path) -> tuple[Path, list[str], list[Path]]:
    """Where the converted copy of ``config`` goes, the command that converts it in place, and the files the
    conversion leaves (the copy and golangci-lint's backup of it)."""
    copy = config.with_name(MIGRATED + config.suffix)
    command = ["golangci-lint", "migrate", "--skip-validation", "--config", str(copy)]
    return copy, command, [copy, config.with_name(f"{MIGRATED}.bck{config.suffix}")]


def kept_migration(cache: Path, config: Path, tool: str) -> Path:
    """Where the conversion of ``config``'s bytes by ``tool`` (``fmtcache.tool_identity``) is kept in ``cache``."""
    key = hashlib.sha256(tool.encode() + b"\0" + config.read_bytes()).hexdigest()
    return cache / MIGRATIONS / f"{key}{config.suffix}"


def use_migration(kept: Path, copy: Path) -> bool:
    """``kept``'s conversion copied to ``copy``, where golangci-lint reads it; False where none is kept."""
    try:
        shutil.copyfile(kept, copy)
    except FileNotFoundError:
        return False
    os.utime(kept)  # recently used: kept longest
    return True


def keep_migration(converted: Path, kept: Path) -> None:
    """``converted`` kept as ``kept``, written whole or not at all; the least recently used beyond
    ``KEPT_MIGRATIONS`` are dropped."""
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(f".{kept.name}-{os.getpid()}")
    shutil.copyfile(converted, partial)
    partial.replace(kept)
    others = [p for p in kept.parent.iterdir() if p != kept and not p.name.startswith(".")]  # not a partial
    for stale in sorted(others, key=_last_used, reverse=True)[KEPT_MIGRATIONS - 1 :]:
        stale.unlink(missing_ok=True)


def _last_used(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # another job of the repository's dropped it meanwhile
        return 0.0


def findings(step: StepResult, module: Path, root: Path) -> list[str]:
    """The findings of a ``golangci-lint run`` (exit 0: none, 1: some); anything else is the tool's failure."""
    if step.timed_out or step.returncode not in (0, 1):
        raise GolangciError(step.last_stderr_line() or f"exited {step.returncode}")
    try:
        report = json.loads(step.stdout.strip().splitlines()[0] if step.stdout.strip() else "{}")
    except json.JSONDecodeError as exc:
        raise GolangciError(f"unreadable JSON report: {exc}") from None
    out = []
    for issue in report.get("Issues") or []:
        pos = issue.get("Pos") or {}
        path = (module / str(pos.get("Filename", ""))).resolve()
        if not path.is_relative_to(root.resolve()):
            continue
        rel = path.relative_to(root.resolve()).as_posix()
        text = " ".join(str(issue.get("Text", "")).split())
        out.append(f"{rel}:{int(pos.get('Line', 0))}:{int(pos.get('Column', 0))} {issue.get('FromLinter', '?')} {text}")
    if step.returncode == 1 and not out and not report:
        raise GolangciError(step.last_stderr_line() or "exited 1 without a report")
    return out
