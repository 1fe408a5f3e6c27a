"""ci_build end to end: a real Prefect server, real git repos, the local sandbox, file and S3 stores."""

from __future__ import annotations

import json

import pygit2
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from flows.ci import ci_build
from mendflow.ci.lint_baseline import FIRST_ANALYSIS
from mendflow.contracts import BuildReport, BuildStatus, FailReason
from mendflow.settings import get_settings
from mendflow.store import open_store
from tests.fixtures.repos import commit_files
from tests.flows.sample_repos import (
    BROKEN_DEPENDENCY,
    FAILING,
    MALFORMED_PYPROJECT,
    PASSING,
    UNREACHABLE_INDEX,
    UNREACHABLE_INDEX_HOST,
    with_unused_import,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]


def stored_report(report: BuildReport, attempt: int = 1) -> BuildReport:
    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    key = f"repos/{report.repo}/{report.commit_sha}/{report.stage}/{attempt}/report.json"
    return BuildReport.model_validate_json(store.get_bytes(key))


def stored_keys(report: BuildReport) -> list[str]:
    settings = get_settings()
    return open_store(settings.resolved_store_url(), settings).list(f"repos/{report.repo}/{report.commit_sha}")


def test_passing_build_publishes_its_artefacts(make_repo) -> None:
    report = ci_build(repo=str(make_repo(PASSING, name="shapes")))
    assert report.status is BuildStatus.PASSED
    assert report.coverage is not None and report.coverage.line_pct == 75.0  # the raise is untested
    prefix = f"repos/local/shapes/{report.commit_sha}/build/1"
    assert {f"{prefix}/{name}" for name in ("report.json", "coverage.json", "junit.xml", "runner.log")} <= set(
        stored_keys(report)
    )
    assert not [key for key in stored_keys(report) if ".staging" in key]
    assert stored_report(report) == report


def test_build_leaves_report_and_coverage_artifacts_in_prefect(make_repo) -> None:
    report = ci_build(repo=str(make_repo(PASSING, name="artifacts")))
    wanted = ["build-local-artifacts-build", "build-local-artifacts-build-coverage"]
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=wanted)))
    assert sorted({a.key for a in found}) == wanted
    markdown = next(a for a in found if a.key == wanted[0])
    assert report.commit_sha[:12] in str(markdown.data)


def test_build_run_is_named_after_the_repository_and_commit(make_repo) -> None:
    state = ci_build(repo=str(make_repo(PASSING, name="named")), return_state=True)
    report = state.result()
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(state.state_details.flow_run_id)
    assert run.name == f"local/named@{report.commit_sha[:7]}"


def test_failing_test_is_a_result_not_retried(make_repo) -> None:
    report = ci_build(repo=str(make_repo(FAILING, name="failing")))
    assert report.status is BuildStatus.FAILED
    assert report.fail_reason is FailReason.TESTS
    assert report.failed_tests == ["tests/test_shapes.py::test_area"]
    assert not [key for key in stored_keys(report) if "/build/2/" in key]


def test_a_transient_error_is_retried_then_reported(make_repo, mendflow_env) -> None:
    mendflow_env.setenv(
        "MENDFLOW_SANDBOX__EGRESS_HOSTS", json.dumps(["pypi.org", "files.pythonhosted.org", UNREACHABLE_INDEX_HOST])
    )
    get_settings.cache_clear()
    report = ci_build(repo=str(make_repo(UNREACHABLE_INDEX, name="unreachable")))
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        True,
    )
    assert report.attempt == 3
    assert [stored_report(report, n).attempt for n in (1, 2, 3)] == [1, 2, 3]


def test_a_missing_package_errors_at_once_with_uvs_reason(make_repo) -> None:
    report = ci_build(repo=str(make_repo(BROKEN_DEPENDENCY, name="broken")))
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        False,
    )
    assert report.attempt == 1 and not [key for key in stored_keys(report) if "/build/2/" in key]
    assert report.error_reason is not None and "mendflow-no-such-package-anywhere" in report.error_reason


def test_malformed_pyproject_errors_with_a_reason(make_repo) -> None:
    report = ci_build(repo=str(make_repo(MALFORMED_PYPROJECT, name="malformed")))
    assert report.status is BuildStatus.ERRORED
    assert report.error_reason and "pyproject.toml" in report.error_reason


def test_build_publishes_to_s3_over_http(make_repo, s3_server, s3_bucket, mendflow_env) -> None:
    mendflow_env.setenv("MENDFLOW_STORE_URL", f"s3://{s3_bucket.name}/ci")
    mendflow_env.setenv("MENDFLOW_S3__ENDPOINT_URL", s3_server.endpoint_url)
    settings = s3_server.settings()
    mendflow_env.setenv("MENDFLOW_S3__ACCESS_KEY_ID", settings.access_key_id.get_secret_value())
    mendflow_env.setenv("MENDFLOW_S3__SECRET_ACCESS_KEY", settings.secret_access_key.get_secret_value())
    mendflow_env.setenv("MENDFLOW_S3__REGION_NAME", settings.region_name or "us-east-1")
    get_settings.cache_clear()
    report = ci_build(repo=str(make_repo(PASSING, name="s3repo")))
    assert report.status is BuildStatus.PASSED
    assert report.artefact_url.startswith(f"s3://{s3_bucket.name}/ci/repos/local/s3repo/")
    assert stored_report(report) == report


def test_a_finding_the_parent_has_too_is_listed_and_not_fatal(make_repo) -> None:
    repo = make_repo(with_unused_import("os"), name="old-lint")
    parent = str(pygit2.Repository(str(repo)).head.target)
    commit_files(repo, {"README.md": "shapes\n"})
    report = ci_build(repo=str(repo))
    assert (report.status, report.lint_errors) == (BuildStatus.PASSED, [])
    assert report.lint_preexisting == ["shapes.py:1:8 F401 `os` imported but unused"]
    assert report.lint_baseline == f"{parent} (lint)"  # the parent was never built: a lint-only job of it


def test_a_finding_the_commit_brought_fails_the_build(make_repo) -> None:
    repo = make_repo(with_unused_import("os"), name="new-lint")
    commit_files(repo, with_unused_import("os", "sys"))
    report = ci_build(repo=str(repo))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    assert report.lint_errors == ["shapes.py:2:8 F401 `sys` imported but unused"]
    assert report.lint_preexisting == ["shapes.py:1:8 F401 `os` imported but unused"]


def test_a_parent_built_before_is_the_baseline_without_a_lint_job(make_repo) -> None:
    repo = make_repo(with_unused_import("os"), name="built-parent")
    parent = ci_build(repo=str(repo), stage="B1")
    commit_files(repo, {"README.md": "shapes\n"})
    report = ci_build(repo=str(repo), stage="B1")
    assert (parent.status, parent.lint_baseline, report.status) == (
        BuildStatus.PASSED,
        FIRST_ANALYSIS,
        BuildStatus.PASSED,
    )
    assert report.lint_baseline == f"{parent.commit_sha} (B1)" and len(report.lint_preexisting) == 1
    assert not [key for key in stored_keys(parent) if "/lint/" in key]


def test_a_root_commit_is_the_first_analysis_its_findings_are_listed_not_fatal(make_repo) -> None:
    report = ci_build(repo=str(make_repo(with_unused_import("os"), name="root-lint")))
    assert (report.status, report.lint_errors, report.lint_baseline) == (BuildStatus.PASSED, [], FIRST_ANALYSIS)
    assert report.lint_preexisting == ["shapes.py:1:8 F401 `os` imported but unused"]
