"""tasks.ci.build with a selection, end to end: a real Prefect server, a real git repo, the local sandbox."""

from __future__ import annotations

import pytest
from prefect import flow

from mendflow.contracts import BuildReport, BuildStatus
from mendflow.settings import get_settings
from mendflow.store import open_store
from tasks.ci import build, resolve_source
from tests.fixtures.repos import RepoFactory

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

FIVE = "".join(f"def test_{i}() -> None:\n    assert {i} < 4\n\n\n" for i in range(5))
FILES = {"pyproject.toml": '[project]\nname = "five"\nversion = "0"\n', "tests/test_five.py": FIVE.rstrip() + "\n"}
CHOSEN = ["tests/test_five.py::test_1", "tests/test_five.py::test_4"]


@flow
def selected_build(repo: str, stage: str, select: list[str], reuse: bool = False) -> BuildReport:
    return build(resolve_source(repo, None, None), stage, reuse=reuse, select=select)


def test_a_selected_build_runs_only_those_tests(make_repo: RepoFactory) -> None:
    report = selected_build(str(make_repo(FILES, name="five")), "B1-rerun", CHOSEN)
    assert (report.tests.total, report.tests.passed) == (2, 1)
    assert (report.status, report.failed_tests, report.selected) == (
        BuildStatus.FAILED,
        ["tests/test_five.py::test_4"],
        CHOSEN,
    )
    assert report.failures[0].message == "assert 4 < 4"


def test_a_selected_build_does_not_reuse_the_published_suite(make_repo: RepoFactory) -> None:
    repo = make_repo(FILES, name="reused")
    whole = selected_build(str(repo), "B1", [])
    assert whole.tests.total == 5 and whole.selected == []
    settings = get_settings()
    assert open_store(settings.resolved_store_url(), settings).exists(
        f"repos/{whole.repo}/{whole.commit_sha}/B1/1/report.json"
    )
    again = selected_build(str(repo), "B1", CHOSEN, reuse=True)
    assert (again.tests.total, again.selected) == (2, CHOSEN)
