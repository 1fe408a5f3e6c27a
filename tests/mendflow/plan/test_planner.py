"""plan_tests on real repositories made in the test, offline and with the scripted LLM."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from mendflow.contracts import BuildReport, CaseKind, FileCoverage, Priority
from mendflow.errors import BudgetExceededError, InputError, LLMError
from mendflow.llm import LLMClient, TokenLedger
from mendflow.plan import plan_tests
from mendflow.settings import Settings
from tests.fixtures.llm_server import LLMServer, llm_settings
from tests.fixtures.repos import RepoFactory, commit_files
from tests.mendflow.plan.helpers import checkout_branch, measured_report, new_repo

V1 = """\
def scale(x):
    if x < 0:
        return 0
    return x * 2


def parse(text):
    text = text.strip()
    if not text:
        return None
    return int(text)


def helper(a, b):
    if a > b:
        return a
    return b
"""
V2_SIGNATURE = V1.replace("def scale(x):", "def scale(x, factor=2):").replace("return x * 2", "return x * factor")
V2_RAISE = V2_SIGNATURE.replace("        return None", '        raise ValueError("empty text")')
TESTS = "from shapes import helper\n\n\ndef test_helper():\n    assert helper(1, 2) == 2\n"
OFFLINE = Settings(_env_file=None)  # type: ignore[call-arg]


@pytest.fixture(scope="module")
def feature_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildReport]:
    """main: v1 + a later docs commit; feature (off v1): signature change, then a new raise. Read-only."""
    path = new_repo(tmp_path_factory.mktemp("planner") / "repo", {"shapes.py": V1, "tests/test_shapes.py": TESTS})
    checkout_branch(path, "feature", create=True)
    checkout_branch(path, "main")
    commit_files(path, {"README.md": "docs\n"}, "docs on main")
    checkout_branch(path, "feature")
    commit_files(path, {"shapes.py": V2_SIGNATURE}, "scale takes a factor")
    commit_files(path, {"shapes.py": V2_RAISE}, "parse refuses empty text")
    return path, measured_report(path)


def test_targets_are_the_functions_below_min_line_cov(feature_repo: tuple[Path, BuildReport]) -> None:
    path, report = feature_repo
    spec = plan_tests(report, path, None, OFFLINE.model_copy(update={"min_line_cov": 70.0}))
    assert {t.symbol for t in spec.targets} == {"scale", "parse", "helper"}  # helper: 66.7% < 70%

    spec = plan_tests(report, path, None, OFFLINE.model_copy(update={"min_line_cov": 60.0}))
    assert {t.symbol for t in spec.targets} == {"scale", "parse", ""}
    module = next(t for t in spec.targets if not t.symbol)  # helper's gap, now above the threshold
    helper_start = V2_RAISE.splitlines().index("def helper(a, b):") + 1
    assert module.missing_lines == [helper_start + 2]  # `return a`
    assert module.missing_branches == [(helper_start + 1, helper_start + 2)]
    assert module.ref == "shapes.py" and "outside the functions below 60%" in module.reasons[0]


def test_a_function_target_carries_the_branches_the_build_never_took(
    feature_repo: tuple[Path, BuildReport],
) -> None:
    path, report = feature_repo
    spec = plan_tests(report, path, None, OFFLINE)
    scale = next(t for t in spec.targets if t.symbol == "scale")
    start = V2_RAISE.splitlines().index("def scale(x, factor=2):") + 1

    assert scale.missing_branches == [(start + 1, start + 2), (start + 1, start + 3)]  # neither way was run
    assert not [t for t in spec.targets if not t.symbol]  # every gap lies in a function target


BRANCHY = """import os

if os.environ.get("SHAPES_LEGACY"):
    LEGACY = True


def clamp(x, hi):
    if x > hi:
        x = hi
    return x
"""
BRANCHY_TESTS = "from shapes import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 3) == 3\n"


def test_a_module_whose_gaps_lie_outside_any_weak_function_is_targeted_as_a_module(make_repo: RepoFactory) -> None:
    setup = 'from setuptools import setup\n\nsetup(name="shapes")\n'
    path = make_repo({"shapes.py": BRANCHY, "setup.py": setup, "tests/test_shapes.py": BRANCHY_TESTS})
    report = measured_report(path)
    assert report.coverage is not None
    file, script = report.coverage.file("shapes.py"), report.coverage.file("setup.py")
    assert file is not None and file.line_pct >= 80.0  # no function below the threshold: clamp is at 100 %
    assert script is not None and script.line_pct == 0.0

    spec = plan_tests(report, path, None, OFFLINE)

    assert [t.ref for t in spec.targets] == ["shapes.py"]  # importing setup.py would run setup()
    module = spec.targets[0]
    assert module.missing_lines == [4]  # module-level code
    assert module.missing_branches == [(3, 4), (8, 10)]  # its guard, and clamp's x <= hi
    assert "module line/branch coverage" in module.reasons[0]
    assert spec.cases and all(c.target_path == "shapes.py" for c in spec.cases)


def test_test_files_are_never_targets_even_when_coverage_counts_them(make_repo: RepoFactory) -> None:
    tests = BRANCHY_TESTS + "\n\ndef helper():\n    return 1\n"  # a helper no test calls: 0 % in its file
    path = make_repo({"shapes.py": BRANCHY, "tests/test_shapes.py": tests})
    report = measured_report(path)
    assert report.coverage is not None
    helper = FileCoverage(path="tests/test_shapes.py", statements=5, missing_lines=[8, 9], line_pct=60.0)
    coverage = report.coverage.model_copy(update={"files": [*report.coverage.files, helper]})
    spec = plan_tests(report.model_copy(update={"coverage": coverage}), path, None, OFFLINE)
    assert [t.ref for t in spec.targets] == ["shapes.py"]


def test_changed_signature_and_new_raise_since_the_merge_base_are_high_priority(
    feature_repo: tuple[Path, BuildReport],
) -> None:
    path, report = feature_repo
    spec = plan_tests(report, path, None, OFFLINE)
    by_symbol = {t.symbol: t for t in spec.targets}

    assert by_symbol["scale"].priority is Priority.HIGH  # changed two commits back: only the merge-base sees it
    assert any("public signature changed" in r for r in by_symbol["scale"].reasons)
    assert by_symbol["parse"].priority is Priority.HIGH
    assert any("raises new ValueError" in r for r in by_symbol["parse"].reasons)
    assert by_symbol["helper"].priority is Priority.NORMAL
    assert [t.symbol for t in spec.targets][-1] == "helper"  # high priority first


def test_parent_commit_is_the_base_without_a_target_branch(make_repo: RepoFactory) -> None:
    path = make_repo({"shapes.py": V1, "tests/test_shapes.py": TESTS})
    commit_files(path, {"shapes.py": V2_SIGNATURE}, "signature")
    commit_files(path, {"shapes.py": V2_RAISE}, "raise")
    spec = plan_tests(measured_report(path), path, None, OFFLINE, target_branch="no-such-branch")
    by_symbol = {t.symbol: t for t in spec.targets}

    assert by_symbol["parse"].priority is Priority.HIGH
    assert by_symbol["scale"].priority is Priority.NORMAL  # its change is older than the parent commit


def test_offline_cases_are_derived_from_the_code(feature_repo: tuple[Path, BuildReport]) -> None:
    path, report = feature_repo
    spec = plan_tests(report, path, None, OFFLINE)
    parse_cases = [c for c in spec.cases if c.target_path == "shapes.py::parse"]

    assert spec.planner == "offline"
    assert {c.kind for c in parse_cases} >= {CaseKind.SUCCESS, CaseKind.FAILURE}
    assert "parse raises ValueError when not text" in [c.goal for c in parse_cases]
    counts = {t.ref: sum(c.target_path == t.ref for c in spec.cases) for t in spec.targets}
    assert all(1 <= n <= 5 for n in counts.values())


def test_estimated_tokens_follow_the_seed_formula(feature_repo: tuple[Path, BuildReport]) -> None:
    path, report = feature_repo
    spec = plan_tests(report, path, None, OFFLINE)
    avg_steps = sum(len(c.steps) for c in spec.cases) / len(spec.cases)

    assert spec.estimated_tokens == round(len(spec.cases) * avg_steps * 60)
    assert "| `shapes.py::parse` | high |" in spec.rationale_md


def test_spec_id_is_stable_for_the_same_commit_and_targets(feature_repo: tuple[Path, BuildReport]) -> None:
    path, report = feature_repo
    assert plan_tests(report, path, None, OFFLINE).id == plan_tests(report, path, None, OFFLINE).id


def test_report_without_coverage_is_a_clear_input_error(feature_repo: tuple[Path, BuildReport]) -> None:
    path, report = feature_repo
    with pytest.raises(InputError, match="has no coverage data"):
        plan_tests(report.model_copy(update={"coverage": None}), path, None, OFFLINE)


# -- with the scripted LLM ---------------------------------------------------------------------------------


def _llm_answer(*refs: str) -> dict[str, object]:
    return {
        "cases": [
            {
                "name": f"test_case_{i}",
                "goal": f"goal for {ref}",
                "kind": "edge",
                "target_path": ref,
                "steps": ["arrange: x", "act: y"],
            }
            for i, ref in enumerate(refs)
        ],
        "rationale_md": "LLM says: parse is risky",
    }


def test_llm_plan_is_validated_into_the_spec(feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer) -> None:
    path, report = feature_repo
    scripted_llm.reply(
        _llm_answer("shapes.py::parse", "shapes.py::scale"),
        usage={"prompt_tokens": 300, "completion_tokens": 80},
    )
    llm = LLMClient(llm_settings(scripted_llm))
    plan = {"steps": ["let scale take a factor", {"description": "refuse empty text in parse"}]}
    spec = plan_tests(
        report.model_copy(update={"failed_tests": ["tests/test_x.py::test_y"]}), path, plan, OFFLINE, llm=llm
    )

    assert spec.planner == "llm" and spec.llm_tokens == 380
    assert [c.name for c in spec.cases if c.target_path == "shapes.py::parse"] == ["test_case_0"]
    assert "LLM says: parse is risky" in spec.rationale_md
    prompt = scripted_llm.chat_requests()[0]["messages"][1]["content"]
    for section in ("CHANGE SUMMARY", "COVERAGE GAPS", "FAILED TESTS", "CODE SNIPPETS"):
        assert section in prompt
    assert "refuse empty text in parse" in prompt and "tests/test_x.py::test_y" in prompt
    assert 'raise ValueError("empty text")' in prompt  # the code snippet of the target


def test_llm_cases_for_unknown_targets_are_discarded_and_gaps_filled_offline(
    feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer
) -> None:
    path, report = feature_repo
    scripted_llm.reply(_llm_answer("shapes.py::parse", "elsewhere.py::nothing"))
    spec = plan_tests(report, path, None, OFFLINE, llm=LLMClient(llm_settings(scripted_llm)))

    assert all(c.target_path != "elsewhere.py::nothing" for c in spec.cases)
    assert "unknown target 'elsewhere.py::nothing'" in spec.rationale_md
    assert any(c.target_path == "shapes.py::scale" and c.kind is CaseKind.SUCCESS for c in spec.cases)


def test_invalid_llm_json_is_retried_then_accepted(
    feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer
) -> None:
    path, report = feature_repo
    scripted_llm.reply("```json\nnot quite\n```")
    scripted_llm.reply(_llm_answer("shapes.py::parse"))
    spec = plan_tests(report, path, None, OFFLINE, llm=LLMClient(llm_settings(scripted_llm)))

    assert spec.planner == "llm"
    assert len(scripted_llm.chat_requests()) == 2


def test_llm_cases_breaking_the_schema_twice_raise_llm_error(
    feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer
) -> None:
    path, report = feature_repo
    bad = {"cases": [{"name": "t", "goal": "g", "target_path": "shapes.py::parse", "priority": "urgent"}]}
    scripted_llm.reply(bad)
    scripted_llm.reply(bad)
    with pytest.raises(LLMError, match="no valid PlanDraft"):
        plan_tests(report, path, None, OFFLINE, llm=LLMClient(llm_settings(scripted_llm)))


def test_rate_limited_llm_is_retried(feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer) -> None:
    path, report = feature_repo
    scripted_llm.fail(429)
    scripted_llm.reply(_llm_answer("shapes.py::parse"))
    spec = plan_tests(report, path, None, OFFLINE, llm=LLMClient(llm_settings(scripted_llm)))

    assert spec.planner == "llm"
    assert len(scripted_llm.chat_requests()) == 2


def test_planning_over_the_token_budget_raises(feature_repo: tuple[Path, BuildReport], scripted_llm: LLMServer) -> None:
    path, report = feature_repo
    llm = LLMClient(llm_settings(scripted_llm), TokenLedger(budget=50))  # the prompt alone is larger
    with pytest.raises(BudgetExceededError):
        plan_tests(report, path, None, OFFLINE, llm=llm)
    assert scripted_llm.chat_requests() == []


@pytest.mark.slow
def test_offline_planning_of_examples_calc_takes_under_4_seconds(make_repo: RepoFactory) -> None:
    calc = Path(__file__).resolve().parents[3] / "examples" / "calc"
    files = {
        str(p.relative_to(calc)): p.read_bytes()
        for p in calc.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".coverage" not in p.name
    }
    path = make_repo(files, name="calc")
    report = measured_report(path, source_dir="src")
    shutil.rmtree(path / ".coverage-data")

    started = time.perf_counter()
    spec = plan_tests(report, path, None, OFFLINE)
    elapsed = time.perf_counter() - started

    assert elapsed < 4.0
    assert spec.targets and spec.cases
    assert all(t.line_pct < OFFLINE.min_line_cov for t in spec.targets)
