"""The plan-tests Prefect task on a real Prefect server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect import flow

from mendflow.contracts import BuildReport, BuildStatus, TestSpec
from mendflow.settings import get_settings
from tasks.plan import plan_fingerprint, plan_tests_task
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import RepoFactory, local_source
from tests.mendflow.plan.helpers import measured_report

SOURCE = "def half(x):\n    if x % 2:\n        raise ValueError('odd')\n    return x // 2\n"


pytestmark = pytest.mark.usefixtures("mendflow_env")


@pytest.fixture
def llm_env(scripted_llm: LLMServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    monkeypatch.setenv("MENDFLOW_LLM__MAX_RETRIES", "0")
    get_settings.cache_clear()
    yield scripted_llm
    get_settings.cache_clear()


@pytest.mark.slow
def test_task_plans_offline_when_the_llm_fails(
    prefect_server: PrefectServer, llm_env: LLMServer, make_repo: RepoFactory
) -> None:
    repo = make_repo({"half.py": SOURCE, "tests/test_half.py": "def test_nothing():\n    pass\n"})
    report = measured_report(repo)

    @flow
    def planning() -> TestSpec:
        return plan_tests_task(local_source(repo), report)

    spec = planning()  # nothing scripted: the server answers 500, no retry

    assert spec.planner == "offline"
    assert "LLM unavailable" in spec.rationale_md
    assert len(llm_env.chat_requests()) == 1
    assert any(c.goal == "half raises ValueError when x % 2" for c in spec.cases)


@pytest.mark.slow
def test_task_plans_with_the_llm(prefect_server: PrefectServer, llm_env: LLMServer, make_repo: RepoFactory) -> None:
    # The suite imports half, so its one gap is the function: no module-level target needs offline cases.
    repo = make_repo(
        {"half.py": SOURCE, "tests/test_half.py": "import half  # noqa: F401\n\n\ndef test_nothing():\n    pass\n"}
    )
    report = measured_report(repo)
    llm_env.reply(
        {
            "cases": [
                {
                    "name": "test_half_of_four",
                    "goal": "half(4) == 2",
                    "target_path": "half.py::half",
                    "steps": ["act: half(4)", "assert: 2"],
                }
            ]
        }
    )

    @flow
    def planning() -> TestSpec:
        return plan_tests_task(local_source(repo), report)

    spec = planning()

    assert spec.planner == "llm"
    assert [c.name for c in spec.cases] == ["test_half_of_four"]


def fingerprint_with(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    report = BuildReport(repo="o/r", commit_sha="c" * 40, status=BuildStatus.PASSED, artefact_url="file:///b/1")
    return plan_fingerprint(report, None, get_settings())


@pytest.mark.parametrize(
    "setting",
    [
        {"MENDFLOW_MIN_LINE_COV": "55"},
        {"MENDFLOW_LLM__MODEL": "other-model"},
        {"MENDFLOW_LLM__TOKEN_BUDGET_PER_RUN": "1000"},
        {"MENDFLOW_LLM__BASE_URL": "http://127.0.0.1:9/v1"},
    ],
)
def test_every_setting_that_shapes_a_plan_changes_its_key(
    monkeypatch: pytest.MonkeyPatch, setting: dict[str, str]
) -> None:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", "http://127.0.0.1:8/v1")
    before = fingerprint_with(monkeypatch)
    assert fingerprint_with(monkeypatch, **setting) != before
