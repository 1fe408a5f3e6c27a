"""Stale generated tests: which tests qualify, the drop of them, the narrowed spec, the knowledge-base record."""

from __future__ import annotations

import pytest

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    Checklist,
    ChecklistEntry,
    CheckStatus,
    CoverageTarget,
    ErrorCategory,
    GeneratedTests,
    HealOutcome,
    HealResult,
    KeptTest,
    Regeneration,
    TestCase,
    TestSpec,
    is_generated_test_file,
)
from mendflow.heal.report import heal_markdown
from mendflow.heal.stale import attempts, covered_by, drop_message, drop_stale, stale_tests
from mendflow.settings import HealSettings

GEN = "tests/test_calc_mendflow.py"


def checklist(**statuses: CheckStatus) -> Checklist:
    entries = [
        ChecklistEntry(test_id=t.replace("__", "::").replace("_py", ".py"), status=s) for t, s in statuses.items()
    ]
    return Checklist(repo="o/r", commit_sha="c" * 40, stage="B1", entries=entries)


@pytest.mark.parametrize(
    ("path", "generated"),
    [
        ("tests/test_calc_mendflow.py", True),
        ("test/test_pkg_calc_mendflow.py", True),
        ("tests/test_calc.py", False),
        ("testing/test_calc_mendflow.py", True),
        ("src/pkg/tests/test_calc_mendflow.py", True),
        ("test_calc_mendflow.py", False),
        ("tests/calc_mendflow.py", False),
        ("tests/test__mendflow.py", False),
        ("tests/test_mendflow.py", False),
    ],
)
def test_a_generated_test_file_is_known_by_the_builders_naming_rule(path: str, generated: bool) -> None:
    assert is_generated_test_file(path) is generated


def test_stale_tests_are_the_regressions_in_generated_files() -> None:
    c = Checklist(repo="o/r", commit_sha="c" * 40, stage="B1", entries=[
        ChecklistEntry(test_id=f"{GEN}::test_f", status=CheckStatus.REGRESSION),
        ChecklistEntry(test_id=f"{GEN}::TestF::test_g[1]", status=CheckStatus.REGRESSION),
        ChecklistEntry(test_id="tests/test_other.py::test_h", status=CheckStatus.HEALED),
        ChecklistEntry(test_id="tests/test_x.py::test_flaky", status=CheckStatus.QUARANTINED),
    ])  # fmt: skip
    assert stale_tests(c) == [f"{GEN}::test_f", f"{GEN}::TestF::test_g[1]"]


@pytest.mark.parametrize(
    ("other", "status"),
    [
        ("tests/test_calc.py::test_users", CheckStatus.REGRESSION),  # a user's test: never dropped
        (f"{GEN}::test_g", CheckStatus.GAVE_UP),  # not a behaviour change
        (f"{GEN}::test_g", CheckStatus.FAILED),
    ],
)
def test_nothing_is_stale_while_another_test_still_fails(other: str, status: CheckStatus) -> None:
    c = Checklist(repo="o/r", commit_sha="c" * 40, stage="B1", entries=[
        ChecklistEntry(test_id=f"{GEN}::test_f", status=CheckStatus.REGRESSION),
        ChecklistEntry(test_id=other, status=status),
    ])  # fmt: skip
    assert stale_tests(c) == []


def test_nothing_is_stale_when_nothing_fails() -> None:
    c = Checklist(repo="o/r", commit_sha="c" * 40, stage="B1", entries=[
        ChecklistEntry(test_id=f"{GEN}::test_f", status=CheckStatus.HEALED),
    ])  # fmt: skip
    assert stale_tests(c) == []


TWO = (
    "import math\nfrom calc import f\n\n\ndef test_f():\n    assert f(2) == 4\n\n\n"
    + "def test_g():\n    assert f(0) == 0\n"
)


def test_the_drop_removes_the_stale_tests_and_a_file_left_without_one() -> None:
    texts = {GEN: TWO, "tests/test_other_mendflow.py": "from other import g\n\n\ndef test_g():\n    assert g()\n"}
    stale = [f"{GEN}::test_f", "tests/test_other_mendflow.py::test_g"]

    files = drop_stale(stale, texts.__getitem__)

    assert files == {
        GEN: "import math\nfrom calc import f\n\n\ndef test_g():\n    assert f(0) == 0\n",
        "tests/test_other_mendflow.py": None,
    }


def test_the_drop_never_reads_a_users_file() -> None:
    read: list[str] = []

    files = drop_stale(["tests/test_calc.py::test_f"], lambda p: read.append(p) or "")

    assert files == {} and read == []


def target(path: str, symbol: str) -> CoverageTarget:
    return CoverageTarget(path=path, symbol=symbol, start_line=1, end_line=2, line_pct=0.0)


def test_the_spec_is_narrowed_to_the_modules_the_dropped_files_tested() -> None:
    spec = TestSpec(
        id="ts-x", parent_commit_sha="d" * 40,
        targets=[target("calc.py", "f"), target("pkg/calc.py", "h"), target("other.py", "g")],
        cases=[
            TestCase(name="f", goal="f", target_path="calc.py::f"),
            TestCase(name="g", goal="g", target_path="other.py::g"),
        ],
    )  # fmt: skip

    narrowed = covered_by(spec, [GEN])

    assert [t.ref for t in narrowed.targets] == ["calc.py::f", "pkg/calc.py::h"]
    assert [c.name for c in narrowed.cases] == ["f"] and narrowed.id == spec.id
    assert [t.ref for t in covered_by(spec, ["tests/test_pkg_calc_mendflow.py"]).targets] == ["pkg/calc.py::h"]


def test_a_numbered_generated_file_narrows_the_spec_to_its_module() -> None:
    spec = TestSpec(id="ts-x", parent_commit_sha="d" * 40, targets=[target("calc.py", "f"), target("other.py", "g")])
    assert [t.ref for t in covered_by(spec, ["tests/test_calc_2_mendflow.py"]).targets] == ["calc.py::f"]


def test_the_knowledge_base_records_one_attempt_per_stale_test() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-old\n+new\n+more\n"

    found = attempts("o/r", "c" * 40, [f"{GEN}::test_f", f"{GEN}::test_g"], True, diff)

    assert [a.test_id for a in found] == [f"{GEN}::test_f", f"{GEN}::test_g"]
    assert {(a.category, a.healer, a.success, a.diff_lines) for a in found} == {
        (ErrorCategory.STALE_GENERATED, "deterministic:regenerate", True, 2)
    }


def test_regenerating_is_never_approved_automatically_by_default() -> None:
    assert ErrorCategory.STALE_GENERATED not in HealSettings().auto_approve
    assert HealSettings().regenerate_stale


def test_the_drop_commit_names_the_tests_and_the_files_that_go() -> None:
    message = drop_message([f"{GEN}::test_f"], "B1", {GEN: None})
    assert message.startswith("mendflow heal: drop 1 stale generated test(s) that failed B1\n")
    assert f"- {GEN}::test_f\n" in message and f"- {GEN} removed: no test left\n" in message


def test_the_summary_says_what_was_dropped_and_generated() -> None:
    report = BuildReport(repo="o/r", commit_sha="d" * 40, status=BuildStatus.PASSED, stage="B3")
    generated = GeneratedTests(
        spec_id="ts-x", branch_name="agt/testbuilder/ts-x", precheck=BuildStatus.PASSED,
        kept=[KeptTest(node_id=f"{GEN}::test_f_0", target="calc.py::f", lines_gained=1)],
    )  # fmt: skip
    result = HealResult(
        repo="o/r", commit_sha="c" * 40, stage="B1", outcome=HealOutcome.AWAITING_APPROVAL,
        checklist=checklist(), regenerated=Regeneration(
            dropped=[f"{GEN}::test_f"], files=[GEN], drop_commit_sha="d" * 40, drop_build=report,
            generated=generated, build=report, passed=True,
        ),
    )  # fmt: skip

    md = heal_markdown(result)

    assert "## Stale generated tests" in md and f"`{GEN}::test_f`" in md and f"`{GEN}::test_f_0` (calc.py::f)" in md
    assert "human's approval" in md
