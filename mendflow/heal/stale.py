"""Stale generated tests: mendflow's own tests that pinned behaviour a later commit changed.

A test in a mendflow-generated file (``contracts.is_generated_test_file``) that still fails after the repair
rounds as a regression pinned what the code did when it was generated. Such tests are dropped (the AST drop of
``mendflow.heal.drop``: the test functions, the imports only they used, a file left without a test) and generated
again from the current code for what they covered. Only when *every* test still failing is one of them: a user's
test that fails is never dropped, and the full build of the drop commit would fail on it anyway. The outcome
changes what the tests expect, so it always waits for a human; the regression stays reported.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import PurePosixPath

from mendflow.contracts import (
    Checklist,
    CheckStatus,
    ErrorCategory,
    HealAttempt,
    HealMethod,
    Scope,
    TestSpec,
    generated_test_modules,
    is_generated_test_file,
)
from mendflow.edits import diff_size
from mendflow.heal.drop import failing_by_file, without_tests
from mendflow.heal.healer import test_path

HEALER = "deterministic:regenerate"
_STILL_FAILING = (CheckStatus.FAILED, CheckStatus.REGRESSION, CheckStatus.GAVE_UP)


def stale_tests(checklist: Checklist) -> list[str]:
    """The tests to regenerate: every test still failing, when all of them are regressions in generated test
    files; [] when any other test still fails (a user's test is never dropped) or none does."""
    failing = [e for e in checklist.entries if e.status in _STILL_FAILING]
    if not failing or any(
        e.status is not CheckStatus.REGRESSION or not is_generated_test_file(test_path(e.test_id)) for e in failing
    ):
        return []
    return [e.test_id for e in failing]


def drop_stale(tests: list[str], read: Callable[[str], str]) -> dict[str, str | None]:
    """What to commit to drop ``tests`` (path → the file without them, ``None``: no test left, the file goes);
    only generated test files are ever read or changed."""
    files = {test_path(t) for t in tests if is_generated_test_file(test_path(t))}
    return {path: without_tests(read(path), names) for path, names in failing_by_file(tests, files).items()}


def covered_by(spec: TestSpec, files: list[str]) -> TestSpec:
    """``spec`` narrowed to what the dropped files tested: the targets in the modules they are named after
    (``test_<module>_mendflow.py``, or ``test_<package>_<module>_mendflow.py`` when two modules share a name)
    and their cases."""
    modules = {m for path in files for m in generated_test_modules(path)}
    targets = [t for t in spec.targets if _names_of(t.path) & modules]
    refs = {t.ref for t in targets} | {t.path for t in targets}
    cases = [c for c in spec.cases if c.target_path in refs or c.target_path.split("::", 1)[0] in refs]
    return spec.model_copy(update={"targets": targets, "cases": cases})


def _names_of(source_path: str) -> set[str]:
    p = PurePosixPath(source_path)
    return {p.stem, f"{p.parent.name}_{p.stem}"}


def drop_message(tests: list[str], stage: str, files: dict[str, str | None]) -> str:
    lines = [f"mendflow heal: drop {len(tests)} stale generated test(s) that failed {stage}", ""]
    lines.append("They pinned behaviour the commit changed; tests are generated again from the current code.")
    lines += ["", *(f"- {t}" for t in tests)]
    lines += [f"- {path} removed: no test left" for path, text in sorted(files.items()) if text is None]
    return "\n".join(lines) + "\n"


def attempts(
    repo: str, commit_sha: str, tests: list[str], success: bool, diff: str, error: str = ""
) -> list[HealAttempt]:
    """One knowledge-base attempt per stale test: the drop and regeneration, and whether its builds passed."""
    size = diff_size(diff)
    template = HealAttempt(
        repo=repo, commit_sha=commit_sha, test_id="", category=ErrorCategory.STALE_GENERATED, scope=Scope.FILE_WIDE,
        healer=HEALER, method=HealMethod.REWRITE, success=success, diff_lines=size, error=error, diff=diff[:20000],
        at=datetime.now(UTC),
    )  # fmt: skip
    return [template.model_copy(update={"test_id": t}) for t in tests]
