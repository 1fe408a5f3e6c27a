"""Flow ``reindex_repo`` on a real Prefect server (the session fixture), publishing its artifact."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.settings import get_settings
from tests.fixtures.repos import commit_files


@pytest.fixture
def prefect_api(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MENDFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MENDFLOW_INDEX__BACKEND", "embedded")
    get_settings.cache_clear()
    request.addfinalizer(get_settings.cache_clear)
    try:
        return str(request.getfixturevalue("prefect_server").api_url)
    except pytest.FixtureLookupError:  # no real server in this checkout: the in-process harness
        from prefect.testing.utilities import prefect_test_harness

        harness = prefect_test_harness()
        harness.__enter__()
        request.addfinalizer(lambda: harness.__exit__(None, None, None))
        return "harness"


@pytest.mark.slow
def test_reindex_flow_reports_changes_and_publishes_an_artifact(prefect_api: str, sample_repo: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.reindex import reindex_repo

    [first] = reindex_repo(str(sample_repo))
    commit_files(sample_repo, {"README.md": None})
    [second] = reindex_repo(str(sample_repo), ref="HEAD")
    assert first.files.added == 4 and second.files.removed == 1 and second.previous_commit == first.commit

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["reindex-local-sample-head"]))
        )
    assert any(f"Indexed commit `{second.commit}`" in str(a.data) for a in artifacts)


@pytest.mark.slow
def test_reindex_flow_accepts_a_clone_url_and_fetches_new_commits(
    prefect_api: str, sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.reindex import reindex_repo
    from rag_indexer.api import open_index

    monkeypatch.setenv("MENDFLOW_CACHE_DIR", str(tmp_path / "cache"))
    get_settings.cache_clear()
    url = sample_repo.resolve().as_uri()  # file:///…/sample: cloned like any remote
    [first] = reindex_repo(url)
    commit_files(sample_repo, {"calc/extra.py": "def modulo(a, b):\n    return a % b\n"})
    [second] = reindex_repo(url)

    mirrors = list((tmp_path / "cache" / "repos").glob("sample-*.git"))
    assert len(mirrors) == 1 and first.repo == "local/sample"  # read from the cached mirror, named by its URL
    assert first.files.added == 4 and second.files.added == 1 and second.previous_commit == first.commit
    with open_index(get_settings(), repo=first.repo) as index:
        assert [h.path for h in index.definitions_of("modulo")] == ["calc/extra.py"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["reindex-local-sample-head"]))
        )
    assert any(f"Indexed commit `{second.commit}`" in str(a.data) for a in artifacts)
