"""The dependencies' build a Rust job keeps for the repository's next job (``mendflow_rust.cooked``), on a crate
with a dependency from crates.io and the real toolchain."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from mendflow_rust import cooked

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import snapshot
from tests.images.mendflow_rust.helpers import ITOA_LIB, ITOA_MANIFEST, example_files, run_rust_runner

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs the Rust toolchain")

CRATE = {"Cargo.toml": ITOA_MANIFEST, "src/lib.rs": ITOA_LIB}
# A build script is the repository's code that compiling it runs: its units are never kept.
BUILT_BY_A_SCRIPT = {**CRATE, "build.rs": "fn main() {}\n"}


def _job(source: Path, job: Path, cache: Path) -> BuildReport:
    """One job of ``source`` in its own directory (its workspace is ``job/work``) with the repository's cache."""
    return BuildReport.model_validate(run_rust_runner(source, job / "out", cache))


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / cooked.KEPT_DIR).glob("[!.]*/target"))


def _itoa(target: Path) -> Path:
    (rlib,) = (target / "debug" / "deps").glob("libitoa-*.rlib")
    return rlib


def _labels(target: Path) -> Path:
    """The crate's own test binary."""
    (binary,) = (p for p in (target / "debug" / "deps").glob("labels-*") if p.suffix == "")
    return binary


def test_the_first_job_keeps_the_dependencies_built_from_a_stub_without_the_crates_own(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo(BUILT_BY_A_SCRIPT), tmp_path / "src.tar.gz"), tmp_path / "first", cache)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
    (kept,) = _kept(cache)
    assert _itoa(kept).is_file()
    assert not list(kept.rglob("*labels*")), "the stub's own package was kept"


def test_the_next_job_compiles_its_crate_and_not_the_dependencies(make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    source = snapshot(make_repo(BUILT_BY_A_SCRIPT), tmp_path / "src.tar.gz")
    _job(source, tmp_path / "first", cache)
    (kept,) = _kept(cache)
    report = _job(source, tmp_path / "second", cache)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
    rlib = _itoa(tmp_path / "second" / "work" / "target")
    assert rlib.stat().st_mtime_ns == _itoa(kept).stat().st_mtime_ns  # the kept one, not compiled again


def test_the_first_job_keeps_its_crates_units_with_what_they_were_compiled_from(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo(CRATE), tmp_path / "src.tar.gz"), tmp_path / "first", cache)
    assert report.status is BuildStatus.PASSED, report.error_reason
    (kept,) = _kept(cache)
    compiled = cooked.Sources.read(kept.parent / cooked.SOURCES)
    assert _labels(kept).is_file() and compiled is not None
    assert sorted(compiled.digests) == ["Cargo.lock", "Cargo.toml", "src/lib.rs"]


def test_the_next_job_of_the_same_commit_compiles_nothing_and_measures_the_same(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    source = snapshot(make_repo(CRATE), tmp_path / "src.tar.gz")
    first = _job(source, tmp_path / "first", cache)
    (kept,) = _kept(cache)
    kept_time = _labels(kept).stat().st_mtime_ns
    second = _job(source, tmp_path / "second", cache)
    assert (second.status, second.tests.passed) == (BuildStatus.PASSED, 1), second.error_reason
    assert _labels(tmp_path / "second" / "work" / "target").stat().st_mtime_ns == kept_time
    assert second.coverage == first.coverage and first.coverage is not None


def test_a_kept_build_never_stands_in_for_the_crates_own_code(make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _job(snapshot(make_repo(CRATE), tmp_path / "src.tar.gz"), tmp_path / "first", cache)
    broken = {**CRATE, "src/lib.rs": ITOA_LIB.replace('"#{}"', '"no. {}"')}
    report = _job(snapshot(make_repo(broken), tmp_path / "broken.tar.gz"), tmp_path / "second", cache)
    assert (report.status, report.fail_reason, report.failed_tests) == (
        BuildStatus.FAILED,
        FailReason.TESTS,
        ["src/lib.rs::tests::labels"],
    )


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({**CRATE, ".cargo/config.toml": "[build]\nrustflags = []\n"}, id="a cargo config"),
        pytest.param({**example_files(), "build.rs": "fn main() {}\n"}, id="no dependency, a build script"),
    ],
)
def test_nothing_is_kept_for(files: dict[str, str | bytes | None], make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo(files), tmp_path / "src.tar.gz"), tmp_path / "job", cache)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert not (cache / cooked.KEPT_DIR).exists()


def test_a_changed_lockfile_is_another_key(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text(ITOA_MANIFEST)
    lock = '[[package]]\nname = "itoa"\nversion = "1.0.11"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n'
    (tmp_path / "Cargo.lock").write_text(lock)
    env = {"PATH": str(Path(shutil.which("cargo") or "cargo").parent)}
    first = cooked.cook_key(tmp_path, env)
    (tmp_path / "Cargo.lock").write_text(lock.replace("1.0.11", "1.0.10"))
    assert first and cooked.cook_key(tmp_path, env) not in (None, first)


# A fuzz target's package of its own, outside the crate's workspace (cargo-fuzz's layout): not in the lockfile.
FUZZ = {
    "fuzz/Cargo.toml": '[package]\nname = "labels-fuzz"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n',
    "fuzz/src/main.rs": "fn main() {}\n",
}
# A path dependency: the repository's own code, compiled as a stub by the stub's build.
UTIL = {
    "Cargo.toml": ITOA_MANIFEST + 'util = { path = "util" }\n',
    "src/lib.rs": ITOA_LIB.replace('"#42");', '"#42");\n        assert_eq!(util::answer(), 42);'),
    "util/Cargo.toml": '[package]\nname = "util"\nversion = "0.1.0"\nedition = "2021"\n',
    "util/src/lib.rs": "pub fn answer() -> u32 {\n    42\n}\n",
}


def test_a_package_outside_the_workspace_keeps_the_build_all_the_same(make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo({**CRATE, **FUZZ}), tmp_path / "src.tar.gz"), tmp_path / "job", cache)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert len(_kept(cache)) == 1


def test_a_path_dependency_is_built_from_its_code_and_kept_while_its_files_are_unchanged(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = _job(snapshot(make_repo(UTIL), tmp_path / "src.tar.gz"), tmp_path / "first", cache)
    (kept,) = _kept(cache)
    (util,) = (kept / "debug" / "deps").glob("libutil-*.rlib")
    util_time, labels_time = util.stat().st_mtime_ns, _labels(kept).stat().st_mtime_ns
    changed = {**UTIL, "src/lib.rs": "pub fn more() {}\n\n" + UTIL["src/lib.rs"]}
    second = _job(snapshot(make_repo(changed), tmp_path / "changed.tar.gz"), tmp_path / "second", cache)
    assert [(r.status, r.tests.passed) for r in (first, second)] == [(BuildStatus.PASSED, 1)] * 2
    target = tmp_path / "second" / "work" / "target"
    assert (target / "debug" / "deps" / util.name).stat().st_mtime_ns == util_time
    assert _labels(target).stat().st_mtime_ns != labels_time


def test_keeping_a_new_key_drops_the_other_keys_builds_but_not_one_being_made(tmp_path: Path) -> None:
    cache, built = tmp_path / "cache", tmp_path / "target"
    (built / "debug").mkdir(parents=True)
    old, making = cache / cooked.KEPT_DIR / "old-1" / "target", cache / cooked.KEPT_DIR / ".making-1-2"
    old.mkdir(parents=True)
    making.mkdir()
    new = cooked.Kept(cache, "new")
    new.keep(built)
    home = new.latest()
    assert home is not None and (home / "target" / "debug").is_dir()
    assert sorted(p.name for p in (cache / cooked.KEPT_DIR).iterdir()) == [".making-1-2", home.name]


def test_a_newer_build_of_the_same_key_is_a_directory_of_its_own(tmp_path: Path) -> None:
    cache, built = tmp_path / "cache", tmp_path / "target"
    (built / "debug").mkdir(parents=True)
    kept = cooked.Kept(cache, "key")
    kept.keep(built)
    first = kept.latest()
    kept.keep(built, cooked.Sources.of(tmp_path / "target", "/stable"))
    assert kept.latest() not in (None, first) and first is not None and not first.exists()


@pytest.mark.parametrize(
    ("files", "runs_none"),
    [
        pytest.param({"Cargo.toml": ITOA_MANIFEST}, True, id="plain"),
        pytest.param({"Cargo.toml": ITOA_MANIFEST, "build.rs": ""}, False, id="build.rs"),
        pytest.param({"Cargo.toml": ITOA_MANIFEST.replace("[dep", 'build = "gen.rs"\n\n[dep')}, False, id="build ="),
        pytest.param({"Cargo.toml": ITOA_MANIFEST + "\n[lib]\nproc-macro = true\n"}, False, id="proc macro"),
        pytest.param({"Cargo.toml": ITOA_MANIFEST, "util/Cargo.toml": "[package\n"}, False, id="unreadable"),
        pytest.param(
            {"Cargo.toml": ITOA_MANIFEST.replace("[dep", "build = false\n\n[dep"), "build.rs": ""}, True, id="off"
        ),
    ],
)
def test_compiling_runs_no_code_of_the_repositorys(files: dict[str, str], runs_none: bool, tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cooked.compiles_without_running_code(tmp_path) is runs_none


def _restored(tmp_path: Path, root: str) -> dict[str, float]:
    """The times of a tree's files after a kept build compiled at ``/stable`` from its ``same.rs`` is restored."""
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "same.rs").write_text("fn a() {}\n")
    (src / "changed.rs").write_text("fn b() {}\n")
    compiled = cooked.Sources.of(src, "/stable")
    (src / "changed.rs").write_text("fn c() {}\n")
    (tmp_path / "target" / "debug").mkdir(parents=True)
    cooked.Kept(cache, "key").keep(tmp_path / "target", compiled)
    found = cooked.Sources.of(src, root)
    assert cooked.Kept(cache, "key").restore(tmp_path / "restored", src, found)
    return {p.name: p.stat().st_mtime for p in src.iterdir()}


def test_a_restored_build_stamps_unchanged_files_old_and_changed_ones_after_it(tmp_path: Path) -> None:
    times = _restored(tmp_path, "/stable")
    assert times["same.rs"] == cooked.OLD and times["changed.rs"] > cooked.OLD


def test_a_build_compiled_at_another_root_counts_no_file_unchanged(tmp_path: Path) -> None:
    times = _restored(tmp_path, "/elsewhere")
    assert min(times.values()) > cooked.OLD


def test_a_crate_without_dependencies_keeps_its_own_units(make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo(example_files()), tmp_path / "src.tar.gz"), tmp_path / "job", cache)
    assert report.status is BuildStatus.PASSED, report.error_reason
    (kept,) = _kept(cache)
    assert list((kept / "debug" / "deps").glob("libduration-*.rlib"))


# A test that writes into the job's target directory, where a kept build is copied from.
POISONER = {
    **CRATE,
    "tests/poison.rs": (
        "#[test]\nfn poisons() {\n"
        '    let target = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/debug/poison");\n'
        '    std::fs::write(target, "x").unwrap();\n}\n'
    ),
}


def test_the_build_is_kept_before_any_test_runs(make_repo: RepoFactory, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = _job(snapshot(make_repo(POISONER), tmp_path / "src.tar.gz"), tmp_path / "job", cache)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason
    (kept,) = _kept(cache)
    assert (tmp_path / "job" / "work" / "target" / "debug" / "poison").is_file()
    assert not (kept / "debug" / "poison").exists()


def test_a_file_too_large_to_digest_in_each_job_always_counts_as_changed(tmp_path: Path) -> None:
    with (tmp_path / "data.bin").open("wb") as fh:
        fh.truncate(cooked.DIGESTED_BYTES + 1)
    (tmp_path / "lib.rs").write_text("fn a() {}\n")
    assert sorted(cooked.Sources.of(tmp_path, "/stable").digests) == ["lib.rs"]


def test_a_commit_adding_an_integration_test_compiles_the_test_and_not_the_crate(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    _job(snapshot(make_repo(CRATE), tmp_path / "src.tar.gz"), tmp_path / "first", cache)
    (kept,) = _kept(cache)
    (lib,) = (kept / "debug" / "deps").glob("liblabels-*.rlib")
    lib_time = lib.stat().st_mtime_ns
    added = {**CRATE, "tests/it.rs": '#[test]\nfn labels() {\n    assert_eq!(labels::label(7), "#7");\n}\n'}
    report = _job(snapshot(make_repo(added), tmp_path / "added.tar.gz"), tmp_path / "second", cache)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason
    assert (tmp_path / "second" / "work" / "target" / "debug" / "deps" / lib.name).stat().st_mtime_ns == lib_time


def test_a_build_of_the_dependencies_alone_stamps_every_file_as_changed_now(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    (src / "src").mkdir(parents=True)
    (src / "src" / "lib.rs").write_text("fn a() {}\n")
    os.utime(src / "src" / "lib.rs", (1.0, 1.0))  # unpacked before another job kept the build
    (tmp_path / "target").mkdir()
    cooked.Kept(cache, "key").keep(tmp_path / "target")
    before = time.time()
    assert cooked.Kept(cache, "key").restore(tmp_path / "restored", src, cooked.Sources.of(src, "/stable"))
    assert (src / "src" / "lib.rs").stat().st_mtime >= before
