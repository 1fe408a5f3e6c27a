"""What the repository's own GitHub Actions workflows install for their tests (nothing here is ever run).

A job that runs the tests says, in its install commands, which extras and groups they need: polyfactory 3.5.0's
test job runs ``uv sync --all-extras`` before ``uv run pytest tests``, and its tests import email-validator,
which only its ``pydantic`` extra brings. Jobs that run no tests (lint, docs, release) are not read: what they
install is not the tests' to need.

The runner is stdlib-only and workflows are YAML; only what is needed is read, line by line: the jobs under
``jobs:`` by their indentation, each step's ``run:`` commands (one line, or a ``|``/``>`` block), those of
the repository's own composite actions a step ``uses``, and the lines of its own shell scripts a command runs.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_KEY = re.compile(r"^(?P<indent>\s*)(?P<item>-\s+)?(?P<key>[\w.-]+):(?:\s+(?P<value>.*?))?\s*$")
_BLOCK = re.compile(r"^[|>][+-]?\d*$")  # a block scalar's header: the command is the lines below
# An install command (its extras and groups are what ``repo_config.commanded_extras`` reads).
_INSTALLS = re.compile(r"\b(?:sync|install)\b")
# A command that runs the tests: a test runner, or a task named for them (``make test``, ``hatch test``).
_RUNS_TESTS = re.compile(r"\b(?:pytest|py\.test|tox|nox|unittest)\b|(?<![\w-])tests?(?![\w-])")


def installs_for_tests(root: Path) -> list[str]:
    """The install commands of every job, in every workflow, that runs the tests."""
    found: list[str] = []
    for path in sorted((root / ".github" / "workflows").glob("*.y*ml")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for job in _jobs(text.splitlines()):
            commands = [*_commands(job), *(c for action in _local_actions(root, job) for c in _commands(action))]
            commands += [line for command in commands for line in _script_lines(root, command)]
            installs = [c for c in commands if _INSTALLS.search(c)]
            if any(_RUNS_TESTS.search(c) for c in commands if c not in installs):
                found += installs
    return found


def _jobs(lines: list[str]) -> list[list[str]]:
    """The lines of each job under the top-level ``jobs:`` key."""
    jobs: list[list[str]] = []
    inside, job_indent = False, -1
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            if jobs:
                jobs[-1].append(line)
            continue
        indent = len(line) - len(line.lstrip())
        if not inside:
            inside = indent == 0 and line.rstrip() == "jobs:"
            continue
        if indent == 0:
            break  # the next top-level key
        if job_indent < 0:
            job_indent = indent
        if indent == job_indent:
            jobs.append([])
        elif jobs and indent > job_indent:
            jobs[-1].append(line)
    return jobs


def _local_actions(root: Path, job: list[str]) -> list[list[str]]:
    """The lines of each of the repository's own composite actions a job's steps use (``uses: ./.github/actions/
    setup``, whose ``run:`` steps often hold the install)."""
    found: list[list[str]] = []
    for line in job:
        m = _KEY.match(line)
        if not m or m["key"] != "uses" or not (m["value"] or "").strip("'\"").startswith("./"):
            continue
        where = (root / m["value"].strip("'\"")).resolve()
        if not where.is_relative_to(root.resolve()):
            continue
        for name in ("action.yml", "action.yaml"):
            if (where / name).is_file():
                found.append((where / name).read_text(encoding="utf-8", errors="replace").splitlines())
                break
    return found


def _script_lines(root: Path, command: str) -> list[str]:
    """The lines of the repository's own shell script a command runs (``bash scripts/ci-test.sh``, ``./test.sh``),
    where a job's install and test commands often are (fastapi-pagination 0.16.1's ``uv sync --all-extras``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if words[:1] in (["bash"], ["sh"]) and len(words) > 1:
        words = words[1:]
    if not words or not words[0].endswith(".sh"):
        return []
    script = (root / words[0]).resolve()
    if not script.is_relative_to(root.resolve()) or not script.is_file():
        return []
    return _joined([line.strip() for line in script.read_text(encoding="utf-8", errors="replace").splitlines()])


def _commands(job: list[str]) -> list[str]:
    """The shell commands of a job's ``run:`` steps: a literal block's (``|``) lines, a folded (``>``) or plain
    scalar's lines as YAML folds them (into one), a line continued by ``\\`` joined to the next."""
    commands: list[str] = []
    value: list[str] | None = None  # the lines of the ``run:`` being read
    literal, key_indent = False, -1
    for line in job:
        indent = len(line) - len(line.lstrip())
        if value is not None and (not line.strip() or indent > key_indent):
            value.append(line.strip())
            continue
        if value is not None:
            commands += _scalar(value, literal)
            value = None
        m = _KEY.match(line)
        if m and m["key"] == "run" and m["value"]:
            literal = m["value"].startswith("|")
            key_indent = len(m["indent"]) + len(m["item"] or "")
            value = [] if _BLOCK.match(m["value"]) else [m["value"].strip("'\"")]
    return _joined(commands + _scalar(value or [], literal))


def _scalar(lines: list[str], literal: bool) -> list[str]:
    """A ``run:`` value's commands: a literal block's lines, or the lines YAML folds into one."""
    return lines if literal else [" ".join(line for line in lines if line)]


def _joined(lines: list[str]) -> list[str]:
    joined: list[str] = []
    carried = ""
    for line in lines:
        if line.endswith("\\"):
            carried += line[:-1] + " "
            continue
        if command := (carried + line).strip():
            joined.append(command)
        carried = ""
    return joined
