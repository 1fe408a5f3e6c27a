"""The self-healing loop with an LLM: the real openai client against the scripted OpenAI-compatible server."""

from __future__ import annotations

import pygit2
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey
from prefect.client.schemas.objects import State

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import BuildStatus, DropReason, FailReason, PipelineOutcome, PipelineResult
from mendflow.settings import get_settings
from tasks.outcome import pipeline_result
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import private_home

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

PYPROJECT = """\
[project]
name = "half"
version = "0.1.0"
requires-python = ">=3.11"

[tool.mypy]
files = ["half.py", "tests"]
"""
SOURCE = """\
def half(x: int) -> int:
    if x % 2:
        raise ValueError("odd")
    return x // 2
"""
EXISTING = "from half import half\n\n\ndef test_half_of_four() -> None:\n    assert half(4) == 2\n"
RAISES = (
    "import pytest\n\nfrom half import half\n\n\ndef test_half_of_an_odd_number_raises() -> None:\n"
    "    with pytest.raises(ValueError):\n        half(3)\n"
)
# Passes under pytest, but mypy (which the repo configures, so B2 and the gates run it) rejects the str argument.
MISTYPED = RAISES + "    label: str = half(4)\n    assert label == 2\n"


def script(llm: LLMServer, test_file: str) -> None:
    llm.reply(
        {
            "cases": [
                {
                    "name": "odd_raises",
                    "goal": "half(3) raises ValueError",
                    "kind": "failure",
                    "target_path": "half.py::half",
                }
            ],
            "rationale_md": "the raise is untested",
        }
    )
    llm.reply({"files": [{"path": "tests/test_half_mendflow.py", "content": test_file}]})


@pytest.fixture
def llm_env(mendflow_env: pytest.MonkeyPatch, scripted_llm: LLMServer) -> LLMServer:
    for name, value in llm_values(scripted_llm.url).items():
        mendflow_env.setenv(name, value)
    get_settings.cache_clear()
    return scripted_llm


def llm_values(url: str) -> dict[str, str]:
    return {"MENDFLOW_LLM__BASE_URL": url, "MENDFLOW_LLM__API_KEY": "sk-test", "MENDFLOW_LLM__MAX_RETRIES": "0"}


@pytest.fixture(scope="module")
def merged(
    prefect_server: PrefectServer, llm_server: LLMServer, tmp_path_factory: pytest.TempPathFactory
) -> State[PipelineResult]:
    """Module-scoped: the LLM loop's run on a repo with one untested raise serves each test of a merged run."""
    llm_server.reset()
    with private_home(tmp_path_factory.mktemp("merged"), **llm_values(llm_server.url)) as make_repo:
        repo = make_repo({"pyproject.toml": PYPROJECT, "half.py": SOURCE, "tests/test_half.py": EXISTING}, "half")
        script(llm_server, RAISES)
        state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    llm_server.reset()
    return state


def test_llm_loop_merges_the_test_it_wrote(merged: State[PipelineResult]) -> None:
    result = pipeline_result(merged)
    assert result.outcome is PipelineOutcome.MERGED, result.regression
    assert result.spec is not None and result.spec.planner == "llm"
    assert result.generated is not None and result.generated.generator == "llm"
    assert [k.node_id for k in result.generated.kept] == [
        "tests/test_half_mendflow.py::test_half_of_an_odd_number_raises"
    ]
    assert result.b2 is not None and result.b2.coverage is not None and result.b2.coverage.line_pct == 100.0


def test_the_run_tells_its_story_in_artifacts(merged: State[PipelineResult]) -> None:
    assert merged.is_completed() and merged.name == "Merged"
    keys = ["coverage-b1-b2", "generated-tests", "pipeline-result", "testspec-cases"]
    this_run = ArtifactFilter(
        key=ArtifactFilterKey(any_=keys), flow_run_id=ArtifactFilterFlowRunId(any_=[merged.state_details.flow_run_id])
    )
    with get_client(sync_client=True) as client:
        found = {a.key: a for a in client.read_artifacts(artifact_filter=this_run)}
    assert sorted(found) == keys
    assert "+def test_half_of_an_odd_number_raises() -> None:" in str(found["generated-tests"].data)
    assert "merged" in str(found["pipeline-result"].data)


def test_a_generated_file_the_repos_mypy_rejects_is_dropped_in_the_gates(make_repo, llm_env: LLMServer) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "half.py": SOURCE, "tests/test_half.py": EXISTING})
    main_before = str(pygit2.Repository(str(repo)).branches.local["main"].target)
    script(llm_env, MISTYPED)
    result = pipeline_result(self_healing_pipeline(repo=str(repo), branch="main", return_state=True))
    assert result.outcome is PipelineOutcome.NO_TESTS_KEPT  # the user's commit passed B1: not its regression
    assert result.b2 is None and result.generated is not None  # B2 would have failed on it: it never got there
    [drop] = [d for d in result.generated.dropped if d.node_id == "tests/test_half_mendflow.py"][:1]
    assert drop.reason is DropReason.LINT and "mypy[assignment]" in drop.detail
    assert str(pygit2.Repository(str(repo)).branches.local["main"].target) == main_before  # nothing merged


DOUBLE = SOURCE + "\n\ndef double(x: int) -> int:\n    return x * 2\n"
# Both pass in the test builder's gates; the second fails in B2 (its stage), so B2 fails on it alone.
TWO_TESTS = (
    "import os\n\nimport pytest\n\nfrom half import double, half\n\n\n"
    "def test_half_of_an_odd_number_raises() -> None:\n    with pytest.raises(ValueError):\n        half(3)\n\n\n"
    "def test_double() -> None:\n    assert double(2) == 4\n"
    "    assert not os.environ.get('MENDFLOW_JOB_STAGE', '').startswith('B2')\n"
)


def test_a_generated_test_that_fails_b2_is_dropped_and_the_rest_merged(make_repo, llm_env: LLMServer) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "half.py": DOUBLE, "tests/test_half.py": EXISTING})
    script(llm_env, TWO_TESTS)
    result = self_healing_pipeline(repo=str(repo), branch="main")
    assert result.outcome is PipelineOutcome.MERGED, result.b3
    assert result.generated is not None
    assert [k.node_id for k in result.generated.kept] == [
        "tests/test_half_mendflow.py::test_half_of_an_odd_number_raises"
    ]
    assert result.generated.dropped[-1].node_id == "tests/test_half_mendflow.py::test_double"
    assert result.b3 is not None and result.b3.status is BuildStatus.PASSED
    merged = pygit2.Repository(str(repo))[result.merged_sha].peel(pygit2.Commit).tree
    text = merged["tests/test_half_mendflow.py"].data.decode()
    assert "test_double" not in text and "import os" not in text and "def test_half_of_an_odd" in text


# Kept by the gates (it runs the raise), but in B2 its import stops coverage.py's tracer: B2 passes measuring
# less of half.py than B1 did.
BLINDING = (
    "import os\nimport sys\n\nimport pytest\n\nfrom half import half\n\n"
    "if os.environ.get('MENDFLOW_JOB_STAGE', '').startswith('B2'):\n    sys.settrace(None)\n\n\n"
    "def test_half_of_an_odd_number_raises() -> None:\n    with pytest.raises(ValueError):\n        half(3)\n"
)


def test_a_b2_that_measures_less_than_b1_is_a_regression_and_nothing_is_merged(make_repo, llm_env: LLMServer) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "half.py": SOURCE, "tests/test_half.py": EXISTING})
    main_before = str(pygit2.Repository(str(repo)).branches.local["main"].target)
    script(llm_env, BLINDING)
    state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    result = pipeline_result(state)
    assert state.is_failed() and result.outcome is PipelineOutcome.REGRESSION
    assert result.b2 is not None and result.b2.status is BuildStatus.PASSED
    assert result.regression is not None and result.regression.fail_reason is FailReason.COVERAGE
    assert "line coverage" in (result.regression.error_reason or "")
    assert str(pygit2.Repository(str(repo)).branches.local["main"].target) == main_before
