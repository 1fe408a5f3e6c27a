"""golangci-lint, when the repository configures it: its findings as ``path:line:col LINTER message``.

The image carries golangci-lint v2 (``images/ci-runner-go/Dockerfile``); a repository's v1 configuration (no
``version: "2"``) is refused by it with its own words, a lint failure to fix like a broken ruff config. A repository
that configures it on a host without it gets one advisory line instead of silence.
"""

from __future__ import annotations

import json
from pathlib import Path

from mendflow_runner.proc import StepResult

CONFIGS = (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")
ABSENT = "is configured but not installed where this job runs; its checks were skipped"


class GolangciError(Exception):
    """golangci-lint could not run on the repository (a bad configuration, a crash): in its own words."""


def configured(module: Path, root: Path) -> bool:
    """Whether a configuration file governs ``module``: in it or a directory above it, up to the repository root
    (where golangci-lint itself looks)."""
    for directory in [module, *module.parents]:
        if any((directory / name).is_file() for name in CONFIGS):
            return True
        if directory == root:
            return False
    return False


def argv() -> list[str]:
    return ["golangci-lint", "run", "--output.json.path=stdout", "--output.text.path=stderr", "./..."]


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
