"""A job's own build cache for its offline steps, with the real go command: the shared cache read through links,
what the job compiles written to the job's own cache only."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from mendflow_go import jobcache, warm
from mendflow_go.build import JOBCACHE, PYTHON

from mendflow.contracts import BuildReport, BuildStatus
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_go.helpers import example_files, go_env, run_go_runner
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")

MARK = "MENDFLOW-JOBCACHE-MARK-8812"
# A test that compiles a program of its own, as testify's suite test runs `go test` (its go command finds the
# job's GOCACHE in its environment). The program's text is made when the test runs, so only the program's own
# compiled package holds MARK, not the test's (which the dependency phase compiles into the shared cache).
COMPILES = f"""\
package ratelimit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompilesAProgram(t *testing.T) {{
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/marked\\n\\ngo 1.21\\n"), 0o644)
	program := "package main\\n\\nfunc main() {{ println(\\"" + strings.ToUpper("{MARK.lower()}") + "\\") }}\\n"
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644)
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "marked"), ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {{
		t.Fatalf("%v: %s", err, out)
	}}
}}
"""


def _entries(gocache: Path) -> set[str]:
    return {p.name for p in gocache.rglob("*-[ad]")}


def _own_entries(gocache: Path) -> set[str]:
    """The entries the job's go commands wrote: files, not the links to the shared cache."""
    return {p.name for p in gocache.rglob("*-[ad]") if not p.is_symlink()}


def _holds(gocache: Path, text: str) -> bool:
    return any(text.encode() in p.read_bytes() for p in gocache.rglob("*-d") if p.is_file())


@pytest.fixture
def module(tmp_path: Path) -> Path:
    root = tmp_path / "module"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/marked\n\ngo 1.21\n")
    (root / "main.go").write_text(f'package main\n\nimport "fmt"\n\nfunc main() {{ fmt.Println("{MARK}") }}\n')
    # An hour old, as a checkout is by its build: the go command indexes a module directory into GOCACHE only once
    # it is over 2 s old, so a second build that came later than that wrote the index the first had not.
    hour_ago = time.time() - 3600
    for path in (root / "go.mod", root / "main.go", root):
        os.utime(path, (hour_ago, hour_ago))
    return root


def _job_cache(shared: Path, tmp_path: Path) -> Path:
    own = tmp_path / "own"
    own.mkdir()
    jobcache.link_shared(shared, own)
    return own


def _go(module: Path, own: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = go_env(module.parent / "home", golangci=False)
    env.update(GOCACHE=str(own), GOPROXY="off")
    return subprocess.run(["go", *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)


def test_every_entry_of_the_shared_cache_is_linked(tmp_path: Path, go_std_seed: Path) -> None:
    own = _job_cache(go_std_seed, tmp_path)
    assert _entries(own) == _entries(go_std_seed) and not _own_entries(own)


def test_the_script_makes_the_cache_then_runs_the_command_in_its_place(tmp_path: Path, go_std_seed: Path) -> None:
    own = tmp_path / "own"
    env = {**go_env(tmp_path / "home", golangci=False), "GOCACHE": str(own)}
    argv = [str(PYTHON), "-I", "-S", str(JOBCACHE), str(go_std_seed), str(own), "go", "env", "GOCACHE"]
    ran = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout.strip()) == (0, str(own)), ran.stderr
    assert _entries(own) == _entries(go_std_seed)


def test_the_shared_caches_own_files_are_not_linked(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "0a").mkdir(parents=True)
    (shared / "0a" / "0a11-a").write_text("v1")
    (shared / "trim.txt").write_text("1700000000")
    own = _job_cache(shared, tmp_path)
    assert sorted(p.relative_to(own).as_posix() for p in own.rglob("*")) == ["0a", "0a/0a11-a"]


def test_the_go_command_builds_from_the_shared_cache_and_writes_only_its_own(
    module: Path, tmp_path: Path, go_std_seed: Path
) -> None:
    shared = tmp_path / "shared"
    shutil.copytree(go_std_seed, shared)
    before = _entries(shared)
    built = _go(module, _job_cache(shared, tmp_path), "build", "-o", str(tmp_path / "marked"), ".")
    assert built.returncode == 0, built.stderr
    assert _entries(shared) == before and _holds(tmp_path / "own", MARK)


def test_the_shared_cache_serves_what_it_holds(module: Path, tmp_path: Path, go_std_seed: Path) -> None:
    own = _job_cache(go_std_seed, tmp_path)
    assert _go(module, own, "build", "-o", os.devnull, ".").returncode == 0
    # fmt and the rest came from the shared cache: the job's holds the module's own few actions
    assert 0 < len(_own_entries(own)) < 20, len(_own_entries(own))


def test_what_the_job_compiled_serves_its_next_go_command(module: Path, tmp_path: Path, go_std_seed: Path) -> None:
    own = _job_cache(go_std_seed, tmp_path)
    assert _go(module, own, "build", "-o", os.devnull, ".").returncode == 0
    compiled = _own_entries(own)
    assert _go(module, own, "build", "-o", os.devnull, ".").returncode == 0
    assert _own_entries(own) == compiled


def test_a_test_that_compiles_a_program_writes_the_jobs_cache_not_the_repositorys(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    source = snapshot(make_repo(example_files(**{"compiles_test.go": COMPILES})), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "out", go_cache, golangci=False))
    assert (report.status, report.tests.failed) == (BuildStatus.PASSED, 0), report.error_reason
    assert not _holds(go_cache / "go" / "build", MARK)


POISON = "MENDFLOW-POISONED-8812"
# A test that overwrites every entry its GOCACHE holds, links to the shared cache included. As with COMPILES, the
# text is made when the test runs: the test's own compiled package in the shared cache does not hold it.
POISONS = f"""\
package ratelimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverwritesTheBuildCache(t *testing.T) {{
	entries, _ := filepath.Glob(filepath.Join(os.Getenv("GOCACHE"), "*", "*-[ad]"))
	for _, entry := range entries {{
		os.WriteFile(entry, []byte(strings.ToUpper("{POISON.lower()}")), 0o644)
	}}
}}
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap: its binding is read-only")
def test_a_test_that_writes_through_the_links_leaves_the_repositorys_cache_alone(
    make_repo: RepoFactory, tmp_path: Path, go_std_seed: Path
) -> None:
    source = snapshot(make_repo(example_files(**{"poisons_test.go": POISONS})), tmp_path / "src.tar.gz")
    cache = tmp_path / "cache"
    report = BuildReport.model_validate(
        run_go_runner(source, tmp_path / "out", cache, golangci=False, **{warm.SEED_ENV: str(go_std_seed)})
    )
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 5), report.error_reason
    assert not _holds(cache / "go" / "build", POISON)
