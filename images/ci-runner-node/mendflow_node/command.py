"""Which test runner a project's ``test`` script runs, and with which of the repository's own arguments.

The script is the authority (rule: the repository's own commands): mendflow runs the runner it names, from
``node_modules/.bin``, with the script's arguments and environment assignments, and adds only its reporters and
coverage. A script that runs something else first (``tsc && jest``) is read for the segment that runs a known
runner: what an ``&&`` chain runs before it runs before the tests (a build: ``tsc && node --test dist/``), but what
mendflow does in steps of its own (linters, ``tsc --noEmit``); what the script runs after it only when it passed
(``node --test && tsd``, ``npm run unit && npm run types``), and a test runner mendflow does not read that it runs
before (``tap && jest``), run after the tests, judged by their exit codes. A script mendflow cannot read (``make
test``, a runner it does not know) runs as it is, judged by its exit code alone.

What npm runs around the script (``npm test``: ``pretest``, then ``test``, then ``posttest``), and around a script
it runs with ``npm run`` (``preunit``), runs around the tests too, read the same way: a linter there is left to the
lint step (minimist's ``pretest`` lints with eslint: run twice it cost 1.4 s of a 7.5 s job, and a finding the
commit did not make failed the tests before they ran), an audit is left out (``_AUDITS``), a build before the tests
runs before them. A script run as it is then runs with npm's ``--ignore-scripts``, which stops npm running the hooks
itself, unless a script it runs has hooks of its own, which the option would drop too.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from . import borp, options

RUNNERS = ("vitest", "jest", "mocha")
# Words before the runner that only pass it along.
_LAUNCHERS = {"npx", "cross-env", "dotenv", "--", "exec"}
# Coverage wrappers whose own options come before the command they wrap: mendflow brings its own coverage.
_WRAPPERS = {"c8", "nyc"}
# Their options that take a value, which may be the next word (undici-thread-interceptor 1.5.0's `c8 -c
# test/config/c8-local.json node --test`: else the file would be the command, and the script ran as it is).
_WRAPPER_VALUED = {"-c", "--config", "-r", "--reporter", "-o", "--reports-dir", "--report-dir", "--temp-directory"}
_WRAPPER_VALUED |= {"-t", "--temp-dir", "-x", "--exclude", "-n", "--include", "-e", "--extension", "--src", "--cwd"}
_WRAPPER_VALUED |= {"-i", "--require", "--nycrc-path", "--lines", "--branches", "--functions", "--statements"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# A redirection (``>``, ``2>>``, ``<``, ``>out.tap``, ``2>&1``): its operator, and its target where one word holds both.
_REDIRECT = re.compile(r"(?P<op>\d*(?:>>|>|<)&?)(?P<target>.*)")
_SEPARATORS = {"&&", "||", ";", "|", "&"}
# Runner arguments that would fight the reporters or never end (mendflow adds its own coverage and ``run``).
_DROPPED = {"--watch", "--watchAll", "--coverage", "--silent", "--run"}
# Their short spellings where the letter means that for the runner (crypto-md5 1.0.0's `mocha -w test/` waited for
# changes until the job's budget ran out); jest's `-w` is `--maxWorkers`, with a value.
_DROPPED_SHORT = {"mocha": {"-w"}, "vitest": {"-w"}}
_VITEST_MODES = {"run", "watch", "dev"}  # vitest's first word
# `node --test`'s own reporters, which mendflow's take the place of: Node wants as many destinations as reporters,
# and fails on one more (@platformatic's `--test-reporter=cleaner-spec-reporter`).
_NODE_REPORTING = {"--test-reporter", "--test-reporter-destination"}


@dataclass(frozen=True)
class TestCommand:
    runner: str  # vitest | jest | mocha | node (node --test) | borp | script (the test script as it is)
    args: list[str] = field(default_factory=list)  # the repository's own arguments to the runner
    env: dict[str, str] = field(default_factory=dict)  # the script's VAR=value assignments
    then: list[list[str]] = field(default_factory=list)  # commands chained after the runner's with `&&`, as words
    before: list[list[str]] = field(default_factory=list)  # run before the runner: a build the chain or `pretest` runs
    hooks_apart: bool = False  # `before` and `then` hold npm's hooks: the script runs without them
    # Words the scripts leave unquoted for sh to expand (`node --test test/*.test.js`): mendflow, running the
    # runner without a shell, expands them as sh would (Node 20's --test reads no globs: it fails on the word).
    globs: list[str] = field(default_factory=list)
    # A script run as it is, but for what mendflow does in steps of its own: the rest of its `&&` chain
    # (`standard && tape test/*.js`: tape); [] runs the script whole.
    script: list[list[str]] = field(default_factory=list)
    # What the repository leaves out of its coverage, where the runner's options say it (borp's -X).
    coverage_exclude: list[str] = field(default_factory=list)


_MANAGERS = {"npm", "pnpm", "yarn"}
# `npm init`'s test script: a package that never wrote one, not a failing suite.
NPM_PLACEHOLDER = "Error: no test specified"
_MAX_DEPTH = 4  # scripts that run scripts: "test" → "npm run test:unit" → "c8 node --test"
# Chained after the tests but left to mendflow's own steps: its lint, whose rule is that only new findings fail,
# and its coverage, measured its own way (a `c8 check-coverage` would find no data of the script's c8).
_LINTERS = {"eslint", "standard", "semistandard", "ts-standard", "xo", "prettier", "biome", "tslint", "snazzy"}
_COVERAGE_TOOLS = {"c8", "nyc", "istanbul", "codecov", "coveralls"}
_COVERAGE_COMMANDS = {"report", "check-coverage", "merge", "instrument"}  # c8's and nyc's own, on their data
# An audit asks the registry's advisories, which the offline tests cannot reach (aud says "found 0
# vulnerabilities" there, after 2.4 s of minimist's job): it would judge the registry, never the commit.
_AUDITS = {"aud", "audit-ci", "better-npm-audit", "nsp"}
# TAP reporters: each only reformats the TAP a runner pipes into it (and fails where that TAP shows a failure).
# mendflow reads the TAP itself, so such a pipeline runs its runner alone (tinysonic 2.0.1's `tape test.js |
# tap-spec`: tap-spec's report held no results to read), and the runner's own exit code judges it.
_TAP_REPORTERS = {
    "faucet", "tap-arc", "tap-bail", "tap-colorize", "tap-diff", "tap-difflet", "tap-dot", "tap-junit", "tap-min",
    "tap-mocha-reporter", "tap-nyan", "tap-pretty", "tap-prettify", "tap-simple", "tap-spec", "tap-summary",
    "tap-xunit", "tnyan",
}  # fmt: skip
_LEFT_SCRIPT = re.compile(r"^(lint|format|prettier|style|audit)(\b|[:-])")  # npm run lint, npm run audit
_GLOB = re.compile(r"[*?\[]")  # what makes a word a pattern sh expands
_QUOTED = re.compile(r"[\"'\\]")
# Test runners whose per-test results mendflow does not read. Run before the runner it reads, such a suite still
# runs, after the tests, judged by its exit code: process-warning 4.0.0's `npm run test:unit && npm run test:jest`
# runs tap's 18 files, then jest's one test.
_UNREAD_RUNNERS = {"tap", "tape", "ava", "uvu", "jasmine", "lab", "brittle", "zora"}


def read_test(scripts: dict[str, str]) -> TestCommand:
    """The runner of the package's ``test`` script, with what npm runs around it (``pretest``, ``posttest``)."""
    command = read(scripts.get("test"), scripts)
    if command.runner == "none" or not ({"pretest", "posttest"} & scripts.keys()):
        return command
    if command.runner == "script" and not command.script and _runs_hooked_script(scripts):
        return command  # `npm run test` runs the hooks itself
    before, after = _hook("pretest", scripts), _hook("posttest", scripts)
    return replace(command, before=before, then=[*command.then, *after], hooks_apart=True)


def _hook(name: str, scripts: dict[str, str]) -> list[list[str]]:
    """The commands of the hook ``name`` mendflow runs: each of an ``&&`` chain that it does not leave to its own
    steps, or the hook as npm runs it, whole, when other operators join them."""
    if name not in scripts:
        return []
    segments = _segments(_words(scripts[name]) or [])
    if not segments or not _and_chain(segments):
        return [["npm", "run-script", name]]
    return [words for words, _ in segments if not _left_to_mendflow(words, scripts)]


def _runs_hooked_script(scripts: dict[str, str]) -> bool:
    """The test script runs (as a word of its own, through any depth of scripts) a script that has a ``pre`` or
    ``post`` hook, or one that cannot be read."""
    seen, todo = {"test"}, ["test"]
    while todo:
        words = _words(scripts[todo.pop()])
        if words is None:
            return True
        for name in (w for w in words if w in scripts and w not in seen):
            if f"pre{name}" in scripts or f"post{name}" in scripts:
                return True
            seen.add(name)
            todo.append(name)
    return False


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
                command = replace(command, env={**env, **command.env})
            if command is not None and rest[0] == "npm":
                command = _with_hooks(command, name, scripts)
        if command is not None:
            unread = [words for words, _ in segments[:at] if _runs_unread_runner(words, scripts or {})]
            then = [*command.then, *unread, *_chained_after(segments, at, scripts or {})]
            before = [*_built_before(segments[:at], scripts or {}), *command.before]
            globs = sorted({*command.globs, *_bare_globs(script)})
            return replace(command, then=then, before=before, globs=globs)
    return TestCommand("script", globs=_bare_globs(script), script=_kept_chain(segments, scripts or {}))


def _kept_chain(segments: list[tuple[list[str], str]], scripts: dict[str, str]) -> list[list[str]]:
    """The commands of an ``&&`` chain mendflow runs as the script, without the linters and audits it leaves to
    its own steps (a pre-existing finding would fail the tests of a commit that did not make it), without a
    pipeline of them alone (pino-abstract-transport 2.0.0's ``standard | snazzy && tap && tsd``: standard ran
    twice, beside mendflow's own lint step), and without the TAP reporters a runner pipes into; [] where it
    leaves nothing out, or nothing would be left, or other operators join them, or a pipe joins a command it
    keeps to another (the script then runs whole)."""
    pipelines = _pipelines(segments)
    if not all(operator in ("&&", "") for _, operator in pipelines):
        return []
    kept = []
    for pipeline, _ in pipelines:
        if all(_left_to_mendflow(words, scripts) for words in pipeline):
            continue
        runner = _without_tap_reporters(pipeline)
        if len(runner) > 1:
            return []
        kept.append(runner[0])
    return kept if kept and kept != [words for words, _ in segments] else []


def _without_tap_reporters(pipeline: list[list[str]]) -> list[list[str]]:
    """The pipeline without the TAP reporters at its end (``tape test.js | tap-spec``: ``tape test.js``)."""
    while len(pipeline) > 1 and _is_tap_reporter(pipeline[-1]):
        pipeline = pipeline[:-1]
    return pipeline


def _is_tap_reporter(words: list[str]) -> bool:
    _, rest = _unwrapped(words)
    return bool(rest) and _unversioned(rest[0]) in _TAP_REPORTERS


def _pipelines(segments: list[tuple[list[str], str]]) -> list[tuple[list[list[str]], str]]:
    """The script's commands joined into pipelines (``a | b``), each with the operator after it."""
    pipelines: list[tuple[list[list[str]], str]] = []
    current: list[list[str]] = []
    for words, operator in segments:
        current.append(words)
        if operator != "|":
            pipelines.append((current, operator))
            current = []
    return [*pipelines, (current, "")] if current else pipelines


def _and_chain(segments: list[tuple[list[str], str]]) -> bool:
    """Each command runs only if the one before it passed (``a && b``): none joined by ``||``, ``;`` or a pipe."""
    return all(operator in ("&&", "") for _, operator in segments)


def _with_hooks(command: TestCommand, name: str, scripts: dict[str, str]) -> TestCommand:
    """``command``, read from the script ``name`` that ``npm run`` runs, with what npm runs around it: its
    ``pre`` hook (a build) before, its ``post`` hook after. pnpm and yarn 2+ run no such hooks."""
    before, after = _hook(f"pre{name}", scripts), _hook(f"post{name}", scripts)
    return replace(command, before=[*before, *command.before], then=[*command.then, *after])


def _built_before(segments: list[tuple[list[str], str]], scripts: dict[str, str]) -> list[list[str]]:
    """What an ``&&`` chain runs before its runner that the tests may need: a build (``tsc && node --test dist/``,
    ``npm run build && mocha``); not what mendflow leaves to its own steps, nor a runner it does not read (run
    after the tests). With any other operator, nothing: such a script is read for its runner alone."""
    if not _and_chain(segments):
        return []
    return [w for w, _ in segments if not (_left_to_mendflow(w, scripts) or _runs_unread_runner(w, scripts))]


def _words(script: str) -> list[str] | None:
    """The script's words as the shell splits them ("test:unit", "@scope/pkg"), operators apart, a redirection to
    a descriptor one word (``2>&1``, which the lexer splits at its ``&``); None if it cannot be split (an
    unbalanced quote)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return None
    for at in range(len(words) - 3, -1, -1):
        if words[at + 1] == "&" and _REDIRECT.fullmatch(words[at]) and words[at + 2].isdigit():
            words[at : at + 3] = ["".join(words[at : at + 3])]
    return words


def shell_line(words: list[str], globs: list[str]) -> str:
    """A command's words as a line for ``sh -c``, each quoted but the ``globs`` the script left to the shell, and
    an assignment's value, not its name (``FOO='a b' tape``)."""
    return " ".join(word if word in globs else _quoted(word) for word in words)


def _quoted(word: str) -> str:
    name, is_assignment, value = word.partition("=")
    if is_assignment and _ASSIGNMENT.match(word):
        return f"{name}={shlex.quote(value)}"
    if redirect := _REDIRECT.match(word):  # @fastify/flash 6.0.5's `secure-session > secret-key`
        return redirect["op"] + (shlex.quote(redirect["target"]) if redirect["target"] else "")
    return shlex.quote(word)


def _without_redirects(words: list[str]) -> list[str]:
    """A runner's words without what the script redirects its output to: mendflow reads that output itself."""
    kept: list[str] = []
    target_next = False
    for word in words:
        redirect = _REDIRECT.match(word)
        if not target_next and not redirect:
            kept.append(word)
        target_next = redirect is not None and not redirect["target"] and not target_next
    return kept


def _bare_globs(script: str) -> list[str]:
    """The words of ``script`` with a glob character outside quotes: the shell expands them into paths."""
    lexer = shlex.shlex(script, posix=False, punctuation_chars="&|;")  # keeps each word's quotes
    lexer.whitespace_split = True
    try:
        return [word for word in lexer if _GLOB.search(word) and not _QUOTED.search(word)]
    except ValueError:
        return []


NPM_TEST_HOOKS = ("pretest", "test", "posttest")  # what `npm test` runs


def npm_test_runs(tool: str, scripts: dict[str, str]) -> bool:
    """Whether ``npm test`` (its hooks too, through the package scripts they run) runs ``tool``, as a command or
    a wrapper (``nyc tape``, ``npx nyc npm run spec``); True where a script cannot be read. A tool only another
    script runs does not count (fastparallel 2.4.1's nyc, in its ``coverage`` script)."""
    return any(_runs(scripts[name], tool, scripts, 0) for name in NPM_TEST_HOOKS if name in scripts)


def _runs(script: str, tool: str, scripts: dict[str, str], depth: int) -> bool:
    words = _words(script)
    if words is None:
        return True
    for segment, _ in _segments(words):
        command = [w for w in segment if w not in _LAUNCHERS and not _ASSIGNMENT.match(w)]
        if command and _unversioned(command[0]) == tool:
            return True
        name = _script_named(_unwrapped(segment)[1])
        if name in scripts and depth < _MAX_DEPTH and _runs(scripts[name], tool, scripts, depth + 1):
            return True
    return False


def _runs_unread_runner(words: list[str], scripts: dict[str, str]) -> bool:
    """Whether a command, or the package script it runs, runs a test runner whose results mendflow does not read."""
    return bool(_found(words, scripts, lambda rest: PurePosixPath(rest[0]).name in _UNREAD_RUNNERS))


def runs_tests(words: list[str], scripts: dict[str, str]) -> bool:
    """Whether a command, or the package script it runs, runs a test runner, whether mendflow reads it or not (a
    type test's tsd or tstyche is none)."""
    return bool(_found(words, scripts, _is_suite))


def suites(script: str, scripts: dict[str, str]) -> list[list[str]] | None:
    """The commands ``script`` runs that run tests, through the package scripts it runs, with launchers and
    wrappers passed (``npx tap --no-cov test/``: ``tap --no-cov test/``); None where it cannot be read."""
    words = _words(script)
    if words is None:
        return None
    return [suite for segment, _ in _segments(words) for suite in _found(segment, scripts, _is_suite)]


def _is_suite(rest: list[str]) -> bool:
    return PurePosixPath(rest[0]).name in _UNREAD_RUNNERS or bool(_runner_of(rest))


def _found(
    words: list[str], scripts: dict[str, str], found: Callable[[list[str]], bool], depth: int = 0
) -> list[list[str]]:
    """The commands, ``words`` or those of the package script it runs, for which ``found`` holds."""
    _, rest = _unwrapped(words)
    if rest and found(rest):
        return [rest]
    name = _script_named(rest)
    inner = _words(scripts[name]) if rest and name in scripts and depth < _MAX_DEPTH else None
    return [hit for segment, _ in _segments(inner or []) for hit in _found(segment, scripts, found, depth + 1)]


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


def _left_to_mendflow(words: list[str], scripts: dict[str, str], depth: int = 0) -> bool:
    """A linter, a coverage tool's report or threshold, an audit of the dependencies, tsc's type check of the
    project's tsconfig.json, or a script named for one of them or running only them."""
    command = [w for w in words if w not in _LAUNCHERS and not _ASSIGNMENT.match(w)]
    _, rest = _unwrapped(words)
    if command and PurePosixPath(command[0]).name in _COVERAGE_TOOLS and not _wraps_a_command(command, rest):
        return True
    if not rest:
        return False
    tool = _unversioned(rest[0])
    if tool in _AUDITS or (tool in _MANAGERS and rest[1:2] == ["audit"]):
        return True
    if tool == "tsc" and "--noEmit" in rest and not ({"-p", "--project"} & set(rest)):
        return True  # the build step's own type check
    if tool in _LINTERS:
        return True
    name = _script_named(rest)
    if name not in scripts:
        return False
    inner = _segments(_words(scripts[name]) or []) if depth < _MAX_DEPTH else []
    left = bool(inner) and all(_left_to_mendflow(w, scripts, depth + 1) for w, _ in inner)
    return left or bool(_LEFT_SCRIPT.match(name))  # `npm run eslint`: eslint *.js


def _wraps_a_command(command: list[str], rest: list[str]) -> bool:
    """A coverage wrapper that runs a command (``c8 tape test/*.js``: the tests, which @fastify/proxy-addr 5.0.0's
    ``test:unit`` runs), not one of its own reports or thresholds (``c8 check-coverage``, ``nyc report``)."""
    return PurePosixPath(command[0]).name in _WRAPPERS and bool(rest) and rest[0] not in _COVERAGE_COMMANDS


def _unversioned(word: str) -> str:
    """The tool a command word names: ``npx npm@'>=10.2' audit`` runs npm."""
    name = PurePosixPath(word).name
    return name[0] + name[1:].partition("@")[0] if name else name


def _script_named(words: list[str]) -> str:
    """``npm run NAME``, ``npm test``, ``pnpm NAME``, ``yarn run NAME``: the package script it runs ('' if none)."""
    if len(words) < 2 or words[0] not in _MANAGERS:
        return ""
    if words[1] in ("run", "run-script"):
        return next((w for w in words[2:] if not w.startswith("-")), "")  # npm run --silent lint
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
                if rest.pop(0) in _WRAPPER_VALUED and rest:
                    rest.pop(0)
    return env, rest


def _runner_of(words: list[str]) -> TestCommand | None:
    env, rest = _unwrapped(_without_redirects(words))
    if not rest:
        return None
    name = PurePosixPath(rest[0]).name
    if name in RUNNERS:
        args = rest[2:] if name == "vitest" and rest[1:2] and rest[1] in _VITEST_MODES else rest[1:]
        dropped = _DROPPED | _DROPPED_SHORT.get(name, set())
        return TestCommand(name, [a for a in args if a not in dropped], env)
    if name == "node" and "--test" in rest[1:]:
        return TestCommand("node", _node_test_args(rest[1:]), env)
    if name == "borp":
        kept, files, excluded = borp.words(rest[1:])  # not `options`: the module of that name
        return TestCommand("borp", [*kept, *files], env, coverage_exclude=excluded)
    return None


def _node_test_args(words: list[str]) -> list[str]:
    """``node --test``'s arguments but ``--test`` itself, ``--watch`` (it never ends) and its reporters with their
    values (``--test-reporter=spec``, ``--test-reporter-destination stdout``)."""
    return options.without(words, {"--test", "--watch", *_NODE_REPORTING}, _NODE_REPORTING)
