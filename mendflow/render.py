"""Human views of contracts: markdown for Prefect artifacts, rows for tables (UI and CLI share them)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from mendflow.contracts import BuildReport, FailureKind, GeneratedTests, PipelineResult, Regression, TestFailure


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits, dashes) from parts such as a repo id and a stage."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def coverage_rows(report: BuildReport) -> list[dict[str, str | int]]:
    if report.coverage is None:
        return []
    return [
        {
            "file": f.path,
            "statements": f.statements,
            "missing": len(f.missing_lines),
            "line": _pct(f.line_pct),
            "branch": _pct(f.branch_pct),
        }
        for f in sorted(report.coverage.files, key=lambda f: f.line_pct)
    ]


def build_markdown(report: BuildReport, limit: int = 30) -> str:
    cov = report.coverage
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in report.durations.items())
    lines = [
        f"# Build {report.stage} · {report.status.value}",
        "",
        "| | |",
        "|---|---|",
        f"| repo | `{report.repo}` |",
        f"| commit | `{report.commit_sha[:12]}` on `{report.branch_name or '-'}` |",
        f"| attempt | {report.attempt} |",
        f"| tests | {report.tests.passed} passed, {report.tests.failed} failed, {report.tests.errors} errors, "
        f"{report.tests.skipped} skipped |",
        f"| coverage | line {_pct(cov.line_pct if cov else None)}, branch {_pct(cov.branch_pct if cov else None)} |",
        f"| duration | {sum(report.durations.values()):.1f}s ({steps}) |",
        f"| artefacts | {report.artefact_url or '-'} |",
    ]
    if report.error_reason:
        lines += ["", f"**Why:** {report.error_reason}"]
    if len(report.sections) > 1:
        lines += [
            "",
            "## Languages",
            "",
            "| language | status | tests | line coverage | note |",
            "|---|---|---|---|---|",
        ]
        for part in report.sections:
            status = part.status.value if part.status else "not built"
            note = part.skipped or part.error_reason or ""
            line = _pct(part.coverage.line_pct if part.coverage else None)
            tests = f"{part.tests.passed} passed, {part.tests.failed} failed" if part.status else "-"
            lines.append(f"| {part.language} | {status} | {tests} | {line} | {_code(note) if note else ''} |")
    sections = (
        ("Failed tests", report.failed_tests),
        ("Lint errors", report.lint_errors),
        (f"Pre-existing lint findings, not fatal (also in {baseline_label(report)})", report.lint_preexisting),
        (
            "Advice, not fatal: bug-level findings of a linter the repository does not configure, and what the "
            "build could not measure or check",
            report.lint_advisory,
        ),
    )
    for title, items in sections:
        if items:
            lines += ["", f"## {title} ({len(items)})", ""]
            lines += [f"- {_code(item)}" for item in items[:limit]]
            if len(items) > limit:
                lines.append(f"- … and {len(items) - limit} more (see the artefacts)")
    return "\n".join(lines) + "\n"


def baseline_label(report: BuildReport) -> str:
    """What the report's lint findings were compared with, short: a commit's abbreviated sha, else as it is
    (the root commit's first analysis)."""
    sha = re.match(r"[0-9a-f]{40}\b", report.lint_baseline)
    return sha[0][:12] if sha else report.lint_baseline


def _code(text: str, limit: int = 300) -> str:
    """``text`` (a job's, so untrusted) as one inline code span: no backtick or newline can end it early."""
    flat = " ".join(text.replace("`", "'").split())
    return f"`{flat[:limit]}{'…' if len(flat) > limit else ''}`"


def _failure_line(test: str, failure: TestFailure | None) -> str:
    if failure is None:
        return f"- {_code(test)}"
    said = ": ".join(part for part in (failure.exception, failure.message) if part)
    line = f"- {_code(test)}" + (f" — {_code(said)}" if said else "")
    return line + (f" at {_code(failure.location)}" if failure.location else "")


def _section(title: str, lines: list[str], limit: int) -> list[str]:
    if not lines:
        return []
    more = [f"- … and {len(lines) - limit} more (see the build report)"] if len(lines) > limit else []
    return ["", f"## {title} ({len(lines)})", "", *lines[:limit], *more]


def regression_markdown(regression: Regression, failures: Sequence[TestFailure] = (), limit: int = 30) -> str:
    """The Regression for a person: each failing test with its first message line, collection, import and
    fixture errors (the test never ran) apart from tests whose body failed, then lint errors."""
    lines = [
        f"# Regression {regression.id}",
        "",
        f"Build **{regression.stage}** of `{regression.repo}` at `{regression.commit_sha[:12]}` "
        f"(`{regression.branch_name or '-'}`) ended **{regression.status.value}**"
        + (f" ({regression.fail_reason.value})" if regression.fail_reason else "")
        + ".",
    ]
    if regression.error_reason:
        lines += ["", f"**Why:** {regression.error_reason}"]
    details = {f.node_id: f for f in reversed(failures)}  # the first detail of a test wins
    errors: list[str] = []
    failed: list[str] = []
    for test in regression.failed_tests:
        detail = details.get(test)
        is_error = detail.kind is FailureKind.ERROR if detail else "::" not in test  # a bare path: collection
        (errors if is_error else failed).append(_failure_line(test, detail))
    lines += _section("Errors: collection, import or fixture (the test never ran)", errors, limit)
    lines += _section("Failed tests", failed, limit)
    lines += _section("Lint errors", [f"- {_code(e)}" for e in regression.lint_errors], limit)
    if regression.build_report_url:
        lines += ["", f"Evidence: {regression.build_report_url}"]
    return "\n".join(lines) + "\n"


def _build_row(report: BuildReport | None) -> str:
    if report is None:
        return "-"
    return f"{report.status.value} · line {_pct(report.coverage.line_pct if report.coverage else None)}"


def pipeline_markdown(result: PipelineResult) -> str:
    gen = result.generated
    cov = "n/a" if result.coverage_delta_pct is None else f"{result.coverage_delta_pct:+.1f} points"
    rows = [
        ("B1", _build_row(result.b1)),
        (
            "TestSpec",
            f"{result.spec.id} · {len(result.spec.cases)} cases on {len(result.spec.targets)} targets"
            if result.spec
            else "-",
        ),
        (
            "Generated",
            f"{gen.precheck.value} · kept {len(gen.kept)}, dropped {len(gen.dropped)} on `{gen.branch_name}`"
            if gen
            else "-",
        ),
        ("B2", _build_row(result.b2)),
        *([("B3 (failed generated tests dropped)", _build_row(result.b3))] if result.b3 else []),
        ("coverage B1 → merged tests", cov),
        ("heal", _heal_row(result)),
        ("merged", result.merged_sha[:12] or "-"),
    ]
    lines = [
        f"# {result.outcome.value}: `{result.repo}` @ `{result.commit_sha[:12]}`",
        "",
        "| stage | result |",
        "|---|---|",
        *[f"| {a} | {b} |" for a, b in rows],
    ]
    if gen and gen.dropped:
        lines += ["", "## Dropped tests", "", *[f"- `{d.node_id}`: {d.reason.value} {d.detail}" for d in gen.dropped]]
    return "\n".join(lines) + "\n"


def _heal_row(result: PipelineResult) -> str:
    heal = result.heal
    if heal is None:
        return "-"
    counts = Counter(e.status.value for e in heal.checklist.entries)
    b3 = f" · B3 {heal.b3.status.value}" if heal.b3 else ""
    branch = f" on `{heal.branch_name}`" if heal.branch_name else ""
    return f"{heal.outcome.value} · " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + b3 + branch


def coverage_comparison_rows(b1: BuildReport, b2: BuildReport) -> list[dict[str, str]]:
    """Per-file line coverage before and after the generated tests, biggest gain first."""
    before = {f.path: f for f in (b1.coverage.files if b1.coverage else [])}
    after = {f.path: f for f in (b2.coverage.files if b2.coverage else [])}
    rows = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        gain = (new.line_pct if new else 0.0) - (old.line_pct if old else 0.0)
        rows.append(
            (
                gain,
                {
                    "file": path,
                    "B1 line": _pct(old.line_pct if old else None),
                    "B2 line": _pct(new.line_pct if new else None),
                    "gain": f"{gain:+.1f}",
                },
            )
        )
    return [row for _, row in sorted(rows, key=lambda r: -r[0])]


def generated_tests_markdown(generated: GeneratedTests, files: dict[str, str]) -> str:
    """The kept test files as a diff against the parent commit (they are new files), then the drops."""
    lines = [f"# Generated tests on `{generated.branch_name}`", ""]
    for path, text in sorted(files.items()):
        lines += [f"```diff\n--- /dev/null\n+++ b/{path}", *[f"+{line}" for line in text.splitlines()], "```", ""]
    if generated.dropped:
        lines += ["## Dropped", "", *[f"- `{d.node_id}`: {d.reason.value} {d.detail}" for d in generated.dropped]]
    return "\n".join(lines) + "\n"
