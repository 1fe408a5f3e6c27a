"""What ``tsc --noEmit``, eslint and standard print, read into ``path:line:col CODE message`` findings,
repository-relative."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mendflow_runner.proc import StepResult

from .results import relative

# tsc --pretty false: "src/a.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."
_TSC = re.compile(r"^(?P<path>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): error (?P<code>TS\d+): (?P<message>.*)$")
_TSC_GLOBAL = re.compile(r"^error (?P<code>TS\d+): (?P<message>.*)$")
NO_INPUTS = "TS18003"  # "No inputs were found in config file": a published package without its sources


# standard --verbose: "  /job/src/a.js:1:5: 'x' is assigned a value but never used. (no-unused-vars)", then
# " (warning)" for a rule its next version makes an error; "(null)" for a file it could not parse.
_STANDARD = re.compile(
    r"^\s+(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<message>.*?)"
    r" \((?P<rule>[^()\s]+)\)(?P<warning> \(warning\))?$"
)


class LintError(ValueError):
    """The linter could not lint (a configuration it cannot load): the message says its words."""


def tsc_errors(step: StepResult, root: Path) -> list[str]:
    found = []
    for line in (step.stdout + step.stderr).splitlines():
        if match := _TSC.match(line.strip()):
            path = relative(str(root / match["path"]), root)
            found.append(f"{path}:{match['line']}:{match['col']} {match['code']} {match['message']}")
        elif match := _TSC_GLOBAL.match(line.strip()):
            found.append(f"tsconfig.json:0:0 {match['code']} {match['message']}")
    return found


def eslint_findings(step: StepResult, root: Path) -> tuple[list[str], list[str]]:
    """(errors, warnings) from ``eslint --format json``: the repository's configuration decides which is which."""
    if step.returncode not in (0, 1):
        raise LintError(step.last_stderr_line() or f"eslint exited {step.returncode}")
    try:
        files = json.loads(step.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise LintError(f"eslint's JSON output could not be read: {exc}") from exc
    errors: list[str] = []
    warnings: list[str] = []
    for file in files if isinstance(files, list) else []:
        path = relative(str(file.get("filePath") or ""), root)
        for message in file.get("messages") or []:
            rule = message.get("ruleId") or ("parse-error" if message.get("fatal") else "eslint")
            text = " ".join(str(message.get("message") or "").split())
            finding = f"{path}:{message.get('line') or 0}:{message.get('column') or 0} {rule} {text}"
            (errors if message.get("severity") == 2 else warnings).append(finding)
    return errors, warnings


def standard_findings(step: StepResult, root: Path) -> tuple[list[str], list[str]]:
    """(errors, warnings) from ``standard --verbose`` (semistandard, ts-standard: the same engine, the same
    words): every finding an error but those it marks as warnings."""
    errors: list[str] = []
    warnings: list[str] = []
    for line in step.stdout.splitlines():
        if found := _STANDARD.match(line):
            rule = "parse-error" if found["rule"] == "null" else found["rule"]
            finding = f"{relative(found['path'], root)}:{found['line']}:{found['col']} {rule} {found['message']}"
            (warnings if found["warning"] else errors).append(finding)
    if step.returncode not in (0, 1) or (step.returncode == 1 and not errors):
        raise LintError(step.last_stderr_line() or f"exited {step.returncode}")
    return errors, warnings
