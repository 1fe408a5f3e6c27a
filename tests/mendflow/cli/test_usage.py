"""Every usage error, bad setting and bad input is one line on stderr naming what to fix, exit 2, no traceback.

The real CLI runs as a subprocess: only that goes through ``main()``, where the one-line rule lives. Each
command has a row per kind of mistake: a missing argument or value, an unknown option, a malformed value,
and a bad setting in the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from mendflow.cli import _register_commands
from mendflow.cli.app import app
from mendflow.cli.errors import INTERNAL_EXIT

ROOT = Path(__file__).resolve().parents[3]  # a git work tree with a HEAD: "." for build, run and index
_register_commands()
COMMANDS = sorted(str(command.name) for command in app.registered_commands)


def mendflow(*args: str, cwd: Path = ROOT, state: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MENDFLOW_", "BUILD_TIMEOUT", "MIN_LINE", "PREFECT_API", "PREFECT_LOGGING"))
    }
    return subprocess.run(
        [sys.executable, "-m", "mendflow.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, "MENDFLOW_STATE_DIR": str(state), **env},
        timeout=120,
        check=False,
        cwd=cwd,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """Input files of every kind of wrong: not JSON, JSON of the wrong shape, a directory."""
    (tmp_path / "not.json").write_text("not json\n")
    (tmp_path / "empty.json").write_text("{}\n")
    (tmp_path / "dir.json").mkdir()
    return tmp_path


def test_every_command_is_in_the_table() -> None:
    covered = {args[0] for args, _ in MISSING + MALFORMED} | {args[0] for args, _, _ in SETTINGS}
    assert covered == set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_named(command: str, state: Path) -> None:
    assert_one_line(mendflow(command, "--bogus", state=state), "No such option", "--bogus")


MISSING = [
    (["build", "--commit"], "--commit"),
    (["run", "--deployment"], "--deployment"),
    (["heal", "--commit"], "--commit"),
    (["index", "--ref"], "--ref"),
    (["search"], "query"),
    (["grep"], "pattern"),
    (["webhook", "--port"], "--port"),
    (["plan"], "--report"),
    (["plan", "--report"], "--report"),
    (["gen"], "--spec"),
    (["reap", "--older-than"], "--older-than"),
    (["egress-proxy", "--listen"], "--listen"),
    (["metrics", "--host"], "--host"),
]


@pytest.mark.parametrize(("args", "word"), MISSING, ids=[" ".join(a) for a, _ in MISSING])
def test_a_missing_argument_is_named(args: list[str], word: str, state: Path) -> None:
    assert_one_line(mendflow(*args, state=state), word)


MALFORMED = [
    (["build", ""], "the repository is empty"),
    (["build", "/no/such/repository"], "/no/such/repository: no such path"),
    (["build", "https://"], "not a clone URL"),
    (["build", "ftp://host/x.git"], "not a clone URL"),
    (["build", ".", "--commit", "no-such-commit"], "no-such-commit"),
    (["build", "--launcher", "moon"], "--launcher"),
    (["run", "git@"], "not a clone URL"),
    (["heal", "/no/such/repository"], "/no/such/repository: no such path"),
    (["run", "--launcher", "moon"], "--launcher"),
    (["run", ".", "--deployment", "d/x", "--timeout", "abc"], "--timeout"),
    (["run", ".", "--deployment", "d/x", "--timeout", "-1"], "--timeout"),
    (["run", ".", "--deployment", "nameless"], "FLOW/DEPLOYMENT"),
    (["run", ".", "--wait"], "--deployment"),
    (["index", ""], "the path is empty"),
    (["index", "/no/such/tree"], "/no/such/tree"),
    (["index", ".", "--ref", "no-such-ref"], "no-such-ref"),
    (["search", " "], "the query is empty"),
    (["search", "x", "--k", "many"], "--k"),
    (["search", "x", "--k", "0"], "k must be at least 1"),
    (["search", "x", "--alpha", "2"], "alpha"),
    (["grep", ""], "the pattern is empty"),
    (["grep", "(x", "--regex"], "bad regular expression"),
    (["grep", "x", "--repo", "nobody/nothing"], "no indexed repository"),
    (["webhook", "--port", "x"], "--port"),
    (["plan", "--report", "/no/such/report.json"], "/no/such/report.json"),
    (["plan", "--report", "{files}/not.json"], "not JSON"),
    (["plan", "--report", "{files}/empty.json"], "not a valid BuildReport"),
    (["plan", "--report", "{files}/dir.json"], "Is a directory"),
    (["plan", "--report", "{files}/empty.json", "--repo", ""], "the repository is empty"),
    (["gen", "--spec", "/no/such/spec.json"], "/no/such/spec.json"),
    (["gen", "--spec", "{files}/not.json"], "not JSON"),
    (["gen", "--spec", "{files}/empty.json"], "not a valid TestSpec"),
    (["gen", "--spec", "{files}/empty.json", "--repo", "/no/such/repo"], "/no/such/repo"),
    (["reap", "--older-than", "soon"], "--older-than"),
    (["egress-proxy", "--listen", "nowhere"], "HOST:PORT"),
    (["reap", "--older-than", "-5"], "--older-than"),
    (["metrics", "--port", "x"], "--port"),
    (["metrics", "--port", "0"], "--port"),
]


@pytest.mark.parametrize(("args", "words"), MALFORMED, ids=[" ".join(a) for a, _ in MALFORMED])
def test_a_malformed_value_is_named(args: list[str], words: str, files: Path, state: Path) -> None:
    assert_one_line(mendflow(*(a.format(files=files) for a in args), state=state), words)


SETTINGS = [
    (["build", "."], "MENDFLOW_BUILD_TIMEOUT_SEC", "abc"),
    (["build", "."], "BUILD_TIMEOUT_SEC", "abc"),  # the seed's spelling, an alias
    (["build", "."], "MENDFLOW_SANDBOX__MEMORY_LIMIT_MB", "lots"),
    (["build", "."], "PREFECT_API_URL", "notaurl"),
    (["build", "."], "PREFECT_LOGGING_LEVEL", "chatty"),
    (["run", "."], "MENDFLOW_LAUNCHER", "moon"),
    (["heal", "."], "MENDFLOW_HEAL__MAX_ROUNDS", "many"),
    (["run", "."], "MENDFLOW_MERGE_MODE", "sometimes"),
    (["index", "."], "MENDFLOW_INDEX__BACKEND", "paper"),
    (["search", "x"], "MENDFLOW_INDEX__BACKEND", "paper"),
    (["grep", "x"], "MENDFLOW_INDEX__BACKEND", "paper"),
    (["webhook"], "MENDFLOW_WEBHOOK_PORT", "abc"),
    (["webhook"], "MENDFLOW_WEBHOOK_GITHUB_SECRET", ""),  # no secret at all: nothing could be verified
    (["plan", "--report", "r.json"], "MENDFLOW_MIN_LINE_COV", "most"),
    (["gen", "--spec", "s.json"], "MENDFLOW_PYNGUIN__SEARCH_TIME_SEC", "long"),
    (["reap"], "MENDFLOW_LAUNCHER", "moon"),
    (["metrics"], "PREFECT_API_URL", ""),  # unset: it would serve metrics of a private server
]


@pytest.mark.parametrize(("args", "variable", "value"), SETTINGS, ids=[f"{a[0]} {v}={x}" for a, v, x in SETTINGS])
def test_a_bad_setting_names_its_variable(args: list[str], variable: str, value: str, state: Path) -> None:
    assert_one_line(mendflow(*args, state=state, **{variable: value}), variable)


@pytest.mark.parametrize("command", ["build", "run"])
def test_an_unreachable_prefect_api_is_named(command: str, state: Path) -> None:
    result = mendflow(command, ".", state=state, PREFECT_API_URL="http://127.0.0.1:9/api")
    assert_one_line(result, "PREFECT_API_URL", "cannot be reached")


@pytest.mark.parametrize("command", ["build", "run"])
def test_no_repository_outside_a_repository(command: str, tmp_path: Path, state: Path) -> None:
    assert_one_line(mendflow(command, cwd=tmp_path, state=state), "not a git repository")


def test_an_unknown_command_through_the_installed_script(state: Path) -> None:
    script = Path(sysconfig.get_path("scripts")) / "mendflow"
    result = subprocess.run([str(script), "heel"], capture_output=True, text=True, timeout=60, check=False)
    assert_one_line(result, "No such command", "heel")


def test_a_bug_shows_its_traceback_and_exits_with_no_verdicts_code(state: Path) -> None:
    # once_cell's survey build died of a half-written module: exit 1 read as FAILED.
    crash = (
        "import sys, mendflow.cli as cli\n"
        "def _typer(argv):\n    raise RuntimeError('the bug')\n"
        "cli._typer = _typer\nsys.argv = ['mendflow', 'build']\ncli.main()\n"
    )
    result = subprocess.run([sys.executable, "-c", crash], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == INTERNAL_EXIT
    assert "RuntimeError: the bug" in result.stderr and "Traceback" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("internal error: a bug in mendflow, not a verdict")
