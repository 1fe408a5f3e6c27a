"""What standard prints, read into findings: its real output (standard 17.1.2, `standard --verbose`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_node import checks
from mendflow_runner.proc import StepResult

ROOT = Path("/job/src")
PRINTED = """\
  /job/src/a.js:1:1: Unexpected var, use let or const instead. (no-var) (warning)
  /job/src/a.js:1:5: 'x' is assigned a value but never used. (no-unused-vars)
  /job/src/lib/b.js:1:11: Strings must use singlequote. (quotes)
  /job/src/c.js:2:1: Parsing error: Unexpected token (null)
"""
SAID = "standard: Use JavaScript Standard Style (https://standardjs.com)\n"


def _standard(returncode: int, stdout: str, stderr: str = SAID) -> StepResult:
    return StepResult(["standard", "--verbose"], returncode, stdout, stderr, 1.0)


def test_standards_findings_are_errors_but_those_it_marks_as_warnings() -> None:
    errors, warnings = checks.standard_findings(_standard(1, PRINTED), ROOT)
    assert errors[:2] == [
        "a.js:1:5 no-unused-vars 'x' is assigned a value but never used.",
        "lib/b.js:1:11 quotes Strings must use singlequote.",
    ]
    assert warnings == ["a.js:1:1 no-var Unexpected var, use let or const instead."]


def test_a_file_standard_cannot_parse_is_a_parse_error() -> None:
    errors, _ = checks.standard_findings(_standard(1, PRINTED), ROOT)
    assert errors[-1] == "c.js:2:1 parse-error Parsing error: Unexpected token"


def test_standard_failing_without_findings_could_not_lint() -> None:
    with pytest.raises(checks.LintError, match="Cannot find module 'eslint-config-standard'"):
        checks.standard_findings(_standard(1, "", "Error: Cannot find module 'eslint-config-standard'\n"), ROOT)
