"""Coverage gaps → CoverageTargets, with the risk heuristics that make a target high priority."""

from __future__ import annotations

from mendflow.contracts import Coverage, CoverageTarget, FileCoverage, Priority, is_test_file
from mendflow.plan.analysis import FunctionInfo, functions_in, statement_lines
from mendflow.plan.diff import ChangeSet

MAX_TARGETS = 12
# Scripts a build tool or pytest runs, not modules a library user imports: importing setup.py runs setup().
# No module target for them (a function of theirs below the threshold is still a target).
NOT_A_MODULE = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "__main__.py"})


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


def _branches_in(file: FileCoverage, start: int, end: int) -> list[tuple[int, int]]:
    return [(a, b) for a, b in file.missing_branches if start <= a <= end]


def _module_target(file: FileCoverage, taken: list[CoverageTarget], why: str) -> CoverageTarget | None:
    """The file's gaps outside ``taken``: module-level code, and lines and branches of functions above the
    threshold. Pynguin's tests for the module often cover them, and the gates credit them."""
    lines_taken = {n for t in taken for n in t.missing_lines}
    branches_taken = {tuple(b) for t in taken for b in t.missing_branches}
    lines = sorted(set(file.missing_lines) - lines_taken)
    branches = sorted({tuple(b) for b in file.missing_branches} - branches_taken)
    if not lines and not branches:
        return None
    at = lines + [a for a, _ in branches]
    return CoverageTarget(
        path=file.path,
        symbol="",
        start_line=min(at),
        end_line=max(at),
        line_pct=file.line_pct,
        missing_lines=lines,
        missing_branches=[(a, b) for a, b in branches],
        reasons=[f"{why}: {len(lines)} line(s) and {len(branches)} branch(es) never run"],
    )


def _function_targets(file: FileCoverage, source: str, change_set: ChangeSet, min_cov: float) -> list[CoverageTarget]:
    infos = functions_in(source)
    targets = []
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
                missing_branches=_branches_in(file, start, end),
                priority=Priority.HIGH if risks else Priority.NORMAL,
                reasons=reasons + risks,
            )
        )
    return targets


def _optional(target: CoverageTarget | None) -> list[CoverageTarget]:
    return [target] if target else []


def _rank(target: CoverageTarget) -> tuple[bool, int, float, str, int]:
    """High-priority targets first (the change's risks), then the ones with the most lines and branches never
    run (what a test gains most from, as CoverUp orders its segments), then the least covered."""
    missed = len(target.missing_lines) + len(target.missing_branches)
    return (target.priority is not Priority.HIGH, -missed, target.line_pct, target.path, target.start_line)


def find_targets(
    coverage: Coverage,
    sources: dict[str, str],
    change_set: ChangeSet,
    min_cov: float,
    limit: int = MAX_TARGETS,
) -> list[CoverageTarget]:
    """Every gap is a candidate (CoverUp's approach): functions below ``min_cov`` and modules below it with no
    such function first, then the remaining gaps of modules above it; each group by ``_rank``. Then, per chosen
    file, one module target for its remaining missed lines and branches (outside ``limit``: it adds no module
    to generate for)."""
    below: list[CoverageTarget] = []
    above: list[CoverageTarget] = []
    for file in coverage.files:
        if is_test_file(file.path) or file.path.rsplit("/", 1)[-1] in NOT_A_MODULE:
            continue  # test code (measured when the repo's coverage config counts it), or a script
        functions = _function_targets(file, sources.get(file.path, ""), change_set, min_cov)
        pct = min(file.line_pct, 100.0 if file.branch_pct is None else file.branch_pct)
        if functions:
            below += functions
        elif pct < min_cov:
            below += _optional(_module_target(file, [], f"module line/branch coverage {pct:.1f}% < {min_cov:.0f}%"))
        else:
            above += _optional(_module_target(file, [], f"gaps in a module at {pct:.1f}% (>= {min_cov:.0f}%)"))
    candidates = sorted(below, key=_rank) + sorted(above, key=_rank)
    chosen = candidates[:limit]
    rest = []
    for file in coverage.files:
        mine = [t for t in chosen if t.path == file.path]
        if mine and all(t.symbol for t in mine):
            residual = _module_target(file, mine, f"outside the functions below {min_cov:.0f}%")
            rest += [residual] if residual else []
    return chosen + rest
