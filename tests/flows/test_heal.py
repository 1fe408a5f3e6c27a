"""Healing end to end: real Prefect server, real git repositories, the sandboxed runner, the scripted LLM.

Each repository is made of two commits: the first passes, the second changes the source only; the loop
must heal what an intended change broke (tests only) and report what a behaviour change broke.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from prefect import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateName
from prefect.flow_runs import resume_flow_run

from flows.heal import heal_commit
from flows.pipeline import self_healing_pipeline
from mendflow.contracts import CheckStatus, ErrorCategory, HealOutcome, HealResult, PipelineOutcome, PipelineResult
from mendflow.keys import RepoKeys
from mendflow.settings import get_settings
from mendflow.store import open_store
from tasks.outcome import pipeline_result
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import commit_files, private_home
from tests.flows.sample_repos import PYPROJECT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

SHAPES = "def area(width: float, height: float) -> float:\n    return width * height\n"
TESTS = "from shapes import area\n\n\ndef test_area() -> None:\n    assert area(2, 3) == 6\n"


def two_commits(
    make_repo: Any, after: dict[str, str | None], name: str = "shapes", pyproject: str = PYPROJECT
) -> tuple[Path, str]:
    path = make_repo({"pyproject.toml": pyproject, "shapes.py": SHAPES, "tests/test_shapes.py": TESTS}, name=name)
    return path, commit_files(path, dict(after), "refactor")


def heal_of(repo: Path, sha: str) -> HealResult:
    result = heal_commit(repo=str(repo), commit=sha, branch="main")
    assert isinstance(result, HealResult), result
    return result


@dataclass
class Renamed:
    """The loop's run on a commit that renamed the function the tests call, and what it stored."""

    repo: Path
    sha: str
    result: PipelineResult
    stored: list[str]


@pytest.fixture(scope="module")
def renamed(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> Renamed:
    """Module-scoped: the run (~30 s) serves each test of what healing a rename leaves behind."""
    with private_home(tmp_path_factory.mktemp("renamed")) as in_home:
        repo, sha = two_commits(in_home, {"shapes.py": SHAPES.replace("def area", "def surface")})
        result = self_healing_pipeline(repo=str(repo), commit=sha, branch="main")
        settings = get_settings()
        stored = open_store(settings.resolved_store_url(), settings).list(f"repos/local/shapes/{sha}/heal/B1")
    return Renamed(repo, sha, result, stored)


def test_a_renamed_function_is_healed_offline_and_merged(renamed: Renamed) -> None:
    result = renamed.result
    assert result.outcome is PipelineOutcome.HEALED, result.heal and result.heal.summary_md
    assert result.heal is not None and result.heal.b3 is not None and result.heal.b3.status.value == "PASSED"
    healed = pygit2.Repository(str(renamed.repo))[result.merged_sha].peel(pygit2.Commit).tree
    text = healed["tests/test_shapes.py"].data.decode()
    assert "from shapes import surface" in text and "assert surface(2, 3) == 6" in text
    assert healed["shapes.py"].data.decode() == SHAPES.replace("def area", "def surface")  # source untouched


def test_the_heal_commit_names_each_fix_and_its_method(renamed: Renamed) -> None:
    heal = renamed.result.heal
    assert heal is not None and heal.heal_commit_sha

    message = pygit2.Repository(str(renamed.repo))[heal.heal_commit_sha].peel(pygit2.Commit).message

    assert "- tests/test_shapes.py: deterministic:rename (update) — shapes.area renamed to shapes.surface" in message


def test_the_audit_trail_and_checklist_are_stored(renamed: Renamed) -> None:
    prefix = f"repos/local/shapes/{renamed.sha}/heal/B1"
    assert f"{prefix}/checklist.json" in renamed.stored and f"{prefix}/result.json" in renamed.stored
    kinds = [k.rsplit("/", 1)[-1] for k in renamed.stored if "/audit/" in k]
    assert len(kinds) >= 3


def test_an_import_through_a_dropped_reexport_is_healed_from_the_code_index(make_repo: Any) -> None:
    files = {"pyproject.toml": PYPROJECT, "shapes/__init__.py": "from shapes.core import area\n"}
    repo = make_repo({**files, "shapes/core.py": SHAPES, "tests/test_shapes.py": TESTS}, name="shapes")
    sha = commit_files(repo, {"shapes/__init__.py": '"""Shapes."""\n'}, "stop re-exporting area")

    result = self_healing_pipeline(repo=str(repo), commit=sha, branch="main")

    assert result.outcome is PipelineOutcome.HEALED, result.heal and result.heal.summary_md
    healed = pygit2.Repository(str(repo))[result.merged_sha].peel(pygit2.Commit).tree
    assert healed["tests/test_shapes.py"].data.decode().startswith("from shapes.core import area\n")


def test_a_lint_finding_in_a_test_is_cleared_by_the_repos_fixers_and_merged(make_repo: Any) -> None:
    unused = "import os\n" + TESTS.replace("test_area", "test_area_again")
    ruff = PYPROJECT + "\n[tool.ruff]\n"  # the repo chose ruff: its findings fail the build
    repo, sha = two_commits(make_repo, {"tests/test_again.py": unused}, name="linty", pyproject=ruff)

    result = self_healing_pipeline(repo=str(repo), commit=sha, branch="main")

    assert result.outcome is PipelineOutcome.HEALED, result.heal and result.heal.summary_md
    (entry,) = result.heal.checklist.entries if result.heal else ()
    assert (entry.test_id, entry.category, entry.history[0].healer) == (
        "tests/test_again.py", ErrorCategory.LINT, "deterministic:repo-fixers"
    )  # fmt: skip
    merged = pygit2.Repository(str(repo))[result.merged_sha].peel(pygit2.Commit).tree
    assert merged["tests/test_again.py"].data.decode() == TESTS.replace("test_area", "test_area_again")


def test_a_test_broken_only_by_what_a_broken_test_left_behind_is_healed_with_it(make_repo: Any) -> None:
    units = "UNIT = ['cm']\n\n\ndef set_unit(u):\n    UNIT[0] = u\n\n\ndef describe():\n    return UNIT[0]\n"
    metres = (
        "import shapes\n\n\ndef test_metres():\n    shapes.set_unit('m')\n    assert shapes.describe() == 'm'\n"
        "    shapes.set_unit('cm')\n"
    )
    default = "import shapes\n\n\ndef test_default_unit():\n    assert shapes.UNIT[0] == 'cm'\n"
    files = {"pyproject.toml": PYPROJECT, "shapes.py": units, "tests/test_a.py": metres, "tests/test_b.py": default}
    path = make_repo(files, name="units")
    sha = commit_files(path, {"shapes.py": units.replace("describe", "show")}, "rename")

    result = heal_of(path, sha)

    # test_default_unit fails on the unit test_metres left set (an assertion no change explains) and passes in
    # B3 once test_metres is repaired: healed with it, the whole suite deciding.
    assert result.outcome is HealOutcome.HEALED, result.summary_md
    assert {e.test_id: e.status for e in result.checklist.entries} == {
        "tests/test_a.py::test_metres": CheckStatus.HEALED,
        "tests/test_b.py::test_default_unit": CheckStatus.HEALED,
    }


def test_a_behaviour_change_is_reported_not_healed(make_repo: Any) -> None:
    repo, sha = two_commits(make_repo, {"shapes.py": SHAPES.replace("width * height", "width + height")})

    state = self_healing_pipeline(repo=str(repo), commit=sha, branch="main", return_state=True)

    result = pipeline_result(state)
    assert state.name == "Regression" and result.outcome is PipelineOutcome.REGRESSION
    assert result.heal is not None and result.heal.outcome is HealOutcome.NOT_HEALED
    entry = result.heal.checklist.entries[0]
    assert (entry.status, entry.category) == (CheckStatus.REGRESSION, ErrorCategory.ASSERTION)
    assert "agt/healer" not in "".join(pygit2.Repository(str(repo)).branches.local)


def test_a_flaky_test_is_quarantined_not_healed(make_repo: Any) -> None:
    # Fails in the build, passes when re-run on the same commit: flaky without a random number (the runner
    # passes its stage label to the job's environment, and jobs share nothing else).
    flaky = "import os\n\n\ndef test_flaky() -> None:\n    assert os.environ['MENDFLOW_JOB_STAGE'] != 'B1'\n"
    repo, sha = two_commits(make_repo, {"tests/test_flaky.py": flaky})

    result = heal_of(repo, sha)

    assert [(e.test_id, e.status) for e in result.checklist.entries] == [
        ("tests/test_flaky.py::test_flaky", CheckStatus.QUARANTINED)
    ]


def test_a_regression_gets_a_source_fix_proposed_on_its_own_branch_never_merged(
    make_repo: Any, scripted_llm: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    get_settings.cache_clear()
    repo, sha = two_commits(make_repo, {"shapes.py": SHAPES.replace("width * height", "width + height")}, "prop")
    main_before = str(pygit2.Repository(str(repo)).branches.local["main"].target)
    scripted_llm.reply({"reasoning": "the commit turned the product into a sum", "file_to_patch": "shapes.py",
                        "update": {"old_str": "width + height", "new_str": "width * height"}})  # fmt: skip

    state = self_healing_pipeline(repo=str(repo), commit=sha, branch="main", return_state=True)

    result = pipeline_result(state)
    assert result.outcome is PipelineOutcome.REGRESSION and result.heal is not None
    proposal = result.heal.proposal
    assert proposal is not None and proposal.passes == ["tests/test_shapes.py::test_area"], result.heal.summary_md
    git = pygit2.Repository(str(repo))
    fixed = git[proposal.commit_sha].peel(pygit2.Commit)
    assert fixed.tree["shapes.py"].data.decode() == SHAPES and str(fixed.parent_ids[0]) == sha
    assert proposal.branch_name in git.branches.local
    assert str(git.branches.local["main"].target) == main_before  # proposed, never merged


def test_a_proposal_that_edits_a_test_is_refused(
    make_repo: Any, scripted_llm: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    monkeypatch.setenv("MENDFLOW_HEAL__LLM_ATTEMPTS", "1")
    get_settings.cache_clear()
    repo, sha = two_commits(make_repo, {"shapes.py": SHAPES.replace("width * height", "width + height")}, "cheat")
    scripted_llm.reply({"reasoning": "expect the sum", "file_to_patch": "tests/test_shapes.py",
                        "update": {"old_str": "== 6", "new_str": "== 5"}})  # fmt: skip

    result = heal_of(repo, sha)

    assert result.outcome is HealOutcome.NOT_HEALED and result.proposal is None
    assert not [b for b in pygit2.Repository(str(repo)).branches.local if b.endswith("-proposal")]


def test_an_llm_repair_that_deletes_the_assertion_is_refused(
    make_repo: Any, scripted_llm: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    get_settings.cache_clear()
    # A signature change no deterministic rule can map: the LLM is asked, and first tries to cheat.
    repo, sha = two_commits(
        make_repo, {"shapes.py": "def area(size: tuple[float, float]) -> float:\n    return size[0] * size[1]\n"}
    )
    cheat = {"file_to_patch": "tests/test_shapes.py", "new_content": "def test_area() -> None:\n    pass\n"}
    fix = {
        "file_to_patch": "tests/test_shapes.py",
        "update": {"old_str": "assert area(2, 3) == 6", "new_str": "assert area((2, 3)) == 6"},
    }
    scripted_llm.reply(cheat)
    scripted_llm.reply(fix)

    result = heal_of(repo, sha)

    history = result.checklist.entries[0].history
    assert history[0].gate and not history[0].success  # the cheat never reached a build
    assert history[-1].success and history[-1].method.value == "update"
    assert result.outcome is HealOutcome.AWAITING_APPROVAL  # signature fixes are not auto-approved by default


def in_background(run: Callable[[], object]) -> threading.Thread:
    """``run`` in a thread that sees this test's Prefect settings (context variables do not cross threads)."""
    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,))
    thread.start()
    return thread


def wait_for_paused_run(timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"])))
            )
            if runs:
                return runs[0]
            time.sleep(1)
    raise AssertionError("no run paused for approval")


@dataclass
class Answered:
    """One heal run a human answered in the Prefect UI: what the flow returned and what it stored."""

    approve: bool
    returned: list[Any]
    stored: HealResult


@pytest.fixture(scope="module", params=[True, False], ids=["approved", "rejected"])
def answered(
    request: pytest.FixtureRequest, prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Answered]:
    """Module-scoped: each answer's run (~35 s) serves both the returned and the stored result's test."""
    approve: bool = request.param
    home = tmp_path_factory.mktemp(f"answer-{approve}")
    waits = {"MENDFLOW_HEAL__AUTO_APPROVE": "[]", "MENDFLOW_HEAL__APPROVAL_WAIT_SEC": "300"}
    with private_home(home, **waits) as in_home:
        path, sha = two_commits(in_home, {"shapes.py": SHAPES.replace("def area", "def surface")}, f"answer{approve}")
        returned: list[Any] = []
        runner = in_background(lambda: returned.append(heal_commit(repo=str(path), commit=sha, branch="main")))
        resume_flow_run(wait_for_paused_run().id, run_input={"approve": approve, "approver": "alice"})
        runner.join(300)
        settings = get_settings()
        key = RepoKeys(f"local/answer{approve}").heal_result(sha, "B1")
        stored = HealResult.model_validate_json(open_store(settings.resolved_store_url(), settings).get_bytes(key))
    yield Answered(approve, returned, stored)


def test_a_human_answers_in_the_prefect_ui(answered: Answered) -> None:
    outcome = HealOutcome.HEALED if answered.approve else HealOutcome.REJECTED
    assert answered.returned and answered.returned[0].outcome is outcome and answered.returned[0].approver == "alice"


def test_the_stored_result_says_what_the_human_answered(answered: Answered) -> None:
    outcome = HealOutcome.HEALED if answered.approve else HealOutcome.REJECTED
    assert (answered.stored.outcome, answered.stored.approver) == (outcome, "alice")
