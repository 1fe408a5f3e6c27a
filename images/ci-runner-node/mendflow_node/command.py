"""Which test runner a project's ``test`` script runs, and with which of the repository's own arguments.

The script is the authority (rule: the repository's own commands): mendflow runs the runner it names, from
``node_modules/.bin``, with the script's arguments and environment assignments, and adds only its reporters and
coverage. A script that runs something else first (``tsc && jest``) is read for the segment that runs a known
runner (mendflow type-checks and lints in steps of its own); what the script runs after it only when it passed
(``node --test && tsd``, ``npm run unit && npm run types``), and a test runner mendflow does not read that it runs
before (``tap && jest``), run after the tests, judged by their exit codes. A
script mendflow cannot read (``make test``, a runner it does not know) runs as it is, judged by its exit code
alone.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

RUNNERS = ("vitest", "jest", "mocha")
# Words before the runner that only pass it along.
_LAUNCHERS = {"npx", "cross-env", "dotenv", "--", "exec"}
# Coverage wrappers whose own options come before the command they wrap: mendflow brings its own coverage.
_WRAPPERS = {"c8", "nyc"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = {"&&", "||", ";", "|", "&"}
# Runner arguments that would fight the reporters or never end (mendflow adds its own coverage and ``run``).
_DROPPED = {"--watch", "--watchAll", "--coverage", "--silent", "--run"}
_VITEST_MODES = {"run", "watch", "dev"}  # vitest's first word


@dataclass(frozen=True)
class TestCommand:
    runner: str  # vitest | jest | mocha | node (node --test) | script (the test script as it is)
    args: list[str] = field(default_factory=list)  # the repository's own arguments to the runner
    env: dict[str, str] = field(default_factory=dict)  # the script's VAR=value assignments
    then: list[list[str]] = field(default_factory=list)  # commands chained after the runner's with `&&`, as words


_MANAGERS = {"npm", "pnpm", "yarn"}
# `npm init`'s test script: a package that never wrote one, not a failing suite.
NPM_PLACEHOLDER = "Error: no test specified"
_MAX_DEPTH = 4  # scripts that run scripts: "test" → "npm run test:unit" → "c8 node --test"
# Chained after the tests but left to mendflow's own steps: its lint, whose rule is that only new findings fail,
# and its coverage, measured its own way (a `c8 check-coverage` would find no data of the script's c8).
_LINTERS = {"eslint", "standard", "semistandard", "xo", "prettier", "biome", "tslint"}
_COVERAGE_TOOLS = {"c8", "nyc", "istanbul", "codecov", "coveralls"}
_LINT_SCRIPT = re.compile(r"^(lint|format|prettier|style)(\b|[:-])")
# Test runners whose per-test results mendflow does not read. Run before the runner it reads, such a suite still
# runs, after the tests, judged by its exit code: process-warning 4.0.0's `npm run test:unit && npm run test:jest`
# runs tap's 18 files, then jest's one test.
_UNREAD_RUNNERS = {"tap", "tape", "ava", "borp", "uvu", "jasmine", "lab", "brittle", "zora"}


def read(script: str | None, scripts: dict[str, str] | None = None, depth: int = 0) -> TestCommand:
    """The runner ``script`` runs; ``scripts`` (package.json's) are followed where it runs one of them."""
    if not script or NPM_PLACEHOLDER in script:
        return TestCommand("none")
    words = _words(script)
    if words is None:
        return TestCommand("script")
    segments = _segments(words)
    for at, (segment, _) in enumerate(segments):
        command = _runner_of(segment)
        env, rest = _unwrapped(segment)  # `nyc npm run test-spec`: the script a wrapper or launcher runs
        if command is None and scripts and depth < _MAX_DEPTH and (name := _script_named(rest)) in scripts:
            command = read(scripts[name], scripts, depth + 1)
            command = None if command.runner in ("none", "script") else command
            if command is not None and env:
                command = TestCommand(command.runner, command.args, {**env, **command.env}, command.then)
        if command is not None:
            before = [words for words, _ in segments[:at] if _runs_unread_runner(words, scripts or {})]
            then = [*command.then, *before, *_chained_after(segments, at, scripts or {})]
            return TestCommand(command.runner, command.args, command.env, then)
    return TestCommand("script")


def _words(script: str) -> list[str] | None:
    """The script's words as the shell splits them ("test:unit", "@scope/pkg"), operators apart; None if it
    cannot be split (an unbalanced quote)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def _runs_unread_runner(words: list[str], scripts: dict[str, str], depth: int = 0) -> bool:
    """Whether a command, or the package script it runs, runs a test runner whose results mendflow does not read."""
    _, rest = _unwrapped(words)
    if rest and PurePosixPath(rest[0]).name in _UNREAD_RUNNERS:
        return True
    name = _script_named(rest)
    inner = _words(scripts[name]) if rest and name in scripts and depth < _MAX_DEPTH else None
    return any(_runs_unread_runner(segment, scripts, depth + 1) for segment, _ in _segments(inner or []))


def _chained_after(segments: list[tuple[list[str], str]], at: int, scripts: dict[str, str]) -> list[list[str]]:
    """The commands after segment ``at`` that run only if it passed (``&&``), linters left out; a ``||``, ``;``
    or pipe ends the chain (what follows runs whatever the tests did)."""
    chained = []
    for (_, operator), (words, _) in zip(segments[at:], segments[at + 1 :], strict=False):
        if operator != "&&":
            break
        if not _left_to_mendflow(words, scripts):
            chained.append(words)
    return chained


def _left_to_mendflow(words: list[str], scripts: dict[str, str]) -> bool:
    """A linter, a lint script, or a coverage tool's report or threshold."""
    command = [w for w in words if w not in _LAUNCHERS and not _ASSIGNMENT.match(w)]
    if command and PurePosixPath(command[0]).name in _COVERAGE_TOOLS:
        return True
    _, rest = _unwrapped(words)
    if not rest:
        return False
    name = _script_named(rest)
    return PurePosixPath(rest[0]).name in _LINTERS or bool(name and name in scripts and _LINT_SCRIPT.match(name))


def _script_named(words: list[str]) -> str:
    """``npm run NAME``, ``npm test``, ``pnpm NAME``, ``yarn run NAME``: the package script it runs ('' if none)."""
    if len(words) < 2 or words[0] not in _MANAGERS:
        return ""
    if words[1] in ("run", "run-script") and len(words) > 2:
        return words[2]
    if words[1] in ("test", "t"):
        return "test"
    return words[1] if words[0] != "npm" and not words[1].startswith("-") else ""


def _segments(words: list[str]) -> list[tuple[list[str], str]]:
    """Each command of the script, with the operator after it ('' after the last)."""
    segments: list[tuple[list[str], str]] = []
    current: list[str] = []
    for word in words:
        if word not in _SEPARATORS:
            current.append(word)
        elif current:
            segments.append((current, word))
            current = []
    return [*segments, (current, "")] if current else segments


def _unwrapped(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """The segment's environment assignments, and the command left once launchers and wrappers are passed."""
    env: dict[str, str] = {}
    rest = list(words)
    while rest and (rest[0] in _LAUNCHERS or _ASSIGNMENT.match(rest[0]) or rest[0] in _WRAPPERS):
        word = rest.pop(0)
        if _ASSIGNMENT.match(word):
            name, _, value = word.partition("=")
            env[name] = value
        elif word in _WRAPPERS:  # c8 --reporter=lcov mocha …: skip the wrapper's own options
            while rest and rest[0].startswith("-"):
                rest.pop(0)
    return env, rest


def _runner_of(words: list[str]) -> TestCommand | None:
    env, rest = _unwrapped(words)
    if not rest:
        return None
    name = PurePosixPath(rest[0]).name
    if name in RUNNERS:
        args = rest[2:] if name == "vitest" and rest[1:2] and rest[1] in _VITEST_MODES else rest[1:]
        return TestCommand(name, [a for a in args if a not in _DROPPED], env)
    if name == "node" and "--test" in rest[1:]:
        return TestCommand("node", [a for a in rest[1:] if a != "--test"], env)
    return None
