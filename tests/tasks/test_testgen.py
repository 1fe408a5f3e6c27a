"""The build-tests Prefect task on a real Prefect server, with the local launcher and a file store."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect import flow

from mendflow.contracts import BuildStatus, GeneratedTests
from mendflow.plan import plan_tests
from mendflow.settings import get_settings
from tasks.testgen import build_tests_task
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.prefect import PrefectServer
from tests.fixtures.repos import RepoFactory, local_source
from tests.mendflow.plan.helpers import measured_report

SOURCE = "def half(x):\n    if x % 2:\n        raise ValueError('odd')\n    return x // 2\n"
GOOD = "from half import half\n\n\ndef test_half_of_four():\n    assert half(4) == 2\n"


pytestmark = pytest.mark.usefixtures("mendflow_env")


@pytest.fixture
def env(scripted_llm: LLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LLMServer]:
    monkeypatch.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    monkeypatch.setenv("MENDFLOW_LLM__MAX_RETRIES", "0")
    monkeypatch.setenv("MENDFLOW_STATE_DIR", str(tmp_path / "state"))
    get_settings.cache_clear()
    yield scripted_llm
    get_settings.cache_clear()


@pytest.mark.slow
def test_task_commits_the_llm_tests(prefect_server: PrefectServer, env: LLMServer, make_repo: RepoFactory) -> None:
    repo = make_repo({"half.py": SOURCE, "tests/test_half.py": "def test_nothing():\n    pass\n"})
    report = measured_report(repo)
    shutil.rmtree(repo / ".coverage-data")
    spec = plan_tests(report, repo, None, get_settings(), use_llm=False)
    env.reply({"files": [{"path": "tests/test_half_mendflow.py", "content": GOOD}]})

    @flow
    def building() -> GeneratedTests:
        return build_tests_task(local_source(repo), spec)

    result = building()

    assert result.precheck is BuildStatus.PASSED, result.notes
    assert result.generator == "llm" and result.llm_tokens > 0
    assert result.branch_name == f"agt/testbuilder/{spec.id}"
