"""Human views of contracts: markdown for Prefect artifacts, rows for tables (UI and CLI share them)."""

from __future__ import annotations

from mendflow.contracts import BuildReport


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
        f"| duration | {sum(report.durations.values()):.1f}s ({', '.join(f'{k} {v:.1f}s' for k, v in report.durations.items())}) |",
        f"| artefacts | {report.artefact_url or '-'} |",
    ]
    if report.error_reason:
        lines += ["", f"**Why:** {report.error_reason}"]
    for title, items in (("Failed tests", report.failed_tests), ("Lint errors", report.lint_errors)):
        if items:
            lines += ["", f"## {title} ({len(items)})", ""]
            lines += [f"- `{item}`" for item in items[:limit]]
            if len(items) > limit:
                lines.append(f"- … and {len(items) - limit} more (see the artefacts)")
    return "\n".join(lines) + "\n"
