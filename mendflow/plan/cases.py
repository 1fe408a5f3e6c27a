"""Offline test-case enumeration from the code: success path, failure paths (raises), edge cases (branches),
concurrency and security when the code hints at them. At most five per target."""

from __future__ import annotations

import re

from mendflow.contracts import CaseKind, CoverageTarget, TestCase
from mendflow.plan.analysis import FunctionInfo

MAX_CASES_PER_TARGET = 5


def _slug(text: str, words: int = 6) -> str:
    parts = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(parts[:words]) or "case"


def _name(info: FunctionInfo, tail: str) -> str:
    owner = info.qualname.split(".")[-2].lower() + "_" if "." in info.qualname else ""
    return f"test_{owner}{info.name.lstrip('_')}_{_slug(tail)}"


def _call(info: FunctionInfo) -> str:
    return f"{info.qualname}({', '.join(info.params)})"


def _touches_missing(target: CoverageTarget, lines: tuple[int, int] | int) -> bool:
    lo, hi = (lines, lines) if isinstance(lines, int) else lines
    return any(lo <= n <= hi for n in target.missing_lines)


def _success(info: FunctionInfo, target: CoverageTarget) -> TestCase:
    outcome = "returns the expected value" if info.returns_value else "updates its state as expected"
    return TestCase(
        name=_name(info, "ordinary input"),
        goal=f"{info.name} {outcome} for ordinary valid input",
        kind=CaseKind.SUCCESS,
        target_path=target.ref,
        steps=[
            f"arrange: valid values for {', '.join(info.params) or 'no arguments'}",
            f"act: call {_call(info)}",
            f"assert: {outcome.replace('returns', 'the result is')}",
        ],
    )


def _failures(info: FunctionInfo, target: CoverageTarget) -> list[TestCase]:
    raises = sorted(info.raises, key=lambda r: not _touches_missing(target, r.line))
    cases, seen = [], set()
    for r in raises:
        exc = r.exception or "the caught exception"
        key = (exc, r.condition)
        if key in seen:
            continue
        seen.add(key)
        when = f" when {r.condition}" if r.condition else ""
        cases.append(
            TestCase(
                name=_name(info, f"raises {exc.rsplit('.', 1)[-1]} {r.condition}"),
                goal=f"{info.name} raises {exc}{when}",
                kind=CaseKind.FAILURE,
                target_path=target.ref,
                steps=[
                    f"arrange: inputs where {r.condition or 'the error path is taken'}",
                    f"act: call {_call(info)} inside pytest.raises({exc})",
                    "assert: the exception message says what was wrong",
                ],
            )
        )
    return cases


def _edges(info: FunctionInfo, target: CoverageTarget) -> list[TestCase]:
    raising = {r.condition for r in info.raises}
    branches = [b for b in info.branches if b.condition not in raising]
    branches.sort(key=lambda b: not _touches_missing(target, b.lines))
    cases = [
        TestCase(
            name=_name(info, f"when {b.condition}"),
            goal=f"{info.name} handles the case `{b.condition}`",
            kind=CaseKind.EDGE,
            target_path=target.ref,
            steps=[
                f"arrange: inputs where {b.condition}",
                f"act: call {_call(info)}",
                "assert: the branch's result or side effect",
            ],
        )
        for b in branches
    ]
    if not cases and info.params:
        p = info.params[0].lstrip("*")
        cases.append(
            TestCase(
                name=_name(info, f"boundary {p}"),
                goal=f"{info.name} handles boundary values of `{p}` (zero, empty, negative, very large)",
                kind=CaseKind.EDGE,
                target_path=target.ref,
                steps=[
                    f"arrange: boundary values for {p}",
                    f"act: call {_call(info)}",
                    "assert: result or error",
                ],
            )
        )
    return cases


def _concurrency(info: FunctionInfo, target: CoverageTarget) -> list[TestCase]:
    if not (info.concurrency or info.is_async):
        return []
    return [
        TestCase(
            name=_name(info, "concurrent calls"),
            goal=f"concurrent calls to {info.name} give consistent results and do not corrupt shared state",
            kind=CaseKind.CONCURRENCY,
            target_path=target.ref,
            steps=[
                "arrange: several threads or tasks",
                f"act: call {_call(info)} from each at once",
                "assert: every result is right and the shared state is consistent",
            ],
        )
    ]


def _security(info: FunctionInfo, target: CoverageTarget) -> list[TestCase]:
    if not info.security_sinks:
        return []
    sinks = ", ".join(info.security_sinks[:3])
    return [
        TestCase(
            name=_name(info, "hostile input"),
            goal=f"{info.name} refuses or neutralises hostile input that reaches {sinks} (injection)",
            kind=CaseKind.SECURITY,
            target_path=target.ref,
            steps=[
                "arrange: input crafted for injection (shell metacharacters, SQL, code)",
                f"act: call {_call(info)}",
                f"assert: nothing unintended reaches {sinks}",
            ],
        )
    ]


def offline_cases(info: FunctionInfo | None, target: CoverageTarget) -> list[TestCase]:
    """Up to five cases, one of each kind first, then more failure and edge cases by uncovered lines."""
    if info is None:  # the code is not parsable here: one generic goal from the coverage gap
        return [
            TestCase(
                name=f"test_{_slug(target.symbol or target.path)}_uncovered_lines",
                goal=f"exercise the lines of {target.ref} never run: {target.missing_lines[:10]}"
                + (f" and its branches never taken: {target.missing_branches[:10]}" if target.missing_branches else ""),
                target_path=target.ref,
                steps=[
                    "arrange: inputs reaching the uncovered lines",
                    "act: call the code",
                    "assert: its result",
                ],
            )
        ]
    failures, edges = _failures(info, target), _edges(info, target)
    first = [
        _success(info, target),
        *failures[:1],
        *edges[:1],
        *_concurrency(info, target),
        *_security(info, target),
    ]
    rest: list[TestCase] = []
    for i in range(1, max(len(failures), len(edges))):  # alternate further failure and edge cases
        rest += failures[i : i + 1] + edges[i : i + 1]
    cases, names = [], set()
    for case in [*first, *rest]:
        if case.name not in names:
            cases.append(case)
            names.add(case.name)
    return cases[:MAX_CASES_PER_TARGET]


def estimated_tokens(cases: list[TestCase]) -> int:
    """The seed's estimate: #cases x avg_steps x 60."""
    if not cases:
        return 0
    avg_steps = max(1.0, sum(len(c.steps) for c in cases) / len(cases))
    return round(len(cases) * avg_steps * 60)
