"""Coverage gaps → CoverageTargets, with the risk heuristics that make a target high priority."""

from __future__ import annotations

from mendflow.contracts import Coverage, CoverageTarget, FileCoverage, Priority
from mendflow.planner.analysis import FunctionInfo, functions_in, statement_lines
from mendflow.planner.diff import ChangeSet

MAX_TARGETS = 12


def risk_reasons(path: str, info: FunctionInfo, change_set: ChangeSet) -> list[str]:
    """Why a change makes this function risky: its public signature changed, or it raises something new."""
    change = change_set.files.get(path)
    if change is None or not change_set.touches(path, info.start_line, info.end_line):
        return []
    old = functions_in(change.old_source).get(info.qualname) if change.old_source else None
    reasons: list[str] = []
    if info.is_public and old is not None and old.signature != info.signature:
        reasons.append(f"public signature changed: `{old.signature}` → `{info.signature}`")
    elif info.is_public and old is None:
        reasons.append(f"new public function `{info.signature}`")
    new_raises = sorted(info.raised_types - (old.raised_types if old else set()))
    if new_raises:
        reasons.append(f"raises new {', '.join(new_raises)}")
    return reasons


def _symbol_gaps(file: FileCoverage, source: str, min_cov: float) -> list[tuple[str, int, int, float, list[int]]]:
    """(symbol, start, end, line_pct, missing) for functions below ``min_cov``."""
    if file.symbols:
        return [
            (s.name, s.start_line or 1, s.end_line or s.start_line or 1, s.line_pct, list(s.missing_lines))
            for s in file.symbols
            if s.kind == "function" and s.statements and s.line_pct < min_cov
        ]
    # Older coverage.py without per-function data: cut the file's missing lines by the functions' spans.
    gaps = []
    missing = set(file.missing_lines)
    for info in functions_in(source).values():
        stmts = statement_lines(source, info.start_line, info.end_line)
        if not stmts:
            continue
        miss = sorted(stmts & missing)
        pct = round(100.0 * (len(stmts) - len(miss)) / len(stmts), 2)
        if pct < min_cov:
            gaps.append((info.qualname, info.start_line, info.end_line, pct, miss))
    return gaps


def find_targets(
    coverage: Coverage,
    sources: dict[str, str],
    change_set: ChangeSet,
    min_cov: float,
    limit: int = MAX_TARGETS,
) -> list[CoverageTarget]:
    """Functions below ``min_cov``, high-priority ones first, then the least covered."""
    targets: list[CoverageTarget] = []
    for file in coverage.files:
        source = sources.get(file.path, "")
        infos = functions_in(source)
        for name, start, end, pct, missing in _symbol_gaps(file, source, min_cov):
            info = infos.get(name)
            reasons = [f"line coverage {pct:.1f}% < {min_cov:.0f}% ({len(missing)} lines never run)"]
            risks = risk_reasons(file.path, info, change_set) if info else []
            targets.append(
                CoverageTarget(
                    path=file.path,
                    symbol=name,
                    start_line=start,
                    end_line=end,
                    line_pct=pct,
                    missing_lines=missing,
                    priority=Priority.HIGH if risks else Priority.NORMAL,
                    reasons=reasons + risks,
                )
            )
    targets.sort(key=lambda t: (t.priority is not Priority.HIGH, t.line_pct, t.path, t.start_line))
    return targets[:limit]
