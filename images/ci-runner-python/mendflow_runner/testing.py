"""Run the test suite under coverage.py; read what happened (exit code, JUnit XML, the plugin's journal)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from . import discovery, progress, repo_config
from .proc import Log, StepResult, in_bwrap, run, sandbox

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"
CONTEXTS_VARIABLE = "MENDFLOW_TEST_CONTEXTS"  # set: the plugin records which test ran which line
# Without a coverage config of its own, a repo's tests are not counted as code under test, nor its packaging
# and documentation scripts (setup.py, Sphinx's conf.py), which no test imports, nor its in-tree build backend
# (``not_code_omit``), nor third-party code it vendors as ``_vendor`` (pip's, setuptools', bleach 6.4.0's
# html5lib: 4,000 statements beside bleach's own 900, they were 42 % of what its build measured).
TEST_OMIT = "tests/*,test/*,*/tests/*,*/test/*,test_*.py,*/test_*.py,*_test.py,conftest.py,*/conftest.py"
NOT_CODE_OMIT = "setup.py,noxfile.py,fabfile.py,conf.py,docs/*,doc/*,*/_vendor/*,*/_vendored/*"

MAX_FAILURES = 200  # failures detailed in the report; failed_tests stays complete
TEXT_MAX = 4096  # bytes of one failure's text
COUNTS = ("total", "passed", "failed", "skipped", "errors")
ERROR_PHASES = ("collect", "setup", "teardown")  # the test's body never ran, or ran and its fixture broke
# "E   ImportError: cannot import name 'x' from 'calc'" in pytest's short text: the exception and its message.
_E_LINE = re.compile(r"^E\s+(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Failed|Exit|Warning|Interrupt)):\s*(?P<msg>.*)$")
_CONFTEST = re.compile(r"^ImportError while loading conftest '(?P<path>[^']+)'\.?$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
# pytest 9's header for a plugin that failed to load, above the exception's lines and no traceback header
_PLUGIN_FAILED = 'Error while loading plugin "'
_WARNING_LINE = re.compile(r"^\S+:\d+: \w*Warning: ")  # "path:12: CoverageWarning: …", printed after the error
# pytest's usage error (exit 4): argparse's "python -m pytest: error: unrecognized arguments: --asyncio-mode=strict"
# (an addopts option of a plugin not installed), or pytest's own "ERROR: file or directory not found: tests".
_ARGPARSE_ERROR = re.compile(r"^\S.*?: (?P<said>error: .+)$", re.MULTILINE)
_PYTEST_ERROR = re.compile(r"^(?P<said>ERROR: (?!usage:).+)$", re.MULTILINE)
PYTEST_TESTS_FAILED = 1
PYTEST_USAGE_ERROR = 4
PYTEST_INTERNAL_ERROR = 3  # a hook or plugin crashed: pytest prints the traceback on stdout, each line
_INTERNAL_ERROR = "INTERNALERROR> "  # prefixed with this
STOPPED_MAX = 500  # characters of what stopped pytest


@dataclass
class RunResults:
    """A language's test run as its runner read it: counts, the failed ids in order, and the first
    ``MAX_FAILURES`` failures' details (``TestFailure`` dicts)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    failed: list[str] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    running: str = ""  # the target or test that had started and not ended (a crash, a timeout)

    def add(self, other: RunResults) -> None:
        """``other``'s results joined to these (another module's, another target's)."""
        for key, value in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        self.failed += [node for node in other.failed if node not in self.failed]
        self.failures = (self.failures + other.failures)[:MAX_FAILURES]


@dataclass
class TestRun:
    __test__ = False
    step: StepResult
    command: list[str]
    marker_used: str | None
    failed: list[str] = field(default_factory=list)
    memory_errors: list[str] = field(default_factory=list)
    running: str | None = None  # the test that started but never reported its teardown
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)  # TestFailure dicts, in ``failed`` order


class SelectionError(ValueError):
    """A node id the runner will not hand to pytest (an option, a path outside the repository)."""


@dataclass
class Paths:
    root: Path
    venv_python: str
    junit: Path
    coverage_file: Path
    events: Path


def cache_options(workspace: Path) -> list[str]:
    """pytest's cache in the job's workspace, outside the tree: kept on, since plugins read it (pytest-isort's
    ``config.cache``: dictdiffer 0.10.0's run ended in an INTERNALERROR without it), and out of the tree, where
    it would be one more file the job wrote."""
    return ["-o", f"cache_dir={workspace / 'pytest-cache'}"]


def pytest_argv(paths: Paths, marker: str | None, select: list[str] | None = None) -> list[str]:
    """pytest's arguments: the marker's suite, or exactly the ``select``ed node ids (then no marker)."""
    argv = [
        "-m",
        "pytest",
        "-p",
        "mendflow_job_plugin",
        *cache_options(paths.events.parent),
        f"--junitxml={paths.junit}",
        "--continue-on-collection-errors",  # a module that fails to import is one failure, not the whole run
    ]
    argv += ["-o", "junit_family=xunit2", *collection_options(paths.root)]
    if select:
        return argv + check_selection(paths.root, select)
    return argv + (["-m", marker] if marker else []) + suite_paths(paths.root)


def collection_options(root: Path) -> list[str]:
    """pytest's options for collecting this repository's tests as its own command does (pytest-cov kept out)."""
    return addopts_without_cov(root) + list(discovery.collection_options(root))


def suite_paths(root: Path) -> list[str]:
    """Where a whole-suite run starts: the paths the repository's test command names, if it names any."""
    declared = discovery.rules(root)
    return list(declared.paths if declared else ())


def check_selection(root: Path, select: list[str]) -> list[str]:
    """``select`` when every entry is a pytest node id of a path inside ``root``; else SelectionError.

    The trusted side chose these ids, but they reach pytest's command line: no option (``-``), no argument
    file (``@``), no absolute path, no way out of the repository (``..``, a symlink pointing outside).
    """
    base = root.resolve()
    for node in select:
        if not isinstance(node, str) or not node.strip() or node != node.strip():
            raise SelectionError(f"not a node id: {node!r}")
        if node.startswith(("-", "@")) or any(c in node for c in "\0\n\r"):
            raise SelectionError(f"not a node id: {node!r}")
        path = node.split("::", 1)[0]
        rel = Path(path)
        if rel.is_absolute() or ".." in rel.parts or "\\" in path:
            raise SelectionError(f"node id outside the repository: {node!r}")
        if not (base / rel).resolve().is_relative_to(base):
            raise SelectionError(f"node id outside the repository: {node!r}")
    return list(select)


def addopts_without_cov(root: Path) -> list[str]:
    """pytest arguments that keep pytest-cov out of the run: the plugin blocked, and its options dropped from the
    repo's addopts, with pytest-xdist's distribution options.

    mendflow measures with coverage.py itself: pytest-cov would start a second tracer over ours and save its
    data over ours (pytest-enabler adds ``--cov`` whenever pytest-cov is installed: zipp's coverage was 0 %),
    and where the plugin is not installed its options end the run as a usage error. xdist's workers are
    processes ``coverage run`` does not follow (yarl 1.18.3's ``--numprocesses=auto``: 1,466 tests passed,
    0 % measured), so the tests run in pytest's own process. A configuration that requires pytest-cov
    (``required_plugins``) has that requirement dropped too: pytest would stop at the blocked plugin.
    """
    addopts = repo_config.pytest_addopts(root)
    kept = without_distribution(without_cov(addopts))
    required = repo_config.pytest_required_plugins(root)
    others = [r for r in required if not _PYTEST_COV.match(r)]
    return [
        "-p",
        "no:cov",
        *([] if kept == addopts else ["-o", f"addopts={shlex.join(kept)}"]),
        *([] if others == required else ["-o", f"required_plugins={' '.join(others)}"]),
    ]


_PYTEST_COV = re.compile(r"pytest[-_.]+cov(?![\w.-])", re.IGNORECASE)  # its name, before any version specifier


def without_cov(args: list[str]) -> list[str]:
    """``args`` without pytest-cov's options (``--cov=src``, ``--cov src``, ``--cov-report term``, ``--no-cov``)."""
    kept: list[str] = []
    skip_value = False
    for arg in args:
        if skip_value and not arg.startswith("-"):
            skip_value = False
            continue
        skip_value = arg in discovery.COV_OPTIONS_WITH_VALUE
        if not arg.startswith(("--cov", "--no-cov")):
            kept.append(arg)
    return kept


# pytest-xdist's options that start workers, with a value as the next word when written without one.
_DISTRIBUTION = {"-n", "--numprocesses", "--dist", "--maxprocesses", "--tx"}


def without_distribution(args: list[str]) -> list[str]:
    """``args`` without pytest-xdist's options that start workers (``-n auto``, ``-n4``, ``--numprocesses=auto``,
    ``--dist loadfile``)."""
    kept: list[str] = []
    words = iter(args)
    for arg in words:
        name, eq, _ = arg.partition("=")
        if name in _DISTRIBUTION:
            if not eq:
                next(words, None)
        elif not (arg.startswith("-n") and not arg.startswith("--")):
            kept.append(arg)
    return kept


def cov_sources(args: list[str]) -> list[str]:
    """What pytest-cov's ``--cov=SOURCE``/``--cov SOURCE`` options name (a bare ``--cov`` names nothing)."""
    named: list[str] = []
    for at, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name == "--cov":
            value = value if eq else next(iter(args[at + 1 : at + 2]), "")
            if value and not value.startswith("-"):
                named.append(value)
    return named


def coverage_argv(python: str, root: Path) -> list[str]:
    """``coverage run`` as the repo configures it. pytest-cov's ``--cov SOURCE`` in its pytest ``addopts`` is
    what its own run measures, whatever ``[run] source`` says (portalocker's ``.coveragerc`` names a ``src`` it
    does not have). Where nothing says which files are measured (no ``source`` or ``include``), the repository's
    own code is: every module of its packages, flat or under ``src/``, imported by a test or not (coverage.py
    lists a module no test imports only under ``--source``)."""
    argv = [python, "-m", "coverage", "run", "--branch"]
    if named := cov_sources(repo_config.pytest_addopts(root)):
        return [*argv, f"--source={','.join(named)}"]
    if not repo_config.has_coverage_config(root):
        return [*argv, f"--source={source_dirs(root)}", f"--omit={TEST_OMIT},{not_code_omit(root)}"]
    if not repo_config.coverage_chooses_files(root):
        argv.append(f"--source={source_dirs(root)}")
    return argv


def not_code_omit(root: Path) -> str:
    """``NOT_CODE_OMIT`` and the in-tree build backend's directories (``[build-system] backend-path``): build
    tooling, as setup.py is, which only the build imports (charset-normalizer's ``_build_hook/`` cost it 8
    points)."""
    return ",".join([NOT_CODE_OMIT, *(f"{d}/*" for d in repo_config.build_backend_dirs(root))])


def source_dirs(root: Path) -> str:
    """``.``, and ``src`` in a src layout: coverage.py looks for unimported modules only below a package
    (a directory with ``__init__.py``) of a source directory, and ``src/`` itself is none."""
    return ".,src" if (root / "src").is_dir() else "."


def run_tests(
    paths: Paths,
    marker: str,
    env: dict[str, str],
    timeout: float,
    log: Log,
    select: list[str] | None = None,
    measured: bool = True,
) -> TestRun:
    """Run the suite (the ``marker``'s tests when the repo declares it), or only the ``select``ed node ids; under
    ``coverage run`` unless not ``measured``."""
    use = marker if not select and marker and marker in repo_config.declared_markers(paths.root) else None
    paths.coverage_file.parent.mkdir(parents=True, exist_ok=True)
    env = {**env, **repo_config.test_setenv(paths.root)}
    env = {
        **env,
        "COVERAGE_FILE": str(paths.coverage_file),
        "PYTHONPATH": os.pathsep.join(p for p in (str(PLUGIN_DIR), env.get("PYTHONPATH", "")) if p),
        "MENDFLOW_PYTEST_EVENTS": str(paths.events),
    }
    py_args = pytest_argv(paths, use, select)
    workspace = Path(os.path.commonpath([paths.root, paths.junit, paths.coverage_file, paths.events]))
    interpreter = coverage_argv(paths.venv_python, paths.root) if measured else [paths.venv_python]
    argv = sandbox(workspace, (PLUGIN_DIR,))(interpreter + py_args)
    env = _tests_env(argv, env)
    paths.events.unlink(missing_ok=True)  # a journal left by an earlier run in this workspace would count twice
    with progress.TestCounter(paths.events):
        step = run(argv, cwd=paths.root, env=env, timeout=timeout, log=log)
    result = TestRun(step=step, command=["pytest", *py_args[2:]], marker_used=use)
    events = _journal_events(paths.events)
    details = _read_journal(events, result)
    _conftest_error(step, paths.root, result, details)
    result.failures = failures(result.failed, details)
    result.counts = junit_counts(paths.junit)
    _count_subtest_skips_as_passed(result.counts, events)
    return result


# coverage.py's tracer, as a failure's message shows what ``sys.gettrace()`` returned (its C and its Python tracer).
_COVERAGE_TRACER = re.compile(r"<coverage\.CTracer object at |<PyTracer at ")


def failed_under_the_tracer(failures: list[dict[str, str]]) -> list[str]:
    """The failed tests whose failure shows coverage.py's tracer: snoop 0.6.1's tests assert ``sys.gettrace() is
    None`` (39 of its 51 failed), as they hold where its own command, ``pytest``, measures nothing."""
    traced = [f for f in failures if _COVERAGE_TRACER.search(f.get("message", "") + f.get("traceback", ""))]
    return [f["node_id"] for f in traced]


def run_own_script(paths: Paths, script: list[str], env: dict[str, str], timeout: float, log: Log) -> StepResult:
    """The repository's own test script (``discovery.own_script``), in the tests' sandbox, judged by its exit."""
    workspace = Path(os.path.commonpath([paths.root, paths.junit]))
    argv = sandbox(workspace)([paths.venv_python, *script])
    env = {**env, **repo_config.test_setenv(paths.root)}
    return run(argv, cwd=paths.root, env=_tests_env(argv, env), timeout=timeout, log=log)


def _tests_env(argv: list[str], env: dict[str, str]) -> dict[str, str]:
    """The tests' environment, as the repository's CI gives it:
    - the sandbox's own /tmp as TMPDIR, as a pod's: under the job's deep workspace, a test's tmp_path is too long
      for a Unix socket (107 bytes: werkzeug 3.1.3's test_server[unix socket]);
    - Python writes bytecode, where a job's own processes do not (``PYTHONDONTWRITEBYTECODE``, the image's): into
      that /tmp, not the tree (``PYTHONPYCACHEPREFIX``). execnet 2.1.2's test_dont_write_bytecode expects a child
      interpreter not to be told to skip it."""
    tmp = "/tmp" if in_bwrap(argv) else env.get("TMPDIR", "/tmp")
    kept = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**kept, "TMPDIR": tmp, "PYTHONPYCACHEPREFIX": f"{tmp}/mendflow-pycache"}


def _journal_events(path: Path) -> list[dict[str, object]]:
    """The plugin's journal, one dict an event."""
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if isinstance(ev, dict):
            events.append(ev)
    return events


def _read_journal(events: list[dict[str, object]], result: TestRun) -> dict[str, dict[str, str]]:
    """Fills ``result`` from the journal; returns each failed node's first failure, merged from its events."""
    details: dict[str, dict[str, str]] = {}
    open_tests: dict[str, None] = {}
    for ev in events:
        node = _text(ev, "nodeid")
        if ev.get("event") == "start":
            open_tests[node] = None
        elif ev.get("event") == "exception":
            _merge_exception(details.setdefault(node, {}), ev)
        elif ev.get("outcome") == "failed":
            if node not in result.failed:
                result.failed.append(node)
            if ev.get("memory_error") and node not in result.memory_errors:
                result.memory_errors.append(node)
            _merge_report(details.setdefault(node, {}), ev)
        if ev.get("when") == "teardown":
            open_tests.pop(node, None)
    result.running = next(reversed(open_tests), None) if open_tests else None
    return details


def _text(ev: dict[str, object], key: str) -> str:
    value = ev.get(key)
    return value if isinstance(value, str) else ""


def _merge_report(detail: dict[str, str], ev: dict[str, object]) -> None:
    """The failed report's fields, for a node's first failed phase only (a teardown after a failed call adds
    nothing)."""
    if "when" in detail:
        return
    detail["when"] = _text(ev, "when")
    detail["text"] = _text(ev, "text")
    detail["crash"] = _text(ev, "crash")
    detail["report_location"] = _text(ev, "location")


def _merge_exception(detail: dict[str, str], ev: dict[str, object]) -> None:
    """The exception behind a node's first failed phase (the plugin journals it after the report)."""
    if "exception" in detail or detail.get("when", _text(ev, "when")) != _text(ev, "when"):
        return
    detail["exception"] = _text(ev, "exception")
    detail["message"] = _text(ev, "message")
    detail["location"] = _text(ev, "location")


def failures(failed: list[str], details: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """``TestFailure`` dicts for the first ``MAX_FAILURES`` failed nodes, in their order."""
    return [failure(node, details.get(node, {})) for node in failed[:MAX_FAILURES]]


def failure(node: str, detail: dict[str, str]) -> dict[str, str]:
    text = detail.get("text", "")
    exception, message = detail.get("exception", ""), detail.get("message", "")
    if not exception:  # no exception handed over (a strict xpass, a journal cut short): read pytest's text
        exception, message = _from_text(text, detail.get("crash", ""))
    when = detail.get("when", "call")
    return {
        "node_id": node,
        "kind": "error" if when in ERROR_PHASES or "::" not in node else "failed",
        "exception": exception[:200],
        "message": (message or _from_text(text, detail.get("crash", ""))[1])[:500],
        "location": detail.get("location") or detail.get("report_location", ""),
        "traceback": cap_tail(text),
    }


def _from_text(text: str, crash: str) -> tuple[str, str]:
    """(exception, first message line) from pytest's failure text: its last ``E   Name: message`` line."""
    for line in reversed(text.splitlines()):
        m = _E_LINE.match(line)
        if m:
            return m["exc"], m["msg"].strip()
    if crash.startswith("assert "):
        return "AssertionError", crash
    name, sep, rest = crash.partition(": ")
    if sep and name.replace(".", "").replace("_", "").isalnum():
        return name, rest.strip()
    said = [line[1:].strip() for line in text.splitlines() if line.startswith("E ") and line[1:].strip()]
    return "", crash or (said[-1] if said else "")  # e.g. "fixture 'db' not found"


def cap_tail(text: str, limit: int = TEXT_MAX) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, keeping its end (where the error is)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    marker = "[…]\n"
    return marker + data[-(limit - len(marker.encode())) :].decode("utf-8", "ignore")


def _conftest_error(step: StepResult, root: Path, result: TestRun, details: dict[str, dict[str, str]]) -> None:
    """A conftest.py that fails to import stops pytest before collection (exit 4, no report): name it as a
    collection error of that file, from what pytest printed."""
    text = f"{step.stderr}\n{step.stdout}"
    m = _CONFTEST.search(text)
    if m is None:
        return
    path = Path(m["path"])
    try:
        node = path.resolve().relative_to(root.resolve()).as_posix() if path.is_absolute() else path.as_posix()
    except (OSError, ValueError):
        return
    if node in result.failed:
        return
    body = _without_root(text[m.start() :], root)
    lines = body.splitlines()
    end = next((i for i, line in enumerate(lines) if i and _E_LINE.match(line)), len(lines) - 1)
    where = next((line.split(": in ", 1)[0] for line in lines[1 : end + 1] if ": in " in line), "")
    result.failed.insert(0, node)
    details[node] = {"when": "collect", "text": "\n".join(lines[: end + 1]), "report_location": where}


def _without_root(text: str, root: Path) -> str:
    """``text`` with the repository's paths made relative to it (the workspace's path differs per job)."""
    return text.replace(f"{root.resolve()}{os.sep}", "").replace(f"{root}{os.sep}", "")


def _internal_error(output: str) -> str:
    """The exception an ``INTERNALERROR>`` traceback ends with: the unindented lines after its last frame (a
    message may run over three: pluggy's refusal of a hook names the plugin, then the hook, then the arguments), or
    "". pytest prints it on stdout, or on stderr when it fails while configuring, before its terminal is set up
    (pytest-docker 3.2.6's venv: a plugin registered with ``pytest_collect_file(path, parent)``)."""
    lines = [line[len(_INTERNAL_ERROR) :] for line in output.splitlines() if line.startswith(_INTERNAL_ERROR)]
    last_frame = max((i for i, line in enumerate(lines) if line.startswith("  File ")), default=-1)
    said = [line.strip() for line in lines[last_frame + 1 :] if line.strip() and not line[0].isspace()]
    return " ".join(said[:3])


def why_stopped(step: StepResult, root: Path) -> str:
    """What stopped pytest before it reported any failure (a conftest pytest refuses, a plugin that crashes):
    the exception its last traceback ends with, continuation lines included, paths relative to the repository;
    else its last line of output. A usage error is named by pytest's own line: the lines after it (``rootdir:``,
    coverage's "No data was collected") say nothing of it."""
    usage = _usage_error(step.stderr) if step.returncode == PYTEST_USAGE_ERROR else None
    if usage:
        return usage[:STOPPED_MAX]
    if step.returncode == PYTEST_INTERNAL_ERROR and (crash := _internal_error(f"{step.stdout}\n{step.stderr}")):
        return _without_root(crash, root)[:STOPPED_MAX]
    if plugin := _plugin_error(step.stderr):
        return _without_root(plugin, root)[:STOPPED_MAX]
    at = step.stderr.rfind(_TRACEBACK)
    lines = step.stderr[at:].splitlines()[1:] if at >= 0 else []
    start = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith(" ")), None)
    if start is None:
        return step.last_stderr_line()
    said: list[str] = []
    for line in lines[start : start + 3]:
        if not line.strip() or _WARNING_LINE.match(line):
            break
        said.append(line.strip())
    text = _without_root(" ".join(said), root)
    return text[:STOPPED_MAX]


def _plugin_error(stderr: str) -> str | None:
    """pytest's words for a plugin that would not load: its header and the exception, the ``E`` lines after a
    traceback or else the exception's own lines (python-interface 1.6.1's test extra installs pytest-pep8, whose
    ``pytest_collect_file(path, parent)`` pytest 9 refuses: the reason read coverage's "No data was collected")."""
    at = stderr.rfind(_PLUGIN_FAILED)
    if at < 0:
        return None
    header, *lines = stderr[at:].splitlines()
    said = [line[1:].strip() for line in lines if line.startswith("E ")]
    for line in [] if said else lines[:3]:
        if not line.strip() or _WARNING_LINE.match(line):
            break
        said.append(line.strip())
    return " ".join([header.strip(), *said])


def _usage_error(stderr: str) -> str | None:
    """What pytest said of its usage error: argparse's ``error: …`` line, else pytest's ``ERROR: …`` one."""
    m = _ARGPARSE_ERROR.search(stderr) or _PYTEST_ERROR.search(stderr)
    return m["said"].strip() if m else None


def _count_subtest_skips_as_passed(counts: dict[str, int], events: list[dict[str, object]]) -> None:
    """Moves from skipped to passed the tests that passed while a subtest of theirs skipped.

    pytest 9 writes a subtest's skip into its test's JUnit test case, so ``junit_counts`` counts that test
    skipped, while pytest itself reports it passed (python-slugify's backends test: a subTest skips for a
    backend that is not installed). Only the journal tells the test's own reports from its subtests'.
    """
    moved = min(len(_passed_with_skipped_subtests(events)), counts.get("skipped", 0))
    if moved:
        counts["skipped"] -= moved
        counts["passed"] += moved


def _passed_with_skipped_subtests(events: list[dict[str, object]]) -> set[str]:
    """The nodes with a skipped subtest, no failed one, and no report of their own skipped or failed."""
    skipped: set[str] = set()
    not_passed: set[str] = set()
    for ev in events:
        if ev.get("event") != "report":
            continue
        node, outcome = _text(ev, "nodeid"), ev.get("outcome")
        if ev.get("subtest") and outcome == "skipped":
            skipped.add(node)
        elif outcome in ("skipped", "failed"):  # its own skip, or any failure: JUnit counts it so too
            not_passed.add(node)
    return skipped - not_passed


def junit_counts(path: Path) -> dict[str, int]:
    """Counts of the JUnit report's test cases, each by its outcome. Not the suites' ``tests`` attributes: since
    pytest 9 they count every unittest ``subTest`` as a test of its own."""
    if not path.is_file():
        return {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return {}
    counts = dict.fromkeys(COUNTS, 0)
    for case in root.iter("testcase"):
        outcomes = {child.tag for child in case}
        outcome = next((o for o in ("failure", "error", "skipped") if o in outcomes), "passed")
        counts[{"failure": "failed", "error": "errors"}.get(outcome, outcome)] += 1
        counts["total"] += 1
    return counts


def killed_by(step: StepResult) -> int | None:
    """The signal that ended the suite, also when a shell-like parent reported it as 128+N."""
    rc = step.returncode
    if rc is None:
        return None
    if rc < 0:
        return -rc
    if rc > 128 and rc - 128 in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM):
        return rc - 128
    return None
