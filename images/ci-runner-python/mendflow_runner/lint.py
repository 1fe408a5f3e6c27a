"""Lint: ruff check, ruff format --check, and mypy when the repository configures it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from . import repo_config
from .proc import Log, StepResult, Wrap, as_is, run

_MYPY_LINE = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? error: (?P<msg>.*?)(?:\s+\[(?P<code>[\w-]+)\])?$"
)


# "path:1:3: unformatted: File would be reformatted" (ruff >= 0.9, concise) or "Would reformat: path".
_FORMAT_LINE = re.compile(r"^(?:Would reformat: (?P<old>.+)|(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): unformatted:.*)$")


class LintToolError(Exception):
    """A linter crashed or printed something we cannot read (not a lint finding)."""

    @classmethod
    def of(cls, step: StepResult) -> LintToolError:
        """Why ``step`` failed, the same in every job: its first error line (mypy prints notes after it), not
        the command line, which names the job's workspace (runner.log has it). Compared with the parent
        commit's like any finding, so a tool that fails the same way there is not new."""
        lines = [line.strip() for text in (step.stderr, step.stdout) for line in text.splitlines() if line.strip()]
        first = next((line for line in lines if "error:" in line), step.last_stderr_line())
        how = "timed out" if step.timed_out else f"exited {step.returncode}"
        return cls(f"{how}: {first}")


def _rel(path: str, root: Path) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix() if p.is_absolute() else p.as_posix()
    except ValueError:
        return p.as_posix()


# ruff's long-standing defaults: syntax errors, undefined names, unused imports and the like. Newer ruff
# releases enable far more by default, which would fail every repository that never chose ruff rules.
UNCONFIGURED_RULES = "E4,E7,E9,F"


def ruff_rules(root: Path) -> list[str]:
    """The rules ruff holds ``root`` to: the repository's own when it chose them, else the bug-level ones."""
    return [] if repo_config.has_ruff_config(root) else ["--select", UNCONFIGURED_RULES]


def targets(paths: list[str] | None) -> list[str]:
    """What ruff is run on: the whole tree, or exactly ``paths`` — still minus what the repo's config excludes
    (ruff checks a path named on its command line even when excluded, unless told ``--force-exclude``)."""
    return ["."] if paths is None else ["--force-exclude", "--", *paths]


def ruff_for(venv: Path) -> str:
    """The ruff the repository's CI runs: the one its dependencies or pre-commit pin installed into its venv
    (``deps``), else the image's."""
    pinned = venv / "bin" / "ruff"
    return str(pinned) if pinned.exists() else "ruff"


def ruff_check(
    root: Path,
    env: dict[str, str],
    timeout: float,
    log: Log,
    paths: list[str] | None = None,
    wrap: Wrap = as_is,
    ruff: str = "ruff",
) -> list[str]:
    base, where = [ruff, "check", "--no-cache", *ruff_rules(root)], targets(paths)
    r = run(wrap([*base, "--output-format", "json", *where]), cwd=root, env=env, timeout=timeout, log=log)
    if r.returncode == 2 and "--output-format" in r.stderr:  # ruff before 0.0.291 named it --format
        r = run(wrap([*base, "--format", "json", *where]), cwd=root, env=env, timeout=timeout, log=log)
    if r.timed_out or r.returncode not in (0, 1):
        raise LintToolError.of(r)
    try:
        findings = json.loads(r.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise LintToolError(f"ruff check printed no JSON: {exc}") from exc
    out = []
    for f in findings:
        loc = f.get("location") or {}
        code = f.get("code") or "syntax-error"
        out.append(f"{_rel(f['filename'], root)}:{loc.get('row', 0)}:{loc.get('column', 0)} {code} {f['message']}")
    return out


def ruff_format(
    root: Path,
    env: dict[str, str],
    timeout: float,
    log: Log,
    paths: list[str] | None = None,
    wrap: Wrap = as_is,
    ruff: str = "ruff",
) -> list[str]:
    """One lint error per file ``ruff format`` would change; only for repos that format with ruff (formatting
    is a team's decision, not a defect)."""
    if not repo_config.formats_with_ruff(root):
        return []
    base = [ruff, "format", "--check", "--no-cache"]
    where = targets(paths)
    r = run(wrap([*base, "--output-format", "concise", *where]), cwd=root, env=env, timeout=timeout, log=log)
    if r.returncode == 2 and "--output-format" in r.stderr:  # ruff before 0.9 has no formats here
        r = run(wrap([*base, *where]), cwd=root, env=env, timeout=timeout, log=log)
    if r.timed_out or r.returncode not in (0, 1):
        # ruff format exits 2 on files it cannot parse; ruff check already reports those.
        if r.returncode == 2 and "Failed to parse" in r.stderr:
            return []
        raise LintToolError.of(r)
    found: dict[str, str] = {}
    for line in r.stdout.splitlines():
        m = _FORMAT_LINE.match(line)
        if m:
            found.setdefault(_rel(m["old"] or m["path"], root), f"{m['line'] or 1}:{m['col'] or 1}")
    return [f"{path}:{where} FORMAT file would be reformatted by `ruff format`" for path, where in found.items()]


def mypy(
    root: Path, python: str, env: dict[str, str], timeout: Callable[[], float], log: Log, wrap: Wrap = as_is
) -> list[str]:
    cfg = repo_config.mypy_config(root)
    if cfg is None:
        return []
    targets = [] if cfg.get("files") else ["."]
    argv = [python, "-m", "mypy", "--show-column-numbers", "--no-error-summary", "--no-pretty", *targets]
    r = run(
        wrap(argv),
        cwd=root,
        env={**env, "MYPY_CACHE_DIR": str(root.parent / ".mypy_cache")},
        timeout=timeout(),
        log=log,
    )
    if r.timed_out or r.returncode not in (0, 1):
        raise LintToolError.of(r)
    out = []
    for line in r.stdout.splitlines():
        m = _MYPY_LINE.match(line.strip())
        if m:
            code = f"mypy[{m['code']}]" if m["code"] else "mypy"
            out.append(f"{_rel(m['path'], root)}:{m['line']}:{m['col'] or 0} {code} {m['msg']}")
    if r.returncode == 1 and not out:  # "No module named mypy", or output it cannot read: never a clean pass
        raise LintToolError.of(r)
    return out
