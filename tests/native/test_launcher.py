"""The installed ``mendflow`` command, the native launcher (native/): each grep it answers prints what Python
prints, and whatever it cannot answer exactly it hands to Python with the same arguments.

Python's answers come from ``mendflow.cli.main`` run by the interpreter; the launcher's from a copy of the
installed binary beside a stand-in ``mendflow-py`` that records what it was handed, so a test tells an answer
of the launcher's own from one it passed on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from tests.fixtures.repos import commit_files
from tests.mendflow.cli.test_search import wait_for_pack

ROOT = Path(__file__).resolve().parents[2]
HANDED_OVER = 99
# Each kind of text the launcher must read as Python does: ASCII; a file past its first line marks (every
# 16th line); non-ASCII with CRLF line ends; a character re.IGNORECASE matches with an ASCII letter (KELVIN
# SIGN, k); a separator (\x1c) that str's \s matches and bytes' does not.
FILES = {
    "pkg/calc.py": 'def divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError("b is zero")\n',
    "pkg/values.py": "".join(f"value_{n} = {n}\n" for n in range(40)) + "TOTAL = 0  # ZeroDivisionError\n",
    "docs/dessert.md": "Crème brûlée\r\nZeroDivisionError in prose\r\nplain line\r\n",
    "docs/kelvin.txt": "273 \u212a is cold\n",
    "data/separated.txt": "a\x1cb ZeroDivisionError\n",
}

ANSWERED = [
    ["ZeroDivisionError"],
    ["brûlée"],
    ["-i", "zerodivisionerror"],
    ["--path", "pkg/", "-i", "VALUE_3"],
    ["value_39"],
    ["--regex", r"value_\d+ = 3\d"],
    ["-i", "--regex", r"^total\b"],
    ["--ignore-case", "--path", "docs/", "--regex", r"^zero\w+ON"],
    ["-i", "cold"],  # kelvin.txt holds U+212A, but "cold" has no k for it to stand for
    ["ZeroDivisionError", "--ref", "HEAD"],
    ["--", "-> no such text"],
]
HANDED = [
    ["-i", "k is cold"],  # re.IGNORECASE matches k with U+212A, which kelvin.txt holds
    ["-i", "crème"],  # a non-ASCII literal regardless of case: re decides
    ["--regex", r"(?<=value_)1"],  # a lookbehind
    ["--regex", r"in\s+prose"],  # \s may hold a newline, and dessert.md is not ASCII
    ["--regex", "x*"],  # a match may be empty
    ["--path", "pkg/*", "value"],  # a glob
    ["--help"],
    ["--bogus", "x"],
    ["two", "patterns"],
]


@dataclass
class Indexed:
    repo: Path
    state: Path


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the installed launcher beside a ``mendflow-py`` that records its arguments and exits 99."""
    installed = Path(sysconfig.get_path("scripts")) / "mendflow"
    if installed.read_bytes()[:4] != b"\x7fELF":
        if shutil.which("cargo") is None:
            pytest.skip("no cargo here, so mendflow was installed without its native launcher")
        pytest.fail(f"{installed} is not the native launcher: reinstall mendflow (uv sync) with cargo on PATH")
    where = tmp_path_factory.mktemp("launcher")
    shutil.copy2(installed, where / "mendflow")
    stand_in = where / "mendflow-py"
    stand_in.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$0.args"\nexit {HANDED_OVER}\n')
    stand_in.chmod(0o755)
    return where / "mendflow"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    """A real repository, indexed, with the pack and locator a first grep leaves."""
    repo = tmp_path_factory.mktemp("work") / "calc"
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, dict(FILES))
    pygit2.Repository(str(repo)).config["mendflow.repoid"] = "acme/calc"
    state = repo.parent / "state"
    assert python(["index", str(repo)], state, repo).returncode == 0
    python(["grep", "ZeroDivisionError"], state, repo)
    wait_for_pack(state)
    return Indexed(repo, state)


def native(
    launcher: Path, args: list[str | bytes], state: Path, cwd: Path, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """The launcher's answer, as bytes: text mode would hide a line's carriage return."""
    (launcher.parent / "mendflow-py.args").unlink(missing_ok=True)
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(state), **env}
    return subprocess.run([launcher, *args], env=env, cwd=cwd, capture_output=True, timeout=60)


def python(args: list[str], state: Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Python's answer (``mendflow.cli.main``), as bytes."""
    code = "import sys; sys.argv[0] = 'mendflow'; from mendflow.cli import main; main()"
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, timeout=120)


def handed(launcher: Path) -> list[str] | None:
    """The arguments the launcher handed to Python, or None when it answered itself."""
    record = launcher.parent / "mendflow-py.args"
    return record.read_text().splitlines() if record.exists() else None


@pytest.mark.parametrize("args", ANSWERED, ids=" ".join)
def test_a_plain_grep_is_answered_as_python_answers_it(args: list[str], launcher: Path, indexed: Indexed) -> None:
    expected = python(["grep", *args], indexed.state, indexed.repo)
    result = native(launcher, ["grep", *args], indexed.state, indexed.repo)
    assert handed(launcher) is None
    assert (result.returncode, result.stdout, result.stderr) == (expected.returncode, expected.stdout, b"")


def test_lines_past_the_line_marks_are_numbered_and_a_crlf_line_keeps_its_return_as_rg_prints_it(
    launcher: Path, indexed: Indexed
) -> None:
    result = native(launcher, ["grep", "ZeroDivisionError"], indexed.state, indexed.repo)
    assert b"docs/dessert.md:2:ZeroDivisionError in prose\r\n" in result.stdout
    assert b"pkg/values.py:41:TOTAL = 0  # ZeroDivisionError\n" in result.stdout


def test_a_grep_by_identity_is_answered_from_anywhere(launcher: Path, indexed: Indexed) -> None:
    elsewhere = indexed.repo.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    # Python answers first, and records where the identity stands
    expected = python(["grep", "value_7", "--repo", "acme/calc"], indexed.state, elsewhere)
    result = native(launcher, ["grep", "value_7", "--repo", "acme/calc"], indexed.state, elsewhere)
    assert handed(launcher) is None and result.stdout == expected.stdout == b"pkg/values.py:8:value_7 = 7\n"


@pytest.mark.parametrize("args", HANDED, ids=" ".join)
def test_what_it_cannot_answer_exactly_goes_to_python_unchanged(
    args: list[str], launcher: Path, indexed: Indexed
) -> None:
    result = native(launcher, ["grep", *args], indexed.state, indexed.repo)
    assert (result.returncode, result.stdout, handed(launcher)) == (HANDED_OVER, b"", ["grep", *args])


@pytest.mark.parametrize(
    "env", [{"PYTHONIOENCODING": "latin-1"}, {"LC_ALL": "en_US.ISO-8859-1"}, {"MENDFLOW_INDEX__BACKEND": "weaviate"}]
)
def test_a_grep_python_would_print_or_search_otherwise_goes_to_python(
    env: dict[str, str], launcher: Path, indexed: Indexed
) -> None:
    native(launcher, ["grep", "brûlée"], indexed.state, indexed.repo, **env)
    assert handed(launcher) == ["grep", "brûlée"]


def test_an_argument_that_is_not_utf8_goes_to_python(launcher: Path, indexed: Indexed) -> None:
    result = native(launcher, ["grep", b"br\xfbl"], indexed.state, indexed.repo)
    assert result.returncode == HANDED_OVER


@pytest.mark.parametrize("args", [["build", "."], ["search", "divide"], []], ids=" ".join)
def test_every_other_command_goes_to_python(args: list[str], launcher: Path, indexed: Indexed) -> None:
    native(launcher, args, indexed.state, indexed.repo)
    assert handed(launcher) == args


def test_a_repository_never_grepped_goes_to_python(launcher: Path, indexed: Indexed, tmp_path: Path) -> None:
    native(launcher, ["grep", "ZeroDivisionError"], tmp_path / "no-state", indexed.repo)
    assert handed(launcher) == ["grep", "ZeroDivisionError"]


def test_after_a_reindex_python_answers_until_it_locates_the_new_tree(launcher: Path, tmp_path: Path) -> None:
    repo = tmp_path / "moving"
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, dict(FILES))
    state = tmp_path / "state"
    python(["index", str(repo)], state, repo)
    python(["grep", "value_1"], state, repo)
    wait_for_pack(state)
    commit_files(repo, {"pkg/values.py": "value_1 = 'moved'\n"})
    assert python(["index", str(repo)], state, repo).returncode == 0
    native(launcher, ["grep", "value_1"], state, repo)
    assert handed(launcher) == ["grep", "value_1"]  # the old tree's pack would print 11 lines


def test_the_installed_launcher_hands_over_to_the_real_python_entry(indexed: Indexed) -> None:
    installed = Path(sysconfig.get_path("scripts")) / "mendflow"
    result = subprocess.run([str(installed), "grep", "--bogus"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (2, "error: No such option: --bogus (see --help)\n")


def test_the_launchers_own_tests_pass(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("no cargo here")
    target = os.environ.get("MENDFLOW_NATIVE_TARGET") or str(tmp_path / "target")
    command = ["cargo", "test", "--locked", "--quiet", "--manifest-path", str(ROOT / "native" / "Cargo.toml")]
    result = subprocess.run([*command, "--target-dir", target], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
