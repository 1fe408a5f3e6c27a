"""The offline steps' build cache program with the real go command: the shared cache read where it is, what the
job compiles written to the job's own cache only."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_go.build import CACHEPROG, PYTHON

from mendflow.contracts import BuildReport, BuildStatus
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_go.helpers import example_files, go_env, run_go_runner
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")

MARK = "MENDFLOW-CACHEPROG-MARK-8812"
# A test that compiles a program of its own, as testify's suite test runs `go test` (its go command finds the
# cache program in its environment). The program's text is made when the test runs, so only the program's own
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


def _holds(gocache: Path, text: str) -> bool:
    return any(text.encode() in p.read_bytes() for p in gocache.rglob("*-d") if p.is_file())


@pytest.fixture
def module(tmp_path: Path) -> Path:
    root = tmp_path / "module"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/marked\n\ngo 1.21\n")
    (root / "main.go").write_text(f'package main\n\nimport "fmt"\n\nfunc main() {{ fmt.Println("{MARK}") }}\n')
    return root


def _go(module: Path, shared: Path, own: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = go_env(module.parent / "home", golangci=False)
    env.update(GOCACHE=str(own), GOCACHEPROG=f"{PYTHON} -I -S {CACHEPROG} {shared} {own}", GOPROXY="off")
    return subprocess.run(["go", *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)


def test_the_go_command_builds_from_the_shared_cache_and_writes_only_its_own(
    module: Path, tmp_path: Path, go_std_seed: Path
) -> None:
    shared, own = tmp_path / "shared", tmp_path / "own"
    shutil.copytree(go_std_seed, shared)
    before = _entries(shared)
    built = _go(module, shared, own, "build", "-o", str(tmp_path / "marked"), ".")
    assert built.returncode == 0, built.stderr
    assert _entries(shared) == before and _holds(own, MARK)
    # fmt and the rest came from the shared cache: the job's holds the module's own few actions
    assert 0 < len(_entries(own)) < 20, len(_entries(own))


def test_what_the_job_compiled_serves_its_next_go_command(module: Path, tmp_path: Path, go_std_seed: Path) -> None:
    own = tmp_path / "own"
    assert _go(module, go_std_seed, own, "build", "-o", os.devnull, ".").returncode == 0
    compiled = _entries(own)
    assert _go(module, go_std_seed, own, "build", "-o", os.devnull, ".").returncode == 0
    assert _entries(own) == compiled


def test_a_test_that_compiles_a_program_writes_the_jobs_cache_not_the_repositorys(
    make_repo: RepoFactory, tmp_path: Path, go_cache: Path
) -> None:
    source = snapshot(make_repo(example_files(**{"compiles_test.go": COMPILES})), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(run_go_runner(source, tmp_path / "out", go_cache, golangci=False))
    assert (report.status, report.tests.failed) == (BuildStatus.PASSED, 0), report.error_reason
    assert not _holds(go_cache / "go" / "build", MARK)
