"""The Rust runner on real crates with the real toolchain, clippy, rustfmt, LLVM's coverage tools and crates.io:
statuses, ids, coverage."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest
from mendflow_rust import libtest

from mendflow.contracts import BuildReport, BuildStatus, CoverageFormat, FailReason, FailureKind
from mendflow.launcher.local import reachable_sysroot
from tests.fixtures.repos import RepoFactory, commit_files
from tests.images.mendflow_runner.helpers import snapshot
from tests.images.mendflow_rust.helpers import ITOA_LIB, ITOA_MANIFEST, example_files, run_rust_runner

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs the Rust toolchain")

Files = dict[str, str | bytes | None]
LIB = example_files()["src/lib.rs"]
assert isinstance(LIB, str)


def _build(make_repo: RepoFactory, tmp_path: Path, cache: Path, files: Files, *args: str) -> BuildReport:
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    return BuildReport.model_validate(run_rust_runner(source, tmp_path / "out", cache, *args))


def test_the_example_passes_with_its_tests_and_coverage(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, rust_cache, example_files())
    assert (report.status, report.tests.passed, report.tests.total) == (BuildStatus.PASSED, 4, 4)
    assert report.test_command[:2] == ["cargo", "test"]
    assert report.coverage is not None and 0 < report.coverage.line_pct < 100


@pytest.mark.skipif(shutil.which("llvm-cov-22") is None, reason="needs LLVM 22's coverage tools (Debian's llvm-22)")
def test_coverage_names_the_functions_and_says_it_has_no_branches(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, rust_cache, example_files())
    assert report.coverage is not None
    assert (report.coverage.format, report.coverage.branch_data) == (CoverageFormat.LCOV, False)
    # tests/roundtrip.rs is a test target, not code under test (cargo-llvm-cov's default leaves it out too).
    assert [f.path for f in report.coverage.files] == ["src/lib.rs"]
    lib = report.coverage.file("src/lib.rs")
    assert lib is not None
    names = {s.name: s for s in lib.symbols}
    assert names["round_to"].line_pct == 0.0 and names["parse"].line_pct is not None and names["parse"].line_pct > 0


GENERIC = LIB.replace(
    "#[cfg(test)]",
    "/// Both, in order.\npub fn both<A, B>(a: A, b: B) -> (A, B) {\n    (a, b)\n}\n\n#[cfg(test)]",
).replace(
    "    #[test]\n    fn parses_hours_and_minutes() {",
    "    #[test]\n    fn pairs() {\n        assert_eq!(both(1, 'x'), (1, 'x'));\n    }\n\n"
    "    #[test]\n    fn parses_hours_and_minutes() {",
)


DOCTESTED = LIB.replace(
    "#[cfg(test)]",
    "/// One.\n///\n/// ```\n/// assert_eq!(duration::one(), 1);\n/// ```\n"
    "pub fn one() -> u32 {\n    1\n}\n\n#[cfg(test)]",
    1,
)


@pytest.mark.skipif(shutil.which("llvm-cov-22") is None, reason="needs LLVM 22's coverage tools (Debian's llvm-22)")
def test_doctests_that_ran_unmeasured_are_said(make_repo: RepoFactory, tmp_path: Path, rust_cache: Path) -> None:
    report = _build(make_repo, tmp_path, rust_cache, example_files(**{"src/lib.rs": DOCTESTED}))
    assert report.status is BuildStatus.PASSED and report.coverage is not None
    said = ".:0:0 coverage 1 doctest ran unmeasured: stable Rust cannot instrument doctests"
    assert said in report.lint_advisory


# static_assertions 1.1.0's shape: its code is all macros, its tests are their doctests.
MACROS_ONLY = (
    "/// Twice.\n///\n/// ```\n/// assert_eq!(duration::twice!(2), 4);\n/// ```\n"
    "#[macro_export]\nmacro_rules! twice {\n    ($x:expr) => {\n        $x * 2\n    };\n}\n"
)


@pytest.mark.skipif(shutil.which("llvm-cov-22") is None, reason="needs LLVM 22's coverage tools (Debian's llvm-22)")
def test_a_crate_of_macros_says_why_it_has_no_coverage(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    files = example_files(**{"src/lib.rs": MACROS_ONLY, "tests/roundtrip.rs": None})
    report = _build(make_repo, tmp_path, rust_cache, files)
    assert (report.status, report.coverage) == (BuildStatus.PASSED, None)
    said = ".:0:0 coverage `llvm-cov-22 export` failed: failed to load coverage: no coverage data found: no coverage"
    assert report.lint_advisory == [
        ".:0:0 coverage 1 doctest ran unmeasured: stable Rust cannot instrument doctests",
        said,
    ]


@pytest.mark.skipif(shutil.which("llvm-cov-22") is None, reason="needs LLVM 22's coverage tools (Debian's llvm-22)")
def test_a_generic_function_is_named_with_its_parameters(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    """A demangled generic's name holds a comma (``both::<i32, char>``), which LCOV's FN record also uses."""
    report = _build(make_repo, tmp_path, rust_cache, example_files(**{"src/lib.rs": GENERIC}))
    assert report.coverage is not None
    lib = report.coverage.file("src/lib.rs")
    assert lib is not None
    assert any(s.name.startswith("both::<") and ", " in s.name and s.line_pct == 100.0 for s in lib.symbols)


FAILING = LIB.replace(
    "    #[test]\n    fn parses_hours_and_minutes() {",
    '    #[test]\n    fn rounds_up() {\n        assert_eq!(round_to(90, 60), 60, "halves round down");\n    }\n\n'
    "    #[test]\n    fn parses_hours_and_minutes() {",
)


def test_a_failing_test_is_its_target_and_path_with_the_panic(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, rust_cache, example_files(**{"src/lib.rs": FAILING}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["src/lib.rs::tests::rounds_up"]
    failure = report.failures[0]
    assert (failure.kind, failure.location) == (FailureKind.FAILED, "src/lib.rs:96")
    assert failure.message == "assertion `left == right` failed: halves round down"
    assert (report.tests.failed, report.tests.passed) == (1, 4)


def test_select_runs_exactly_the_named_test(make_repo: RepoFactory, tmp_path: Path, rust_cache: Path) -> None:
    files = example_files(**{"src/lib.rs": FAILING})
    chosen = '["tests/roundtrip.rs::spaces_between_parts_are_allowed"]'
    report = _build(make_repo, tmp_path, rust_cache, files, "--select", chosen)
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 1, 0)


def test_code_that_does_not_compile_fails_the_build_in_the_compilers_words(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    broken = LIB.replace('return "0s".to_string();', "return 0;")
    report = _build(make_repo, tmp_path, rust_cache, example_files(**{"src/lib.rs": broken}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None and "src/lib.rs:" in report.error_reason and "E0308" in report.error_reason


def test_clippy_and_rustfmt_findings_fail_lint_with_their_file_and_code(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    extra = "pub fn count(v: &Vec<u64>) -> usize { v.len() }\n\n#[cfg(test)]"
    report = _build(
        make_repo, tmp_path, rust_cache, example_files(**{"src/lib.rs": LIB.replace("#[cfg(test)]", extra)})
    )
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    codes = sorted({(line.split(":", 1)[0], line.split(" ")[1]) for line in report.lint_errors})
    assert codes == [("src/lib.rs", "clippy::ptr_arg"), ("src/lib.rs", "rustfmt")]


def test_a_bench_that_needs_nightly_stops_no_other_targets_lint(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    # unicode-width, bitflags and indexmap as published: benches/ on #![feature(test)], which stable refuses.
    bench = "#![feature(test)]\nextern crate test;\n"
    tests = "#[test]\nfn counts() {\n    let v = vec![1u64];\n    assert!(v.len() >= 1);\n}\n"
    files = example_files(**{"benches/a_nightly.rs": bench, "benches/b_stable.rs": tests})
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    # One job at a time: cargo reaches the nightly bench first, and without --keep-going stops there.
    report = BuildReport.model_validate(run_rust_runner(source, tmp_path / "out", rust_cache, CARGO_BUILD_JOBS="1"))
    assert ("benches/b_stable.rs", "clippy::len_zero") in {
        (e.split(":", 1)[0], e.split(" ")[1]) for e in report.lint_errors
    }


def test_a_pinned_toolchain_the_image_does_not_have_is_said_with_the_release_that_ran(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    # convert_case 0.12.0 as published: rust-toolchain.toml's channel = "1.97.1", which rustup would download.
    pinned = '[toolchain]\nchannel = "1.97.1"\n'
    report = _build(make_repo, tmp_path, rust_cache, example_files(**{"rust-toolchain.toml": pinned}))
    release = subprocess.run(["rustc", "-V"], capture_output=True, text=True, check=True).stdout.split()[1]
    assert report.status is BuildStatus.PASSED, report.error_reason
    said = f"toolchain 1.97.1 is pinned: built and tested with rustc {release} (none is downloaded)"
    assert f"rust-toolchain.toml:0:0 {said}" in report.lint_advisory


def test_a_toolchain_kept_under_tmp_is_seen_inside_the_sandbox(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    """The local launcher's mirror of the sysroot lives in its base, which may be under /tmp, where each offline
    step's sandbox mounts a fresh /tmp."""
    mirror = reachable_sysroot(("rustc", "--print", "sysroot"), tmp_path)
    source = snapshot(make_repo(example_files()), tmp_path / "src.tar.gz")
    path = f"{mirror / 'bin'}:/usr/bin:/bin"  # the mirror's cargo and rustc, none of rustup's
    report = BuildReport.model_validate(run_rust_runner(source, tmp_path / "out", rust_cache, PATH=path))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 4), report.error_reason


def test_a_repository_without_cargo_toml_is_bad_input(make_repo: RepoFactory, tmp_path: Path, rust_cache: Path) -> None:
    report = _build(make_repo, tmp_path, rust_cache, {"src/lib.rs": "pub fn one() -> u8 { 1 }\n"})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert "no Cargo.toml" in (report.error_reason or "")


def test_a_crate_from_crates_io_is_fetched_then_built_and_tested_offline(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, rust_cache, {"Cargo.toml": ITOA_MANIFEST, "src/lib.rs": ITOA_LIB})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
    assert any(path.name.startswith("itoa-1.0.11") for path in (rust_cache / "cargo").rglob("itoa-*"))


def test_a_lockfile_out_of_step_with_cargo_toml_is_a_deterministic_dependency_error(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    files = example_files(**{"Cargo.toml": str(example_files()["Cargo.toml"]) + 'itoa = "=1.0.11"\n'})
    report = _build(make_repo, tmp_path, rust_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    assert report.transient is False and "cargo fetch --locked" in (report.error_reason or "")


PROC_MACRO_MANIFEST = '[package]\nname = "pm"\nversion = "0.1.0"\nedition = "2021"\n\n[lib]\nproc-macro = true\n'
PROC_MACRO_LIB = """\
use proc_macro::TokenStream;

/// Expands to the literal `42`.
///
/// ```
/// assert_eq!(pm::answer!(), 41);
/// ```
#[proc_macro]
pub fn answer(_input: TokenStream) -> TokenStream {
    compute().to_string().parse().unwrap()
}

fn compute() -> u32 {
    40 + 2
}

#[cfg(test)]
mod tests {
    #[test]
    fn computes() {
        assert_eq!(super::compute(), 42);
    }
}
"""


@pytest.fixture(scope="module")
def proc_macro_report(tmp_path_factory: pytest.TempPathFactory, rust_cache: Path) -> BuildReport:
    """async-trait's shape: a proc-macro crate, its unit test passing and a doctest failing."""
    tmp = tmp_path_factory.mktemp("proc-macro")
    pygit2.init_repository(str(tmp / "repo"), initial_head="main")
    commit_files(tmp / "repo", {"Cargo.toml": PROC_MACRO_MANIFEST, "src/lib.rs": PROC_MACRO_LIB})
    source = snapshot(tmp / "repo", tmp / "src.tar.gz")
    return BuildReport.model_validate(run_rust_runner(source, tmp / "out", rust_cache))


def test_a_proc_macros_failing_doctest_is_named_by_its_source(proc_macro_report: BuildReport) -> None:
    assert proc_macro_report.failed_tests == ["src/lib.rs::doc::src/lib.rs - answer (line 5)"]
    libtest.selection(proc_macro_report.failed_tests)  # what the healer reruns: an id --select takes


def test_a_proc_macros_code_is_left_out_of_coverage_and_says_why(proc_macro_report: BuildReport) -> None:
    # It runs inside rustc while the tests compile: no test binary's profile counts it (async-trait: 0.0 %).
    assert proc_macro_report.coverage is None
    assert any("proc-macro code runs inside the compiler" in a for a in proc_macro_report.lint_advisory)


def test_a_dependency_that_does_not_compile_fails_the_build_with_its_name_and_the_compilers_words(
    make_repo: RepoFactory, tmp_path: Path, rust_cache: Path
) -> None:
    # paste 1.0.15's dev-dependency paste-test-suite 0.0.0 on crates.io is a placeholder whose lib.rs is `@`; a git
    # dependency's checkout is, like a registry crate's, outside the workspace, in CARGO_HOME.
    placeholder = '[package]\nname = "placeholder-suite"\nversion = "0.0.0"\nedition = "2021"\n'
    dependency = make_repo({"Cargo.toml": placeholder, "src/lib.rs": "@\n"}, name="placeholder")
    manifest = ITOA_MANIFEST.replace('itoa = "=1.0.11"', f'placeholder-suite = {{ git = "file://{dependency}" }}')
    report = _build(
        make_repo, tmp_path, rust_cache, {"Cargo.toml": manifest, "src/lib.rs": "pub fn one() -> u8 {\n    1\n}\n"}
    )
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD), report.error_reason
    said = "placeholder-suite 0.0.0 (a dependency) does not compile: expected item, found `@` (src/lib.rs:1)"
    assert report.error_reason == f"`cargo test --no-run` failed: {said}"
