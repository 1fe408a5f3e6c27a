"""One BuildReport for a repository written in several languages: each language is its own job, in its own
runner image, on the same snapshot; this module splits a selection between them and combines their reports.

The combined report keeps the meaning every consumer reads (planner, verifier, healer, coverage gate, events,
merge): ``status`` is the worst section's (ERRORED > FAILED > PASSED), failed tests, failures and lint findings
are every section's, counts are summed, coverage is every section's files (languages never share a file) with
its totals recomputed, and ``durations`` name their language. ``sections`` keeps each language's own result.
A language detected without a runner is a section that says so and never fails the build: only the first
(main) language without a runner is refused, as before (``mendflow.ci.job.unsupported``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from mendflow.contracts import (
    BuildMetrics,
    BuildReport,
    BuildStatus,
    Coverage,
    FailReason,
    Language,
    LanguageSection,
    TestCounts,
)
from mendflow.languages import language_of_path

# Worst first: the combined status is the first of these any built section has.
SEVERITY: tuple[BuildStatus, ...] = (BuildStatus.ERRORED, BuildStatus.FAILED, BuildStatus.PASSED)
SEPARATOR = "::"
# Go's ids are DIR::TestName: a directory, no suffix, and go test's own prefixes for what it runs.
_GO_TEST_PREFIXES = ("Test", "Example", "Benchmark", "Fuzz")


def not_selected(language: Language) -> LanguageSection:
    return LanguageSection(language=language, skipped="none of its tests selected")


def language_of_test(node_id: str, languages: Sequence[Language]) -> Language:
    """The language a test id belongs to, from its file's suffix (``a/b.py::t``, ``src/x.test.ts::t``,
    ``src/lib.rs::m::t``) or Go's ``DIR::TestName`` shape; otherwise the first of ``languages``."""
    head, _, rest = node_id.partition(SEPARATOR)
    found = language_of_path(head)
    if found is not None and found in languages:
        return found
    if (
        found is None
        and Language.GO in languages
        and not PurePosixPath(head).suffix
        and rest.startswith(_GO_TEST_PREFIXES)
    ):
        return Language.GO
    return languages[0] if languages else Language.PYTHON


def split_selection(select: Sequence[str], languages: Sequence[Language]) -> dict[Language, list[str]]:
    """``select`` by the language owning each id, in ``languages`` order; a language none is for is absent."""
    shares: dict[Language, list[str]] = {}
    for node in select:
        shares.setdefault(language_of_test(node, languages), []).append(node)
    return {lang: shares[lang] for lang in languages if lang in shares}


def section_of(report: BuildReport) -> LanguageSection:
    return LanguageSection(
        language=report.language,
        status=report.status,
        failed_tests=list(report.failed_tests),
        selected=list(report.selected),
        lint_errors=list(report.lint_errors),
        tests=report.tests,
        test_command=list(report.test_command),
        coverage=report.coverage,
        durations=dict(report.durations),
        error_reason=report.error_reason,
        fail_reason=report.fail_reason,
        transient=report.transient,
        artefact_url=report.artefact_url,
    )


def worst(reports: Sequence[BuildReport]) -> BuildReport:
    """The report whose status leads (the first of the worst, so the main language wins a tie)."""
    return min(reports, key=lambda r: SEVERITY.index(r.status))


def merge_coverage(parts: Sequence[Coverage]) -> Coverage | None:
    """Every part's files, totals recomputed; branch numbers only when every part has branch data."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    statements = sum(c.statements for c in parts)
    covered = sum(c.covered_lines for c in parts)
    branch_data = all(c.branch_data for c in parts)
    branches = sum(c.num_branches for c in parts) if branch_data else 0
    covered_branches = sum(c.covered_branches for c in parts) if branch_data else 0
    return Coverage(
        format=parts[0].format,
        branch_data=branch_data,
        line_pct=round(100.0 * covered / statements, 2) if statements else 100.0,
        branch_pct=round(100.0 * covered_branches / branches, 2) if branch_data and branches else None,
        statements=statements,
        covered_lines=covered,
        num_branches=branches,
        covered_branches=covered_branches,
        files=[f for c in parts for f in c.files],
    )


def combine(reports: Sequence[BuildReport], skipped: Sequence[LanguageSection] = ()) -> BuildReport:
    """One report of ``reports`` (one per built language, the main language first) and ``skipped`` sections.

    One built language: that report unchanged, with its sections. Several: see the module's docstring.
    """
    if not reports:
        raise ValueError("combine needs at least one built language")
    first = reports[0]
    if len(reports) == 1:  # its own section as published with it (mendflow.ci.job.publish), if it has one
        return first.model_copy(update={"sections": [*(first.sections or [section_of(first)]), *skipped]})
    sections = [*(section_of(r) for r in reports), *skipped]
    # A secondary language with no tests at all (a Python package's package.json for its docs tooling) is
    # reported in its section; it cannot fail a commit that did not touch it.
    deciding = [first, *(r for r in reports[1:] if r.fail_reason is not FailReason.NO_TESTS)]
    lead = worst(deciding)

    def named(report: BuildReport, text: str | None) -> str | None:
        return f"{report.language}: {text}" if text else text

    tests = TestCounts(
        total=sum(r.tests.total for r in reports),
        passed=sum(r.tests.passed for r in reports),
        failed=sum(r.tests.failed for r in reports),
        errors=sum(r.tests.errors for r in reports),
        skipped=sum(r.tests.skipped for r in reports),
    )
    coverage = merge_coverage([r.coverage for r in reports if r.coverage is not None])
    durations = {f"{r.language}.{step}": sec for r in reports for step, sec in r.durations.items()}
    reasons = [f"{r.language}: {r.error_reason}" for r in deciding if r.error_reason and r.status is lead.status]
    metrics = BuildMetrics(
        ci_build_duration=sum(r.metrics.ci_build_duration for r in reports if r.metrics),
        ci_tests_passed_total=tests.passed,
        ci_coverage_line_pct=coverage.line_pct if coverage else None,
        ci_fail_reason=lead.fail_reason,
    )
    starts = [r.started_at for r in reports if r.started_at]
    ends = [r.finished_at for r in reports if r.finished_at]
    return first.model_copy(
        update={
            "attempt": max(r.attempt for r in reports),
            "status": lead.status,
            "failed_tests": [t for r in reports for t in r.failed_tests],
            "failures": [f for r in reports for f in r.failures],
            "selected": [t for r in reports for t in r.selected],
            "lint_errors": [e for r in reports for e in r.lint_errors],
            "lint_preexisting": [e for r in reports for e in r.lint_preexisting],
            "lint_baseline": "; ".join(b for b in (named(r, r.lint_baseline) for r in reports) if b),
            "lint_advisory": [e for r in reports for e in r.lint_advisory],
            "tests": tests,
            "runs": min(r.runs for r in reports),
            "coverage": coverage,
            "durations": durations,
            "error_reason": "; ".join(reasons) or None,
            "fail_reason": lead.fail_reason,
            "transient": lead.transient,
            "metrics": metrics,
            "started_at": min(starts) if starts else None,
            "finished_at": max(ends) if ends else None,
            "sections": sections,
        }
    )
