"""Lint healing's trusted side (``mendflow/heal/lintfix.py``): which lint failures the repo's fixers may
clear, and how a fix job's ``fixes.json`` is vetted — forged here the way the CI tests forge report.json."""

from __future__ import annotations

from pathlib import Path

from mendflow.contracts import BuildReport, BuildStatus, FailReason, FixedFile, LintFixes, is_test_file
from mendflow.heal.lintfix import LintFix, collect_fixes, lint_fixable
from mendflow.launcher.base import JobResult, JobState
from mendflow.store.file import FileStore

TEST = "tests/test_calc.py"
BEFORE = "import os\nfrom calc import add\ndef test_add( ):\n    assert add(1,2)==3\n"
FIXED = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def _lint_failure(*findings: str) -> BuildReport:
    return BuildReport(
        repo="local/r", commit_sha="a" * 40, status=BuildStatus.FAILED, fail_reason=FailReason.LINT,
        lint_errors=list(findings),
    )  # fmt: skip


def _collect(tmp_path: Path, *files: FixedFile) -> LintFix:
    store = FileStore(tmp_path / "store")
    store.put_bytes("heal/lintfix/fixes.json", LintFixes(files=list(files)).model_dump_json().encode())
    result = JobResult(state=JobState.SUCCEEDED, exit_code=0)
    return collect_fixes(store, "heal/lintfix", result, {TEST: BEFORE}, 1024 * 1024)


def test_ruff_findings_in_test_files_name_those_files() -> None:
    report = _lint_failure(
        f"{TEST}:1:8 F401 [*] `os` imported but unused", f"{TEST}:1:1 FORMAT file would be reformatted by `ruff format`"
    )
    assert lint_fixable(report, is_test_file) == [TEST]


def test_a_finding_in_source_code_is_not_fixable() -> None:
    report = _lint_failure(f"{TEST}:1:8 F401 `os` imported but unused", "calc.py:3:1 F401 `sys` imported but unused")
    assert lint_fixable(report, is_test_file) == []


def test_a_mypy_finding_is_not_fixable() -> None:
    report = _lint_failure(f"{TEST}:1:8 F401 `os` unused", f"{TEST}:4:5 mypy[arg-type] Argument 1 is wrong")
    assert lint_fixable(report, is_test_file) == []


def test_a_syntax_error_is_not_fixable() -> None:
    assert lint_fixable(_lint_failure(f"{TEST}:2:1 syntax-error Expected an expression"), is_test_file) == []


def test_a_build_that_failed_its_tests_is_not_a_lint_fix() -> None:
    report = _lint_failure(f"{TEST}:1:8 F401 `os` unused").model_copy(update={"fail_reason": FailReason.TESTS})
    assert lint_fixable(report, is_test_file) == []


def test_a_fixed_text_that_passes_the_vetting_is_kept(tmp_path: Path) -> None:
    fix = _collect(tmp_path, FixedFile(path=TEST, text=FIXED))
    assert (fix.fixed, fix.refused, fix.clean) == ({TEST: FIXED}, {}, True)


def test_a_fixed_text_for_a_path_not_asked_for_is_refused(tmp_path: Path) -> None:
    fix = _collect(tmp_path, FixedFile(path=TEST), FixedFile(path="calc.py", text="x = 1\n"))
    assert (fix.fixed, fix.refused) == ({}, {"calc.py": "not asked for"})


def test_a_fixed_text_that_is_not_python_is_refused(tmp_path: Path) -> None:
    fix = _collect(tmp_path, FixedFile(path=TEST, text="#!/bin/sh\nrm -rf ~ (\n"))
    assert fix.fixed == {} and fix.refused[TEST].startswith("not valid Python")


def test_a_fixed_text_that_weakens_the_test_is_refused(tmp_path: Path) -> None:
    weakened = "from calc import add\n\n\ndef test_add():\n    pass\n"
    fix = _collect(tmp_path, FixedFile(path=TEST, text=weakened))
    assert fix.fixed == {} and fix.refused[TEST].startswith("weakens the tests")


def test_a_fixed_text_that_changes_an_expected_value_is_refused(tmp_path: Path) -> None:
    fix = _collect(tmp_path, FixedFile(path=TEST, text=FIXED.replace("== 3", "== 4")))
    assert fix.fixed == {} and fix.refused[TEST].startswith("changes an expected value")


def test_a_path_listed_twice_is_refused(tmp_path: Path) -> None:
    fix = _collect(tmp_path, FixedFile(path=TEST, text=FIXED), FixedFile(path=TEST, text=BEFORE))
    assert (fix.fixed, fix.refused) == ({}, {TEST: "listed more than once"})


def test_fixes_that_break_the_contract_fix_nothing(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    store.put_bytes("heal/lintfix/fixes.json", b'{"files": [{"path": "tests/test_calc.py", "text": 3}]}')
    fix = collect_fixes(store, "heal/lintfix", JobResult(state=JobState.SUCCEEDED), {TEST: BEFORE}, 1024 * 1024)
    assert fix.fixed == {} and "breaks the LintFixes contract" in fix.error
