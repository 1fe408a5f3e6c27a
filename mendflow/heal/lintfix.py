"""Deterministic lint healing with the repository's own fixers (issue #15).

A build that failed at lint, with every finding a ruff finding in a file healing may touch, is fixable:
``lint_fixable`` names the files. ``fix_lint`` runs the repo's ``ruff check --fix`` (safe fixes) and, when the
repo configures ruff, ``ruff format`` on exactly those files in a CI job (the CI runner's fix mode): the repo's
config decides what ruff does, so it runs where untrusted code runs, sandboxed, offline, without credentials.
The texts it returns are untrusted data: parsed with ``LintFixes`` and vetted (``vet_fixes``) — only the paths
asked for, size-capped, valid Python, no test weakened and no expected value changed — before any is used.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pygit2
from pydantic import ValidationError

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    Checklist,
    ChecklistEntry,
    CheckStatus,
    ErrorCategory,
    FailReason,
    HealAttempt,
    HealMethod,
    LintFixes,
    Scope,
)
from mendflow.edits import checked_path, diff_size, unified_diff
from mendflow.errors import ArtefactNotFoundError, HealError, TooLargeError
from mendflow.findings import parse as parse_finding
from mendflow.gate import changed_expectations, weakening
from mendflow.heal.healer import MAX_FILE_BYTES
from mendflow.jobcode import RUNNER_COMMAND, RUNNER_IMAGE
from mendflow.launcher.base import JobResult, JobSpec, Launcher
from mendflow.settings import Settings
from mendflow.source import Source
from mendflow.store.base import ArtefactStore

FIXES = "fixes.json"
OUTPUTS = ("runner.log", FIXES)  # fixes.json last: its arrival means the job is over
FIX_TIMEOUT_SEC = 300  # ruff on a few files takes seconds; unpacking a large snapshot takes the rest
MAX_REFUSALS = 50  # refusals kept for a job's forged extra paths: a hostile job must not grow the audit
MAX_REMAINING = 50  # findings kept per file
TEXT_CUT = 300  # characters of one untrusted message kept

# A ruff rule code (F401, I001, UP006, RUF100, PLR0913); mypy's "mypy[...]", "syntax-error" and a tool error
# ("ruff-check-error") are not, and no fixer removes them.
_RUFF_CODE = re.compile(r"^[A-Z]{1,6}[0-9]{1,4}$")
_NOT_FIXABLE = {"E999"}  # a syntax error, as ruff before 0.5 names it
_FORMAT = "FORMAT"  # the runner's finding for a file `ruff format` would change


@dataclass(frozen=True)
class LintFix:
    """What the fix job returned, vetted. ``fixed`` is all the caller may use; the rest is for the audit."""

    fixed: dict[str, str] = field(default_factory=dict)  # path → fixed text
    refused: dict[str, str] = field(default_factory=dict)  # path → why its text (or the path) was not taken
    remaining: dict[str, list[str]] = field(default_factory=dict)  # the job's word: findings left per asked path
    error: str = ""  # why nothing was fixed (the job failed, its output broke the contract)
    artefacts: str = ""  # store prefix of the job's fixes.json and runner.log
    diffs: dict[str, str] = field(default_factory=dict)  # path → unified diff of its fixed text

    @property
    def clean(self) -> bool:
        """Whether every asked file came back fixed or unchanged, with no finding left (per the job)."""
        return not self.error and not self.refused and not any(self.remaining.values())


def lint_fixable(report: BuildReport, may_touch: Callable[[str], bool]) -> list[str]:
    """The files to hand to ``fix_lint``, or ``[]`` unless the build failed at lint and every finding is a
    ruff finding in a file healing may touch (test code; for B2 only the generated tests)."""
    if report.status is not BuildStatus.FAILED or report.fail_reason is not FailReason.LINT:
        return []
    paths: list[str] = []
    for finding in report.lint_errors:
        path = _fixable_path(finding)
        if path is None or not may_touch(path):
            return []  # one finding no fixer may clear: the build stays a lint failure
        paths.append(path)
    return list(dict.fromkeys(paths))


def _fixable_path(finding: str) -> str | None:
    found = parse_finding(finding)
    if found is None or found.code in _NOT_FIXABLE or not (found.code == _FORMAT or _RUFF_CODE.match(found.code)):
        return None
    try:
        return checked_path(found.path)
    except HealError:
        return None


def fix_lint(
    source: Source, paths: list[str], stage: str, *, store: ArtefactStore, launcher: Launcher, settings: Settings
) -> LintFix:
    """Run the repo's fixers on ``paths`` (from ``lint_fixable``) of ``source``'s commit in a sandboxed CI job;
    the vetted texts. ``stage`` names the failed build (B1, B2) the fixes are for."""
    before, refused = originals(source, paths)
    if not before:
        return LintFix(refused=refused, error="no file to fix")
    prefix = f"{source.artefacts.heal(source.commit_sha, stage)}/lintfix/{uuid.uuid4().hex[:12]}"
    result = launcher.run(fix_job_spec(source, list(before), stage, prefix, store, settings))
    fix = collect_fixes(store, prefix, result, before, settings.limits.job_output_mb * 1024 * 1024)
    diffs = {path: unified_diff(path, before[path], text) for path, text in fix.fixed.items()}
    return LintFix(fix.fixed, {**refused, **fix.refused}, fix.remaining, fix.error, prefix, diffs)


def originals(source: Source, paths: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each path's text at the commit, read from git (what the vetting compares with), and the paths refused
    before any job runs."""
    repo = source.open()
    tree = repo.revparse_single(source.commit_sha).peel(pygit2.Commit).tree
    texts: dict[str, str] = {}
    refused: dict[str, str] = {}
    for path in dict.fromkeys(paths):
        read = _read(repo, tree, path)
        if isinstance(read, bytes):
            texts[path] = read.decode()
        else:
            refused[path] = read
    return texts, refused


def _read(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | str:
    """The blob's bytes, or why not: not a regular file, too large, or not UTF-8 (a fixer's rewrite of it
    could not be compared text for text)."""
    try:
        entry = tree[checked_path(path)]
    except (HealError, KeyError):
        return "not a file of the commit"
    if entry.filemode != pygit2.enums.FileMode.BLOB:  # a link, an executable or a directory
        return "not a regular file"
    blob = repo[entry.id].peel(pygit2.Blob)
    if blob.size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 1024} KiB"
    try:
        blob.data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    return bytes(blob.data)


def fix_job_spec(
    source: Source, paths: list[str], stage: str, prefix: str, store: ArtefactStore, settings: Settings
) -> JobSpec:
    """The CI runner in fix mode on ``paths``: the build's sandbox, image and limits; no credential, only the
    snapshot in and presigned outputs out."""
    timeout = min(FIX_TIMEOUT_SEC, settings.build_timeout_sec)
    return JobSpec(
        name=f"lintfix-{stage.lower()}-{source.commit_sha[:8]}",
        image=RUNNER_IMAGE,
        command=list(RUNNER_COMMAND),
        env={
            "MENDFLOW_JOB_REPO": source.repo_id,
            "MENDFLOW_JOB_COMMIT": source.commit_sha,
            "MENDFLOW_JOB_STAGE": stage,
            "MENDFLOW_JOB_FIX": json.dumps(paths),
            "MENDFLOW_JOB_TIMEOUT_SEC": str(timeout),
        },
        cpu_limit=settings.sandbox.cpu_limit,
        memory_limit_mb=settings.sandbox.memory_limit_mb,
        timeout_sec=timeout + 30,  # the runner keeps its own deadline; this is the backstop
        inputs={"source.tar.gz": store.download_url(source.archive_key)},
        outputs={name: store.upload_url(f"{prefix}/{name}") for name in OUTPUTS},
        labels={"repo": source.repo_id, "commit": source.commit_sha, "stage": f"{stage}-lintfix"},
        cache_scope=source.repo_id,
    )


def collect_fixes(
    store: ArtefactStore, prefix: str, result: JobResult, before: dict[str, str], max_bytes: int
) -> LintFix:
    """The job's ``fixes.json`` under ``prefix``, parsed and vetted against ``before`` (path → text asked for)."""
    try:
        fixes = LintFixes.model_validate_json(store.get_capped(f"{prefix}/{FIXES}", max_bytes))
    except ArtefactNotFoundError:
        why = result.reason or f"the job ended ({result.state}) without writing {FIXES}"
        tail = result.log_tail.strip().splitlines()[-1:] if result.log_tail else []
        return LintFix(error=f"{why}; last output: {tail[0][:TEXT_CUT]}" if tail else why)
    except TooLargeError as exc:
        return LintFix(error=exc.one_line())
    except ValidationError as exc:
        return LintFix(error=f"the job's {FIXES} breaks the LintFixes contract: {exc.errors()[0]['msg']}")
    return vet_fixes(fixes, before)


def vet_fixes(fixes: LintFixes, before: dict[str, str]) -> LintFix:
    """Only texts for paths asked for, each size-capped, valid Python, weakening no test and changing no
    expected value; anything else is refused with a reason. A path listed twice is refused: which is real?"""
    if fixes.error:
        return LintFix(error=f"the fix job fixed nothing: {fixes.error[:TEXT_CUT]}")
    counts: dict[str, int] = {}
    for entry in fixes.files:
        counts[entry.path] = counts.get(entry.path, 0) + 1
    fixed: dict[str, str] = {}
    refused: dict[str, str] = {}
    remaining: dict[str, list[str]] = {}
    for entry in fixes.files:
        path = entry.path
        if path not in before:
            if len(refused) < MAX_REFUSALS:
                refused[path[:TEXT_CUT]] = "not asked for"
            continue
        remaining[path] = [f[:TEXT_CUT] for f in entry.remaining if f.startswith(f"{path}:")][:MAX_REMAINING]
        if counts[path] > 1:
            refused[path] = "listed more than once"
        elif entry.error:
            refused[path] = f"the fix job did not fix it: {entry.error[:TEXT_CUT]}"
        elif entry.text is not None and entry.text != before[path]:
            if why := refusal(path, before[path], entry.text):
                refused[path] = why
            else:
                fixed[path] = entry.text
    return LintFix(fixed, refused, remaining)


def refusal(path: str, before: str, after: str) -> str:
    """Why ``after`` may not replace ``before`` ('' when it may): a fixer's output is untrusted text."""
    if len(after.encode()) > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 1024} KiB"
    try:
        ast.parse(after, filename=path)
    except (SyntaxError, ValueError) as exc:
        return f"not valid Python: {exc}"[:TEXT_CUT]
    if verdicts := weakening(path, before, after):
        return f"weakens the tests: {'; '.join(verdicts)}"[:TEXT_CUT]
    # A linter or formatter has no business changing what a test expects; only a person may approve that.
    if changed := changed_expectations(path, before, after):
        return f"changes an expected value: {'; '.join(changed)}"[:TEXT_CUT]
    return ""


HEALER = "deterministic:repo-fixers"


def lint_checklist(report: BuildReport, paths: list[str]) -> Checklist:
    """Seed 004's checklist for a lint failure: one entry per file to fix, its findings as the error."""
    entries = []
    for path in paths:
        findings = [f for f in report.lint_errors if f.startswith(f"{path}:")]
        entries.append(ChecklistEntry(test_id=path, category=ErrorCategory.LINT, last_error="; ".join(findings)[:500]))
    return Checklist(repo=report.repo, commit_sha=report.commit_sha, stage=report.stage, entries=entries)


def judge_fix(checklist: Checklist, fix: LintFix, b3: BuildReport | None) -> list[HealAttempt]:
    """B3's verdict on each file: fixed and lint clean in B3 → healed; otherwise it gave up. The attempts are
    what the knowledge base learns (the repo's fixers answer with a diff: a ``patch``)."""
    left = {f.split(":", 1)[0] for f in b3.lint_errors} if b3 is not None else set()
    attempts = []
    for entry in checklist.entries:
        path = entry.test_id
        healed = path in fix.fixed and b3 is not None and path not in left
        attempt = HealAttempt(
            repo=checklist.repo, commit_sha=checklist.commit_sha, test_id=path, category=ErrorCategory.LINT,
            scope=Scope.FILE_WIDE, healer=HEALER, method=HealMethod.PATCH, diff=fix.diffs.get(path, ""),
            diff_lines=diff_size(fix.diffs.get(path, "")), success=healed,
            error=fix.refused.get(path) or fix.error or "; ".join(fix.remaining.get(path, [])),
        )  # fmt: skip
        entry.history.append(attempt)
        entry.retries += 1
        entry.status = CheckStatus.HEALED if attempt.success else CheckStatus.GAVE_UP
        attempts.append(attempt)
    return attempts
