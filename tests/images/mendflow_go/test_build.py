"""The Go runner on real Go modules with the real toolchain: statuses, ids, coverage, the module proxy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mendflow_go import build, warm

from mendflow.ci.job import COMPILED_PHASES
from mendflow.contracts import BuildReport, BuildStatus, CoverageFormat, FailReason, FailureKind
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_go.helpers import example_files, go_env, golangci_lint, run_go_runner
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")


def _build(make_repo: RepoFactory, tmp_path: Path, go_cache: Path, *args: str, **files: str | None) -> BuildReport:
    source = snapshot(make_repo(example_files(**files)), tmp_path / "src.tar.gz")
    return BuildReport.model_validate(run_go_runner(source, tmp_path / "out", go_cache, *args))


def test_the_example_passes_with_its_tests_and_coverage(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache)
    assert (report.status, report.tests.passed, report.tests.total) == (BuildStatus.PASSED, 4, 4)
    assert report.coverage is not None and 0 < report.coverage.line_pct < 100
    assert report.test_command[:2] == ["go", "test"] and "-short" in report.test_command


def test_coverage_names_the_functions_and_says_it_has_no_branches(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache)
    assert report.coverage is not None
    assert (report.coverage.format, report.coverage.branch_data, report.coverage.branch_pct) == (
        CoverageFormat.GO,
        False,
        None,
    )
    bucket = report.coverage.file("bucket.go")
    assert bucket is not None
    reserve = next(s for s in bucket.symbols if s.name == "Bucket.Reserve")
    assert reserve.line_pct == 0.0 and reserve.start_line is not None
    assert set(reserve.missing_lines) <= set(bucket.missing_lines) and reserve.missing_lines
    allow = next(s for s in bucket.symbols if s.name == "Bucket.Allow")
    assert allow.line_pct == 100.0


# A function whose source is another language's (hcl 2.25.0's Ragel scanner): its blocks are named aaa.rl.
LINE_DIRECTIVE = "package ratelimit\n\n//line aaa.rl:1\nfunc scanned(n int) int {\n\treturn n + 1\n}\n"


def test_a_file_a_line_directive_names_leaves_the_functions_of_the_go_files_named(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"scanner.go": LINE_DIRECTIVE})
    assert report.coverage is not None and report.coverage.file("aaa.rl") is not None
    bucket = report.coverage.file("bucket.go")
    assert bucket is not None and "Bucket.Allow" in [s.name for s in bucket.symbols]


SHAPES = "package shapes\n\nfunc Area(w, h int) int {\n\treturn w * h\n}\n"
SHAPES_TESTED_ELSEWHERE = """\
package suite

import (
\t"testing"

\t"example.com/ratelimit/shapes"
)

func TestArea(t *testing.T) {
\tif shapes.Area(2, 3) != 6 {
\t\tt.Fatal("wrong area")
\t}
}
"""


def test_a_package_tested_from_another_package_of_the_module_is_covered(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    """olekukonko/tablewriter 1.1.5 tests its packages from tests/: measured by their own tests, 19.3 %."""
    files = {"shapes/shapes.go": SHAPES, "suite/shapes_test.go": SHAPES_TESTED_ELSEWHERE}
    report = _build(make_repo, tmp_path, go_cache, **files)
    shapes = report.coverage.file("shapes/shapes.go") if report.coverage else None
    assert shapes is not None and (shapes.line_pct, shapes.missing_lines) == (100.0, [])


FAILING = """\
package ratelimit

import "testing"

func TestIntervalIsWrong(t *testing.T) {
	l := Limit{Events: 4, Per: 1000000000, Burst: 4}
	if l.Interval() != 1 {
		t.Fatalf("interval %v, want 1ns", l.Interval())
	}
}
"""


def test_a_failing_test_is_its_directory_and_function_with_the_line_that_failed(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"wrong_test.go": FAILING})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == [".::TestIntervalIsWrong"]
    failure = report.failures[0]
    assert (failure.kind, failure.location) == (FailureKind.FAILED, "wrong_test.go:8")
    assert failure.message == "interval 250ms, want 1ns"
    assert (report.tests.failed, report.tests.passed) == (1, 4)


def test_code_that_does_not_compile_fails_the_build_in_the_compilers_words(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    broken = example_files()["limit.go"].replace("return limit, nil", "return limit")  # type: ignore[union-attr]
    report = _build(make_repo, tmp_path, go_cache, **{"limit.go": broken})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None and "limit.go:" in report.error_reason
    assert "not enough return values" in report.error_reason


def test_a_test_file_that_does_not_compile_fails_its_package_and_measures_nothing(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(
        make_repo, tmp_path, go_cache, **{"broken_test.go": "package ratelimit\n\nfunc oops() int { return }\n"}
    )
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["."]
    assert report.failures[0].kind is FailureKind.ERROR and "broken_test.go" in report.failures[0].traceback
    assert report.coverage is None  # the only package's tests never ran: no coverage, not 100 % of no statement


def test_a_test_package_that_cannot_load_an_import_fails_with_the_go_commands_words(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    # gopkg.in/yaml.v3 as published: its tests import gopkg.in/check.v1, which go test cannot load here.
    uses = 'package ratelimit\n\nimport (\n\t"testing"\n\n\t"gopkg.in/check.v1"\n)\n\n'
    uses += "func TestCheck(t *testing.T) { _ = check.Commentf }\n"
    report = _build(make_repo, tmp_path, go_cache, **{"check_test.go": uses})
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["."])  # not a "gopkg.in/check.v1" too
    assert "gopkg.in/check.v1" in report.failures[0].message


# Self-assignment is a vet check `go test` does not run itself (its printf check would fail the tests instead).
VET_AND_FORMAT = """\
package ratelimit

func describe(l Limit) string {
        l = l
        return l.String()
}
"""


def test_vet_and_gofmt_findings_fail_lint_with_their_file_and_code(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"describe.go": VET_AND_FORMAT})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    codes = sorted({(line.split(":", 1)[0], line.split(" ")[1]) for line in report.lint_errors})
    assert codes == [("describe.go", "gofmt"), ("describe.go", "vet")]
    assert any("vet self-assignment of l" in line for line in report.lint_errors)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: gofmt's verdicts are kept with it")
def test_the_next_job_runs_gofmt_on_no_file_it_judged_and_keeps_its_findings(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(example_files(**{"describe.go": VET_AND_FORMAT})), tmp_path / "src.tar.gz")
    cache, seed = tmp_path / "cache", {warm.SEED_ENV: str(go_std_seed)}
    first = BuildReport.model_validate(run_go_runner(source, tmp_path / "first", cache, **seed))
    second = BuildReport.model_validate(run_go_runner(source, tmp_path / "second", cache, **seed))
    assert "gofmt -l" in (tmp_path / "first" / "runner.log").read_text()
    assert "gofmt -l" not in (tmp_path / "second" / "runner.log").read_text()
    assert second.lint_errors == first.lint_errors
    assert any("describe.go:1:1 gofmt" in line for line in second.lint_errors)


GOLANGCI_CONFIG = 'version: "2"\nlinters:\n  default: none\n  enable:\n    - errcheck\n'
UNCHECKED = """\
package ratelimit

import "os"

func cleanup(path string) {
	os.Remove(path)
}
"""


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
def test_a_configured_golangci_lint_runs_and_its_findings_fail_lint(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{".golangci.yml": GOLANGCI_CONFIG, "cleanup.go": UNCHECKED})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    assert [line.split(" ", 2)[:2] for line in report.lint_errors] == [["cleanup.go:6:11", "errcheck"]]


GOLANGCI_V1_CONFIG = "run:\n  timeout: 5m\nlinters:\n  disable-all: true\n  enable:\n    - errcheck\n"
UNCHECKED_CHDIR = UNCHECKED.replace("os.Remove", "os.Chdir")  # os.Remove is among v2's std-error-handling exclusions


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
def test_a_golangci_v1_configuration_runs_as_migrated_and_says_so(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(
        make_repo, tmp_path, go_cache, **{".golangci.yml": GOLANGCI_V1_CONFIG, "cleanup.go": UNCHECKED_CHDIR}
    )
    assert (report.status, [line.split(" ", 2)[:2] for line in report.lint_errors]) == (
        BuildStatus.FAILED,
        [["cleanup.go:6:10", "errcheck"]],
    )
    assert report.lint_advisory == [
        ".:0:0 golangci-lint .golangci.yml is a golangci-lint v1 configuration: it ran as `golangci-lint migrate` "
        "converts it for the image's v2"
    ]


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
def test_the_next_job_runs_a_v1_configuration_as_converted_before(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    # hbollon/go-edlib 1.7.0: a refused run and `golangci-lint migrate` took a second of each warm job
    files = {".golangci.yml": GOLANGCI_V1_CONFIG, "cleanup.go": UNCHECKED_CHDIR}
    source = snapshot(make_repo(example_files(**files)), tmp_path / "src.tar.gz")
    cache, seed = tmp_path / "cache", {warm.SEED_ENV: str(go_std_seed)}
    first = BuildReport.model_validate(run_go_runner(source, tmp_path / "first", cache, **seed))
    second = BuildReport.model_validate(run_go_runner(source, tmp_path / "second", cache, **seed))
    assert "golangci-lint migrate" in (tmp_path / "first" / "runner.log").read_text()
    log = (tmp_path / "second" / "runner.log").read_text()
    assert "golangci-lint migrate" not in log and "exit=3" not in log
    assert (second.lint_errors, second.lint_advisory) == (first.lint_errors, first.lint_advisory)


def _lint_entries(cache: Path) -> dict[str, int]:
    """golangci-lint's cache entries in the repository's cache: each name with its last change."""
    return {p.name: p.stat().st_mtime_ns for p in (cache / "go" / "lint").rglob("*-[ad]")}


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: without it paths are the host's")
def test_the_next_job_lints_from_the_repositorys_golangci_lint_cache(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(example_files(**{".golangci.yml": GOLANGCI_CONFIG})), tmp_path / "src.tar.gz")
    cache, seed = tmp_path / "cache", {warm.SEED_ENV: str(go_std_seed)}
    run_go_runner(source, tmp_path / "first" / "out", cache, **seed)
    first = _lint_entries(cache)
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "second" / "out", cache, **seed))
    assert report.status is BuildStatus.PASSED
    assert first and set(_lint_entries(cache)) == set(first)


# A test that passes once it sees golangci-lint run (a process's comm, as /proc shows every process) while it does,
# and meanwhile writes the tree as a test may: a file every linter enabled by `default: all` would find fault with.
LINTER_WATCH_TEST = """\
package ratelimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const planted = `package ratelimit

import "os"

func planted() { os.Remove("x") }
`

func TestLinterRunsBeside(t *testing.T) {
	if err := os.WriteFile("planted.go", []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		comms, _ := filepath.Glob("/proc/[0-9]*/comm")
		for _, comm := range comms {
			if name, _ := os.ReadFile(comm); strings.TrimSpace(string(name)) == "golangci-lint" {
				return
			}
		}
	}
	t.Fatal("golangci-lint did not run beside the tests")
}
"""
# Slow enough to be running still when the tests start: every linter
GOLANGCI_ALL_CONFIG = 'version: "2"\nlinters:\n  default: all\n'


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: without it a test could write any path")
def test_golangci_lint_writing_the_repositorys_caches_lints_the_committed_tree_beside_the_tests(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    """It runs while the tests do, from a copy no test can write: a file a test writes meanwhile is not linted."""
    files = {".golangci.yml": GOLANGCI_ALL_CONFIG, "watch_test.go": LINTER_WATCH_TEST}
    source = snapshot(make_repo(example_files(**files)), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(
        run_go_runner(source, tmp_path / "out", tmp_path / "cache", **{warm.SEED_ENV: str(go_std_seed)})
    )
    assert report.failed_tests == [], report.failures
    assert not [line for line in report.lint_errors + report.lint_preexisting if "planted" in line]


# adrg/xdg 0.5.3's tests create files under ~/.local/share, as a pod's HOME (/tmp) lets them; with the job's home
# read-only in the tests' sandbox its DataFile fell through to /usr/local/share and failed
HOME_WRITING_TEST = """\
package ratelimit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWritesUnderHome(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".local", "share")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.data"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
}
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: without it every path is writable")
def test_a_test_may_write_the_jobs_own_home(make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path) -> None:
    job = tmp_path / "jobs" / "id"  # the local launcher's job directory, its home inside
    (job / "ws" / "home").mkdir(parents=True)
    source = snapshot(make_repo(example_files(**{"home_test.go": HOME_WRITING_TEST})), tmp_path / "src.tar.gz")
    env = {"MENDFLOW_JOB_DIR": str(job), "HOME": str(job / "ws" / "home"), warm.SEED_ENV: str(go_std_seed)}
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "out", tmp_path / "cache", **env))
    assert (report.status, report.failed_tests) == (BuildStatus.PASSED, []), report.failures
    assert (job / "ws" / "home" / ".local" / "share" / "app.data").read_text() == "kept"


# A custom linter is a Go plugin (.so) golangci-lint loads: code the repository could bring.
GOLANGCI_PLUGIN_CONFIG = GOLANGCI_CONFIG + "  settings:\n    custom:\n      mine:\n        path: mine.so\n"


@pytest.mark.skipif(golangci_lint() is None, reason="needs golangci-lint (scripts/build-go-tools.sh)")
def test_a_configuration_that_may_load_a_plugin_leaves_golangci_lints_cache_with_the_job(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(example_files(**{".golangci.yml": GOLANGCI_PLUGIN_CONFIG})), tmp_path / "src.tar.gz")
    cache = tmp_path / "cache"
    report = BuildReport.model_validate(
        run_go_runner(source, tmp_path / "out", cache, **{warm.SEED_ENV: str(go_std_seed)})
    )
    assert any("golangci-lint" in line for line in report.lint_errors), report.lint_errors
    assert not (cache / "go" / "lint").exists()


def test_golangci_lint_configured_where_it_is_absent_is_advice_not_silence(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    files = example_files(**{".golangci.yml": GOLANGCI_CONFIG, "cleanup.go": UNCHECKED})
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "out", go_cache, golangci=False))
    assert report.status is BuildStatus.PASSED
    assert report.lint_advisory == [
        ".:0:0 golangci-lint is configured but not installed where this job runs; its checks were skipped"
    ]


# zombiezen.com/go/sqlite 1.4.2 from the module proxy: its go.work uses a nested module the module's zip leaves out.
BROKEN_WORK = "go 1.22\n\nuse (\n\t. // the library\n\t./cmd/migrate\n)\n"


def test_a_workspace_using_a_module_the_tree_lacks_builds_without_it(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"go.work": BROKEN_WORK})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 4)
    said = "go.work uses ./cmd/migrate, which the tree lacks: built without the workspace (GOWORK=off)"
    assert report.lint_advisory == [f"go.work:0:0 build {said}"]


def test_a_workspace_of_the_modules_it_has_is_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/go.mod").write_text("module example.com/lib\n")
    (tmp_path / "go.work").write_text("go 1.22\n\nuse ./lib // the one module\n")
    assert build.missing_workspace_modules(tmp_path) == []


def test_select_runs_only_the_named_tests(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache, "--select", json.dumps([".::TestParseLimitBurst"]))
    assert (report.status, report.tests.total, report.selected) == (BuildStatus.PASSED, 1, [".::TestParseLimitBurst"])


def test_a_selection_outside_the_repository_is_bad_input(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, "--select", json.dumps(["../x::TestA"]))
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)


def test_a_repository_without_go_mod_is_bad_input(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"go.mod": None})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert report.error_reason is not None and "go.mod" in report.error_reason


def test_a_module_without_tests_says_so(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"limit_test.go": None, "bucket_test.go": None})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)


def test_a_newer_go_than_the_image_has_is_a_deterministic_dependency_error(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"go.mod": "module example.com/ratelimit\n\ngo 1.99\n"})
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        False,
    )
    assert report.error_reason is not None and "go 1.99" in report.error_reason.replace(">= 1.99", "go 1.99")


USES_UUID = """\
package ratelimit

import "github.com/google/uuid"

// Token names a reservation.
func Token() string { return uuid.NewString() }
"""
UUID_TEST = """\
package ratelimit

import "testing"

func TestTokenIsAUUID(t *testing.T) {
	if len(Token()) != 36 {
		t.Fatal("not a UUID")
	}
}
"""


def _with_uuid(tmp_path: Path, go_cache: Path) -> dict[str, str | bytes | None]:
    """The example requiring a real module from the module proxy, with the go.sum ``go mod tidy`` writes."""
    work = tmp_path / "tidy"
    work.mkdir()
    files = example_files(**{"token.go": USES_UUID, "token_test.go": UUID_TEST})
    for name, text in files.items():
        (work / name).write_text(str(text))
    env = {**go_env(tmp_path / "tidy-cache"), "GOFLAGS": "-modcacherw", "GOMODCACHE": str(tmp_path / "tidy-mod")}
    env["GOCACHE"] = str(tmp_path / "tidy-build")
    subprocess.run(["go", "get", "github.com/google/uuid@v1.6.0"], cwd=work, env=env, check=True, capture_output=True)
    return {**files, "go.mod": (work / "go.mod").read_text(), "go.sum": (work / "go.sum").read_text()}


def test_a_dependency_comes_from_the_module_proxy_and_the_tests_run_without_network(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    files = _with_uuid(tmp_path, go_cache)
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "out", go_cache))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5)
    log = (tmp_path / "out" / "runner.log").read_text()
    test_line = next(
        line for line in log.splitlines() if line.startswith("$") and " test -short" in line and "-json" in line
    )
    if shutil.which("bwrap"):
        assert "--unshare-net" in test_line  # the suite had no network
    assert (go_cache / "go" / "mod" / "github.com" / "google").is_dir()  # fetched into the repository's cache


def test_a_replacement_by_a_directory_the_tree_lacks_is_fetched_from_the_module_proxy(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    # go.opentelemetry.io/otel/trace 1.47.0's zip: `replace go.opentelemetry.io/otel => ../`, and no go.sum line
    # for that module's zip, which only its monorepo holds
    files = _with_uuid(tmp_path, go_cache)
    go_sum = "".join(line for line in str(files["go.sum"]).splitlines(keepends=True) if "google/uuid" not in line)
    go_mod = f"{files['go.mod']}\nreplace github.com/google/uuid => ../uuid\n"
    report = _build(make_repo, tmp_path, go_cache, **{**files, "go.mod": go_mod, "go.sum": go_sum})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5)
    said = "replace github.com/google/uuid => ../uuid, a directory the tree lacks: github.com/google/uuid from the"
    assert [a for a in report.lint_advisory if said in a] == [f"go.mod:0:0 build {said} module proxy instead"]


def test_a_replacement_by_a_module_of_the_tree_is_kept(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/go.mod").write_text("module example.com/lib\n")
    gomod = {"Replace": [{"Old": {"Path": "example.com/lib"}, "New": {"Path": "./lib"}}]}
    assert build.lacking_replacements(tmp_path, tmp_path, gomod) == []


# go-internal v1.16.0's cmd/testscript runs `go env` in its tests and expects the go command's default GOPROXY.
ASKS_GOPROXY = """\
package ratelimit

import (
	"os"
	"testing"
)

func TestGoproxyIsTheRepositorys(t *testing.T) {
	if os.Getenv("GOPROXY") == "off" || os.Getenv("GOSUMDB") == "off" {
		t.Fatalf("GOPROXY=%s GOSUMDB=%s", os.Getenv("GOPROXY"), os.Getenv("GOSUMDB"))
	}
}
"""


def test_the_tests_run_without_the_offline_steps_goproxy_off(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"goproxy_test.go": ASKS_GOPROXY})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5)


# A test that runs the go command in another build mode, and fails if that compiles a standard library package
# again (with -x the go command prints each tool it runs; a standard library package compiles with -std).
COMPILES_IN_OTHER_MODES = """package ratelimit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func compilesNoStandardPackage(t *testing.T, args ...string) {
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %v: %v\\n%s", args, err, out)
	}
	for _, line := range strings.Split(string(out), "\\n") {
		if strings.Contains(line, "/compile ") && strings.Contains(line, " -std ") {
			t.Fatalf("go %v compiled the standard library again: %.200s", args, line)
		}
	}
}

func TestARaceBuildFindsTheStandardLibraryCompiled(t *testing.T) {
	compilesNoStandardPackage(t, "build", "-race", "-x", "-o", os.DevNull, ".")
}

func TestAPluginBuildFindsTheStandardLibraryCompiled(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "p.so")
	compilesNoStandardPackage(t, "build", "-buildmode", "plugin", "-x", "-o", plugin, "plug/main.go")
}
"""
PLUGIN_SOURCE = """//go:build ignore

package main

import "fmt"

func Hello() string { return fmt.Sprint("hello") }
"""


def test_the_build_modes_a_test_runs_the_go_command_in_are_compiled_before_it_runs(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    """testify's suite tests run `go test -race`, xxhash's build a plugin: the warm-up compiles the standard library
    in those modes into the repository's cache, which the tests' own caches link to."""
    files = {"modes_test.go": COMPILES_IN_OTHER_MODES, "plug/main.go": PLUGIN_SOURCE}
    source = snapshot(make_repo(example_files(**files)), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(
        run_go_runner(source, tmp_path / "out", tmp_path / "cache", **{warm.SEED_ENV: str(go_std_seed)})
    )
    assert (report.status, report.failures, report.tests.passed) == (BuildStatus.PASSED, [], 6)


NO_NETWORK = ["unshare", "--net", "--"]


@pytest.mark.skipif(os.geteuid() != 0, reason="unshare --net needs root")
def test_split_at_the_dependency_phase_the_offline_half_needs_no_network_and_no_cache(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(_with_uuid(tmp_path, go_cache)), tmp_path / "src.tar.gz")
    archive, pod = tmp_path / "store" / "env.tar.gz", tmp_path / "pod"
    argv = [sys.executable, "-m", "mendflow_go", "--source", str(source), "--out", str(pod / "out")]
    first_cache, second_cache = tmp_path / "first-cache", tmp_path / "second-cache"
    phase = {"MENDFLOW_HANDOFF": str(archive), warm.SEED_ENV: str(go_std_seed)}
    first = subprocess.run(
        argv,
        env=go_env(first_cache, MENDFLOW_PHASE="dependencies", **phase),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert first.returncode == 0 and archive.is_file() and not (pod / "out" / "report.json").exists(), first.stdout[
        -2000:
    ]
    shutil.rmtree(pod)
    env = go_env(second_cache, MENDFLOW_PHASE="offline", **phase)
    second = subprocess.run([*NO_NETWORK, *argv], env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout[-2000:]
    report = BuildReport.model_validate_json((pod / "out" / "report.json").read_text())
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason


def _cache_entries(cache: Path) -> set[str]:
    """The build cache's entries (action and output files), in a job cache or a seed."""
    gocache = cache / "go" / "build" if (cache / "go").is_dir() else cache
    return {p.name for p in gocache.rglob("*-[ad]")}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: without it paths are the host's")
def test_a_second_job_in_another_workspace_compiles_nothing_new(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    """Go keys its build cache by a package's directory: every job sees its workspace at one path, so the
    repository's shared cache serves the next job, whose workspace has another path on the host."""
    source = snapshot(make_repo(example_files()), tmp_path / "src.tar.gz")
    cache, seed = tmp_path / "cache", {warm.SEED_ENV: str(go_std_seed)}
    run_go_runner(source, tmp_path / "first" / "out", cache, **seed)
    before = _cache_entries(cache)
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "second" / "out", cache, **seed))
    assert report.status is BuildStatus.PASSED
    assert _cache_entries(cache) == before


@pytest.mark.parametrize(
    ("name", "text", "has_them"),
    [
        ("cmd/tool/main.go", "// Copyright the authors.\n\npackage main\n", True),
        ("gen.go", "//go:build ignore\n\npackage main\n", False),
        ("cmd/tool/main_test.go", "package main\n", False),
        ("limit.go", "package ratelimit\n", False),
    ],
)
def test_a_module_has_commands_where_a_file_declares_package_main_under_no_constraint(
    tmp_path: Path, name: str, text: str, has_them: bool
) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    assert build.has_commands(tmp_path) is has_them


COMMAND = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("ratelimit") }\n'


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: without it paths are the host's")
def test_a_second_job_links_no_command_whose_inputs_did_not_change(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    """gorilla/websocket 1.5.3's four examples: `go build ./...` linked each one again in every job (2.1 s)."""
    source = snapshot(make_repo(example_files(**{"cmd/ratelimit/main.go": COMMAND})), tmp_path / "src.tar.gz")
    cache, seed = tmp_path / "cache", {warm.SEED_ENV: str(go_std_seed)}
    run_go_runner(source, tmp_path / "first" / "out", cache, **seed)
    (linked,) = (cache / "go" / "bin").glob("*/ratelimit")
    with linked.open("ab") as binary:  # past its build ID, which the go command compares: a new link drops it
        binary.write(b"first job")
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "second" / "out", cache, **seed))
    assert (report.status, linked.read_bytes()[-9:]) == (BuildStatus.PASSED, b"first job")


def test_a_command_built_on_another_system_alone_leaves_the_build_as_it_was(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    # no build constraint line, so it looks like a command, but its file name leaves nothing to build here
    report = _build(make_repo, tmp_path, go_cache, **{"cmd/win/main_windows.go": COMMAND})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 4), report.error_reason


TEST_ONLY_MAIN = {  # expr-lang/expr 1.17.8's test/examples: helpers in package main, its code all in a test
    "examples/blocks.go": 'package main\n\nfunc blocks() []string { return []string{"a"} }\n',
    "examples/examples_test.go": (
        'package main\n\nimport "testing"\n\nfunc TestBlocks(t *testing.T) {\n\tif len(blocks()) != 1 {\n'
        '\t\tt.Fatal("want one")\n\t}\n}\n'
    ),
}


def test_a_package_main_only_its_tests_use_builds(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache, **TEST_ONLY_MAIN)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason


def test_a_command_without_func_main_fails_the_build(make_repo: RepoFactory, tmp_path: Path, go_cache: Path) -> None:
    report = _build(make_repo, tmp_path, go_cache, **{"cmd/tool/tool.go": "package main\n\nfunc helper() {}\n"})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None and build.NO_MAIN in report.error_reason


def test_a_new_repositorys_first_job_compiles_its_own_packages_not_the_standard_library(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(example_files()), tmp_path / "src.tar.gz")
    cache = tmp_path / "cache"
    report = BuildReport.model_validate(
        run_go_runner(source, tmp_path / "out", cache, **{warm.SEED_ENV: str(go_std_seed)})
    )
    assert report.status is BuildStatus.PASSED
    seeded, now = _cache_entries(go_std_seed), _cache_entries(cache)
    # The example's one package: its build, vet, test and coverage actions; fmt, time, sync, testing and the
    # rest of what it imports would be hundreds.
    assert seeded < now and len(now - seeded) < 60, len(now - seeded)


def test_a_repository_whose_cache_exists_keeps_it(tmp_path: Path, go_std_seed: Path) -> None:
    gocache = tmp_path / "go" / "build"
    gocache.mkdir(parents=True)
    (gocache / "mine").write_text("kept")
    assert not warm.seed(gocache, {warm.SEED_ENV: str(go_std_seed)})
    assert [p.name for p in gocache.iterdir()] == ["mine"]


def test_a_seeded_cache_stays_the_repository_groups(tmp_path: Path, go_std_seed: Path) -> None:
    """The repository's cache directory is setgid to its group (the local launcher's): what the seed adds keeps
    that group and lets it write, as the go command's own entries do, for the next job's uid."""
    scope = tmp_path / "scope"
    scope.mkdir()
    scope.chmod(0o2770)
    gocache = scope / "go" / "build"
    old = os.umask(0o007)
    try:
        assert warm.seed(gocache, {warm.SEED_ENV: str(go_std_seed)})
    finally:
        os.umask(old)
    dirs = [gocache, *(p for p in gocache.rglob("*") if p.is_dir())]
    assert all(d.stat().st_mode & 0o2070 == 0o2070 for d in dirs)
    assert all(f.stat().st_mode & 0o060 == 0o060 for f in gocache.rglob("*") if f.is_file())


def test_a_seed_left_half_built_is_not_used(tmp_path: Path) -> None:
    half = tmp_path / "seed"
    (half / "00").mkdir(parents=True)
    assert not warm.seed(tmp_path / "go" / "build", {warm.SEED_ENV: str(half)})
    assert not (tmp_path / "go").exists()


def test_the_runner_announces_the_compiled_languages_phases_in_order(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    source = snapshot(make_repo(example_files()), tmp_path / "src.tar.gz")
    argv = [sys.executable, "-m", "mendflow_go", "--source", str(source), "--out", str(tmp_path / "out")]
    proc = subprocess.run(argv, env=go_env(go_cache), capture_output=True, text=True, timeout=600, check=True)
    claims = [
        json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("MENDFLOW_PROGRESS ")
    ]
    phases = [(c["done"], c["item"]) for c in claims if "tests_done" not in c]
    assert phases == list(enumerate(COMPILED_PHASES)) and {c["total"] for c in claims} == {len(COMPILED_PHASES)}


def test_runs_repeat_a_passing_selection_and_keep_the_first_runs_coverage(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, go_cache, "--select", json.dumps([".::TestParseLimitBurst"]), "--runs", "3")
    assert (report.status, report.runs, report.tests.total) == (BuildStatus.PASSED, 3, 1)
    assert report.coverage is not None and report.coverage.line_pct > 0


# Passes its first run and fails every later one: the marker is a file in its package, which the first run leaves.
FLAKY = """\
package ratelimit

import (
	"os"
	"testing"
)

func TestFlaky(t *testing.T) {
	_, err := os.Stat("ran-once")
	if err := os.WriteFile("ran-once", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err == nil {
		t.Fatal("ran before")
	}
}
"""


def test_a_test_that_fails_a_later_run_stops_the_runs_there(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    args = ("--select", json.dumps([".::TestFlaky"]), "--runs", "5")
    report = _build(make_repo, tmp_path, go_cache, *args, **{"flaky_test.go": FLAKY})
    assert (report.status, report.fail_reason, report.runs) == (BuildStatus.FAILED, FailReason.TESTS, 2)
    assert report.failed_tests == [".::TestFlaky"] and report.failures[0].message == "ran before"
