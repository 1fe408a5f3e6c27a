"""The warm-up: which build modes a module's test files run the go command in, and what it runs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_go import warm


def _modes(tmp_path: Path, text: str) -> frozenset[str]:
    test_file = tmp_path / "x_test.go"
    test_file.write_text(f"package x\n\n{text}\n")
    return warm.modes_tests_build_in([test_file])


def test_a_go_command_run_with_race_names_the_race_mode(tmp_path: Path) -> None:
    assert _modes(tmp_path, 'var c = exec.Command("go", "test", "-race", "-run", "TestX")') == {warm.RACE}


def test_a_shell_line_in_a_raw_string_names_its_mode(tmp_path: Path) -> None:
    assert _modes(tmp_path, "const script = `go build -buildmode=plugin -o p.so p.go`") == {warm.PLUGIN}


def test_buildmode_and_plugin_as_two_arguments_name_the_plugin_mode(tmp_path: Path) -> None:
    assert _modes(tmp_path, 'var c = exec.Command("go", "build", "-buildmode", "plugin", "p.go")') == {warm.PLUGIN}


def test_a_comment_naming_race_outside_quotes_names_no_mode(tmp_path: Path) -> None:
    assert _modes(tmp_path, "// Run with -race: the counter is shared.\nvar c = 1") == frozenset()


def test_a_word_containing_race_is_not_the_flag(tmp_path: Path) -> None:
    assert _modes(tmp_path, 'var s = "the -race-free path"') == frozenset()


def test_the_warm_up_compiles_each_named_mode_beside_vet_and_the_tests(tmp_path: Path) -> None:
    main = tmp_path / warm.PLUGIN_MAIN
    build, beside = warm.stages(tmp_path / "cover.out", frozenset({warm.RACE, warm.PLUGIN}), main)
    assert build == [["go", "build", "./..."]]
    assert [argv[:3] for argv in beside[2:]] == [["go", "test", "-race"], ["go", "build", "-buildmode=plugin"]]
    assert all(f"-toolexec={warm.NO_LINK}" in argv for argv in beside[1:]) and beside[3][-1] == str(main)


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_the_warm_ups_tool_line_runs_no_covdata_and_every_other_go_command() -> None:
    line = shlex.split(warm.NO_LINK)  # as the go command splits -toolexec, then hands it the tool's argv
    covdata = subprocess.run([*line, "go", "tool", "covdata", "percent", "-i=/nonexistent"], capture_output=True)
    version = subprocess.run([*line, "go", "version"], capture_output=True)
    assert (covdata.returncode, covdata.stdout + covdata.stderr) == (0, b"")
    assert version.returncode == 0 and version.stdout.startswith(b"go version")


def test_the_build_writes_the_commands_into_the_directory_it_is_given(tmp_path: Path) -> None:
    (build,), _ = warm.stages(tmp_path / "cover.out", commands=tmp_path / "bin")
    assert build == ["go", "build", "-o", f"{tmp_path / 'bin'}/", "./..."]


def test_without_a_named_mode_the_warm_up_is_vet_beside_the_tests(tmp_path: Path) -> None:
    assert [argv[1] for argv in warm.stages(tmp_path / "cover.out")[1]] == ["vet", "test"]


def test_the_plugin_main_imports_each_package_for_its_side_effects(tmp_path: Path) -> None:
    main = warm.write_plugin_main(tmp_path / warm.PLUGIN_MAIN, ["fmt", "net/http"])
    assert main.read_text() == 'package main\n\nimport (\n\t_ "fmt"\n\t_ "net/http"\n)\n'
