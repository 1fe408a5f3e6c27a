"""A repository in another language than Python, end to end: its language detected, its CI image's runner run
by the local launcher with the real toolchain, and every stage after it honest about what it can do."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from flows.ci import ci_build
from flows.pipeline import self_healing_pipeline
from mendflow.contracts import BuildStatus, CoverageFormat, FailReason, Language, PipelineOutcome
from mendflow.settings import get_settings
from mendflow.store import open_store
from tasks.outcome import pipeline_result
from tests.fixtures.repos import RepoFactory, commit_files
from tests.images.mendflow_go.helpers import example_files
from tests.images.mendflow_java import helpers as java
from tests.images.mendflow_java.helpers import needs_maven
from tests.images.mendflow_node import helpers as node
from tests.images.mendflow_rust import helpers as rust

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
needs_rust = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs the Rust toolchain")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js and npm")


@needs_go
def test_a_go_module_builds_in_the_go_image_with_its_coverage(make_repo: RepoFactory) -> None:
    name = f"ratelimit-{uuid.uuid4().hex[:8]}"  # a repository this launcher base has never seen: no cache yet
    repo = make_repo(example_files(), name=name)
    report = ci_build(repo=str(repo))
    assert (report.language, report.status, report.tests.passed) == (Language.GO, BuildStatus.PASSED, 4)
    assert report.coverage is not None and report.coverage.format is CoverageFormat.GO
    settings = get_settings()
    keys = open_store(settings.resolved_store_url(), settings).list(f"repos/local/{name}/{report.commit_sha}")
    assert any(key.endswith("/build/1/coverage.json") for key in keys)
    log = next(key for key in keys if key.endswith("/build/1/runner.log"))
    # A new repository: its build cache starts as the launcher's standard library seed (mendflow.launcher.seeds).
    assert b"seeded with the image's standard library build" in open_store(
        settings.resolved_store_url(), settings
    ).get_bytes(log)
    # The next commit's job runs as another uid: it reads what the first one's go command added to the cache.
    commit_files(repo, {"README.md": "rate limits\n"}, message="docs")
    again = ci_build(repo=str(repo))
    assert (again.status, again.tests.passed) == (BuildStatus.PASSED, 4), again.error_reason


@needs_go
def test_the_loop_on_a_go_module_plans_its_gaps_and_says_no_generator_is_there(make_repo: RepoFactory) -> None:
    result = self_healing_pipeline(repo=str(make_repo(example_files(), name="ratelimit-loop")), branch="main")
    assert result.b1.status is BuildStatus.PASSED
    assert result.spec is not None and {t.path for t in result.spec.targets} <= {"bucket.go", "limit.go"}
    assert any(t.symbol == "Bucket.Reserve" for t in result.spec.targets)
    assert result.generated is not None and result.generated.generator == "none"
    assert result.generated.notes == ["no offline generator for go: the test builder writes go tests with an LLM only"]
    assert result.outcome is PipelineOutcome.NO_TESTS_KEPT


@needs_node
def test_a_typescript_project_builds_in_the_node_image_with_its_coverage(make_repo: RepoFactory) -> None:
    report = ci_build(repo=str(make_repo(node.example_files(), name="invoice")))
    assert (report.language, report.status, report.tests.passed) == (Language.TYPESCRIPT, BuildStatus.PASSED, 6)
    assert report.coverage is not None and report.coverage.format is CoverageFormat.LCOV


@needs_node
def test_a_yarn_lockfile_installs_through_the_egress_proxy(make_repo: RepoFactory) -> None:
    files = {
        "package.json": node.package_json("node --test test/", **{"is-number": "7.0.0"}),
        "yarn.lock": (node.LOCKS / "yarn.lock").read_text(),  # its URLs name registry.yarnpkg.com
        "test/is.test.mjs": node.USES_IS_NUMBER,
    }
    report = ci_build(repo=str(make_repo(files, name="yarn-project")))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason


@needs_node
def test_the_loop_on_a_typescript_project_says_no_generator_is_there(make_repo: RepoFactory) -> None:
    result = self_healing_pipeline(repo=str(make_repo(node.example_files(), name="invoice-loop")), branch="main")
    assert result.b1.status is BuildStatus.PASSED
    assert result.spec is not None and any(t.symbol == "formatTotals" for t in result.spec.targets)
    assert result.generated is not None and result.generated.generator == "none"
    assert result.outcome is PipelineOutcome.NO_TESTS_KEPT


@needs_rust
def test_a_rust_crate_builds_in_the_rust_image_with_a_dependency_through_the_egress_proxy(
    make_repo: RepoFactory,
) -> None:
    files = {"Cargo.toml": rust.ITOA_MANIFEST, "src/lib.rs": rust.ITOA_LIB}
    report = ci_build(repo=str(make_repo(files, name="labels")))
    assert (report.language, report.status, report.tests.passed) == (Language.RUST, BuildStatus.PASSED, 1)


@needs_rust
def test_the_loop_on_a_rust_crate_plans_its_gaps(make_repo: RepoFactory) -> None:
    result = self_healing_pipeline(repo=str(make_repo(rust.example_files(), name="duration-loop")), branch="main")
    assert result.b1.status is BuildStatus.PASSED and result.b1.tests.passed == 4
    assert result.spec is not None and any(t.symbol == "round_to" for t in result.spec.targets)
    assert result.outcome is PipelineOutcome.NO_TESTS_KEPT


@needs_maven
def test_a_maven_project_builds_in_the_java_image_through_the_egress_proxy(make_repo: RepoFactory) -> None:
    report = ci_build(repo=str(make_repo(java.example_files(), name="isbn")))
    assert (report.language, report.status, report.tests.passed) == (Language.JAVA, BuildStatus.PASSED, 5)
    assert report.coverage is not None and report.coverage.format is CoverageFormat.JACOCO


@needs_maven
def test_a_maven_wrapper_s_own_maven_builds_through_the_egress_proxy(make_repo: RepoFactory, tmp_path: Path) -> None:
    files = {**java.example_files(), **java.wrapper_files(tmp_path / "wrapper", "3.9.9")}
    report = ci_build(repo=str(make_repo(files, name="isbn-wrapper")))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason
    assert report.test_command[:2] == ["sh", "./mvnw"]


@needs_maven
def test_the_maven_repository_setting_is_every_pom_s_mirror_and_the_only_host_allowed(
    make_repo: RepoFactory, mendflow_env: pytest.MonkeyPatch
) -> None:
    # Another host of Maven Central: were a pom's repository (repo.maven.apache.org) not mirrored to it, the
    # egress proxy would refuse it.
    mendflow_env.setenv("MENDFLOW_LANGUAGES__MAVEN_REPOSITORY", "https://repo1.maven.org/maven2")
    get_settings.cache_clear()
    report = ci_build(repo=str(make_repo(java.example_files(), name="isbn-mirror")))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason


def test_a_gradle_build_is_bad_input_said_once(make_repo: RepoFactory) -> None:
    project = {"build.gradle": "plugins { id 'java' }\n", "src/main/java/Demo.java": "class Demo {}\n"}
    report = ci_build(repo=str(make_repo(project, name="gradle")))
    assert (report.status, report.fail_reason, report.language) == (
        BuildStatus.ERRORED,
        FailReason.BAD_INPUT,
        Language.JAVA,
    )
    assert report.error_reason is not None and "this is a Gradle build" in report.error_reason
    assert report.attempt == 1  # deterministic: not retried


FAILING_GO_TEST = """\
package ratelimit

import "testing"

func TestStringOfABurst(t *testing.T) {
	l := Limit{Events: 5, Per: 60000000000, Burst: 10}
	if l.String() != "5/min burst 20" {
		t.Fatalf("got %q", l.String())
	}
}
"""


@needs_go
def test_a_failing_go_test_is_a_regression_naming_it(make_repo: RepoFactory) -> None:
    repo = make_repo(example_files(**{"burst_test.go": FAILING_GO_TEST}), name="ratelimit-red")
    state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    result = pipeline_result(state)
    assert result.b1.status is BuildStatus.FAILED and result.b1.failed_tests == [".::TestStringOfABurst"]
    assert result.outcome is PipelineOutcome.REGRESSION
    assert result.regression is not None and result.regression.failed_tests == [".::TestStringOfABurst"]
