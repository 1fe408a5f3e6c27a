"""Which tests a repository's own command collects, said as pytest arguments.

mendflow runs every Python suite with pytest: its journal gives per-test results, and node ids let later stages
run single tests again. A repository is collected as its pytest configuration says, and as its tox or nox test
command says on top of that (cssselect's ``pytest cssselect tests docs`` also collects the docs' examples). One
that configures no pytest but whose test command is ``python -m unittest`` (markdown's ``coverage run -m
unittest discover tests``) is collected by unittest's rules instead: unittest's start directory and file pattern, and
classes only where they subclass ``unittest.TestCase`` (pytest's unittest plugin collects those whatever
``python_classes`` says). Under pytest's own rules such a suite may not pass: a helper class named ``Test…``
with an ``__init__`` (markdown's ``TestSuite``) is a collection error under pytest 9, a ``test.py`` is no test
file (decorator's ``src/tests/test.py``).
"""

from __future__ import annotations

import configparser
import fnmatch
import functools
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from . import django_suite, repo_config

DEFAULT_PATTERN = "test*.py"  # unittest's
PYTEST_FILES = ("test_*.py", "*_test.py")  # pytest's default python_files
_TEST_CASE = re.compile(r"^class\s+\w+\([^)]*TestCase\b[^)]*\)\s*:", re.MULTILINE)
_TEST_METHOD = re.compile(r"^[ \t]+def\s+test\w*\s*\(", re.MULTILINE)
SKIPPED_DIRS = {"node_modules", "venv", "__pycache__", "build", "dist", "site-packages"}


# pytest's options that take a value as the next word when written without "=" (pytest-cov's among them).
COV_OPTIONS_WITH_VALUE = {
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--cov-context",
    "--cov-precision",
}
_TAKES_VALUE = COV_OPTIONS_WITH_VALUE | {
    *("-k", "-m", "-p", "-c", "-o", "-W", "-n", "-r", "--tb", "--rootdir", "--basetemp", "--junitxml", "--junit-xml"),
    *("--confcutdir", "--durations", "--maxfail", "--import-mode", "--log-level", "--log-cli-level", "--dist"),
}
# Options of a declared pytest command that change which tests exist; the others (reporting, plugins) are the
# runner's to choose.
_KEPT_FLAGS = {"--doctest-modules"}
_KEPT_WITH_VALUE = {"--ignore", "--ignore-glob", "--deselect", "--doctest-glob"}
# ``coverage run``'s options that take the next word as their value (``--source pkg``).
_COVERAGE_RUN_VALUES = {"--concurrency", "--context", "--data-file", "--include", "--omit", "--rcfile", "--source"}


@dataclass(frozen=True)
class Collection:
    """How the repository's own command collects its tests, as pytest arguments."""

    options: tuple[str, ...] = ()  # also right when selected node ids run
    paths: tuple[str, ...] = ()  # where a whole-suite run starts (none: pytest's configured start)


def unittest_rules(root: Path, start: str = ".", pattern: str = DEFAULT_PATTERN) -> Collection:
    """``python -m unittest discover``'s start directory and pattern, run under pytest, which leaves out the
    directories discovery does not enter (``_not_discovered``). A pattern of every module leaves out each package's
    ``__init__.py``, where a suite imports the classes its modules define (aiomultiprocess 0.9.1's: pytest ran each
    of its 33 tests twice)."""
    options = _test_cases_only(pattern)
    ignored = tuple(f"--ignore={folder}" for folder in _not_discovered(root, start, pattern))
    ignored += ("--ignore-glob=*/__init__.py",) if fnmatch.fnmatchcase("__init__.py", pattern) else ()
    return Collection((*options, *ignored), () if start == "." else (start,))


def _test_cases_only(files: str) -> tuple[str, ...]:
    """pytest options collecting what unittest's loader does from ``files``: the methods of ``TestCase`` classes
    (pytest's unittest plugin collects those whatever ``python_classes`` and ``python_functions`` say), not
    classes or module-level functions named ``test…`` (zope.publisher 8.1's ``testIReadMapping(self)``, a helper its
    test cases call, was 2 errors as a test), nor the text files pytest's doctest plugin takes for doctests
    (``test*.txt``: zope.testing 6.2's fixtures of its test runner's tests, 3 failures)."""
    return ("-o", f"python_files={files}", "-o", "python_classes=", "-o", "python_functions=", "-p", "no:doctest")


def _not_discovered(root: Path, start: str, pattern: str) -> list[str]:
    """The directories under ``start`` unittest's discovery does not enter, as it imports only packages: each that
    has no ``__init__.py`` (factory_boy 3.3.3's ``python -m unittest`` runs its tests/ package; pytest's recursion
    also ran the examples/ beside it, each with its own requirements and settings: 2 errors). None where discovery
    would find no test file: the pattern's files then lie in such directories alone, and pytest's recursion finds
    them as before."""
    ignored: list[str] = []
    found = False
    for folder, dirs, files in os.walk(root / start):
        here = Path(folder)
        found = found or any(fnmatch.fnmatchcase(name, pattern) for name in files)
        packages = [d for d in dirs if (here / d / "__init__.py").is_file()]
        ignored += [
            (here / d).relative_to(root).as_posix()
            for d in dirs
            if d not in packages and not d.startswith(".") and d not in SKIPPED_DIRS
        ]
        dirs[:] = packages
    return sorted(ignored) if found else []


@functools.lru_cache(maxsize=8)  # asked before every pytest run of a job (B1 twice, the gates many times)
def rules(root: Path) -> Collection | None:
    """How the repository's tox or nox test command collects, else None (pytest's configured rules).

    A pytest command gives its paths and the options that choose tests (``pytest --doctest-modules src
    tests``); of several, the one that measures coverage does (``_measuring``). A unittest command gives
    unittest's rules when the repository configures no pytest; so does a unittest test file only unittest's
    pattern finds, when nothing is declared (decorator's ``test.py``, run by ``unittest.main()``). Test files
    mendflow writes (``test_*.py``) match both patterns, so they change nothing.
    """
    configures_pytest = repo_config.configures_pytest(root)
    commands = _test_commands(root)
    for words in commands:
        if (found := pytest_command(words, root)) is not None:
            found = _measuring(commands, root) or found
            return found if found.options or found.paths else None
        if not configures_pytest and (
            found := unittest_command(words, root)
            or module_suite(words, root)
            or zope_testrunner(words, root)
            or django_rules(words, root)
        ):
            return found
    if not configures_pytest and (found := setuptools_suite(root)) is not None:
        return found
    if not configures_pytest and (suite := django_suite.guessed(root)) is not None:
        base = unittest_rules(root)  # Django's runner's discovery: pytest-django's tests would configure pytest
        return Collection((*base.options, *_django_options(suite)), base.paths)
    return unittest_rules(root) if not configures_pytest and _has_unittest_only_file(root) else None


def _test_commands(root: Path) -> list[list[str]]:
    """The repository's test commands (``repo_config.test_commands``), a ``stestr run`` as the unittest discovery
    it is (``stestr_as_unittest``)."""
    return [stestr_as_unittest(words, root) for words in repo_config.test_commands(root)]


# stestr's options that choose no tests (OpenStack's tox: ``stestr run --serial --suppress-attachments``).
_STESTR_FLAGS = {"--serial", "--parallel", "--suppress-attachments", "--all-attachments", "--slowest", "--abbreviate"}
_STESTR_FLAGS |= {"--color", "--no-subunit-trace", "--random"}


def stestr_as_unittest(words: list[str], root: Path) -> list[str]:
    """A ``stestr run`` (OpenStack's test runner: unittest's discovery, its cases run in parallel workers) as the
    ``python -m unittest discover`` of its ``.stestr.conf``'s ``test_path`` and ``top_dir``, which honours the
    ``load_tests`` pytest ignores (pbr 7.1.3's testscenarios); other words as they are, and a run that filters
    its tests too."""
    at = 1 if words[:2] == ["stestr", "run"] else 3 if words[1:4] == ["-m", "stestr", "run"] else None
    if at is None or not _choose_no_tests(words[at + 1 :]):
        return words
    conf = configparser.ConfigParser()
    try:
        conf.read(root / ".stestr.conf", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return words
    found, env = conf.defaults(), repo_config.test_setenv(root)
    start, top = (_as_shell_expands(found[k], env) if k in found else None for k in ("test_path", "top_dir"))
    return ["python", "-m", "unittest", "discover", "-s", start, "-t", top or "./"] if start else words


# A shell's parameter expansion: ``${NAME:-DEFAULT}`` (or ``${NAME-DEFAULT}``), ``${NAME}``, ``$NAME``.
_SHELL_PARAMETER = re.compile(r"\$\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}|\$(?P<bare>\w+)")


def _as_shell_expands(value: str, env: dict[str, str]) -> str:
    """``value`` as the shell stestr runs its discovery command in expands it, with the variables the repository
    gives its tests (``repo_config.test_setenv``) and no other: oslo.cache 4.3.0's ``test_path =
    ${STESTR_TEST_PATH:-./oslo_cache/tests/unit}``, whose tox environments for its memcached and other backends
    set that variable; its unit tests' leaves it unset."""

    def expanded(found: re.Match[str]) -> str:
        name = found["name"] or found["bare"]
        return env.get(name) or found["default"] or ""

    return _SHELL_PARAMETER.sub(expanded, value)


def _choose_no_tests(options: list[str]) -> bool:
    """Whether ``stestr run``'s ``options`` choose no tests: flags, and the workers' count, as ``--concurrency=4``
    or ``--concurrency 4``."""
    words = iter(options)
    for word in words:
        if word == "--concurrency":
            word = f"--concurrency={next(words, '')}"
        if word not in _STESTR_FLAGS and not word.startswith("--concurrency="):
            return False
    return True


def setuptools_suite(root: Path) -> Collection | None:
    """The rules of setuptools' ``test_suite`` (``python setup.py test``, which setuptools 72 dropped and many a
    published package still names): its loader imports every module of the package it names, and each of their
    ``TestCase`` classes is a test whatever the file is called (parsedatetime 2.6's ``tests/TestUnits.py``, which
    pytest's and unittest's patterns both miss); a module it names is that file alone. None where the name is no
    package or module of the repository's, or where pytest's own patterns find each ``TestCase`` file there."""
    suite = repo_config.setuptools_test_suite(root)
    if suite is None:
        return None
    if (package := _package(root, suite)) is not None:
        start, pattern = package, "*.py"
    elif (module := repo_config.inside(f"{suite.replace('.', '/')}.py", root)) is not None:
        start, pattern = posixpath.dirname(module) or ".", posixpath.basename(module)
    else:
        return None
    return unittest_rules(root, start, pattern) if _has_unittest_only_file(root, start, pattern) else None


def module_suite(words: list[str], root: Path) -> Collection | None:
    """The rules of a command that runs a package of the repository's as its suite, ``[coverage run] -m PACKAGE``
    (aiomultiprocess 0.9.1's Makefile: ``python -m coverage run -m aiomultiprocess.tests``, whose ``__main__``
    runs unittest over the ``TestCase`` classes of modules named ``core.py``, ``pool.py``): every module of that
    package, under unittest's rules. None for another module, or where pytest's patterns find each such file."""
    package = _run_package(_script_words(words), root)
    if package is None or not _has_unittest_only_file(root, package, "*.py"):
        return None
    return unittest_rules(root, package, "*.py")


def _run_package(words: list[str], root: Path) -> str | None:
    """The folder of the package of the repository's that ``-m PACKAGE …`` runs (one with a ``__main__.py``)."""
    return _package(root, words[1], main=True) if words[:1] == ["-m"] and len(words) > 1 else None


def _package(root: Path, dotted: str, main: bool = False) -> str | None:
    """The folder of the repository's package named ``dotted`` (with a ``__main__.py`` too, if ``main``)."""
    folder = repo_config.inside(dotted.replace(".", "/"), root)
    if folder is None or not (root / folder / "__init__.py").is_file():
        return None
    return folder if not main or (root / folder / "__main__.py").is_file() else None


@functools.lru_cache(maxsize=8)
def namespace_options(root: Path) -> tuple[str, ...]:
    """pytest's ``consider_namespace_packages`` where the repository configures no pytest and its tests live in
    packages of a native namespace package (zope.event 6.2's ``src/zope/event/tests.py``, with no
    ``src/zope/__init__.py``), which its own runner (zope-testrunner) imports as ``zope.event.tests``: pytest
    imported the package a second time as ``event`` (its state split in two), and coverage measured 9.6 % of it.
    Not where a test file lies outside any package: pytest would then put the repository's root on ``sys.path``
    in place of the file's directory, and a bare import of a module beside it would fail."""
    if repo_config.configures_pytest(root):
        return ()
    in_namespace = loose = False
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        if not any(is_test_file(name) for name in files):
            continue
        here = Path(folder)
        if "__init__.py" not in files:
            loose = True
            continue
        while (here.parent / "__init__.py").is_file():
            here = here.parent
        in_namespace = in_namespace or (here.parent != root and here.parent.name != "src")
    return ("-o", "consider_namespace_packages=true") if in_namespace and not loose else ()


_TOP_IMPORT = re.compile(r"^(?:import|from)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


@functools.lru_cache(maxsize=8)
def sibling_paths(root: Path) -> tuple[str, ...]:
    """The test packages whose test modules import a module beside them by its bare name, where the repository
    configures no pytest: its own runner runs them as scripts or by unittest's discovery from there, which put the
    folder on ``sys.path`` (perky 0.10's ``tests/test_perky.py`` imports ``perkytestlib`` from ``tests/``, a
    package, and ``python tests/test_all.py`` runs it); pytest puts the package's parent there instead. A loose test
    file's folder pytest puts there itself; a name the repository's root also holds is left as it is."""
    if repo_config.configures_pytest(root):
        return ()
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        tests = [name for name in files if is_test_file(name)]
        if "__init__.py" not in files or not tests:
            continue
        here = Path(folder)
        beside = {name[:-3] for name in files if name.endswith(".py")} | {d for d in dirs if (here / d).is_dir()}
        imported = {m for name in tests for m in _TOP_IMPORT.findall(_text(here / name))}
        if any(not (root / f"{m}.py").exists() and not (root / m).is_dir() for m in imported & beside):
            found.append(here.relative_to(root).as_posix())
    return tuple(found)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def is_test_file(name: str) -> bool:
    """A file unittest's or pytest's default pattern collects."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in (DEFAULT_PATTERN, *PYTEST_FILES))


def _measuring(commands: list[list[str]], root: Path) -> Collection | None:
    """Of several pytest commands, the collection of the one that measures coverage (``--cov``, ``coverage run``):
    the suite the repository's CI measures. natsort 8.4.0's tox runs its README's doctests first, then the
    package's, then ``pytest --cov`` over its tests; the first alone ran 1 of its tests."""
    for words in commands:
        found = pytest_command(words, root)
        if found is not None and any(w == "--cov" or w.startswith("--cov=") or w == "coverage" for w in words):
            return found
    return None


def own_script(root: Path) -> list[str] | None:
    """The tox or nox test command that runs a script of the repository's own (dill's ``{envpython}
    dill/tests/__main__.py``, which runs each test file in a process of its own; defusedxml 0.7.1's ``coverage run
    --parallel-mode tests.py``, whose suite leaves out the base class pytest collects), unittest (clize 5.0.2's
    ``python -m unittest``, whose fixture classes pytest's unittest plugin cannot instantiate), Django's runner
    (django-debug-toolbar 8.0.0's ``python -m django test tests``, whose URL configuration its runner's order of
    test classes keeps) or a package of its own (``module_suite``), as the interpreter's arguments; where no command
    and no pytest configuration is found, unittest's discovery of a suite written for it (``unittest_suite``); None
    when the tests' command is pytest or another."""
    commands = _test_commands(root)
    for words in map(_script_words, commands):
        if words[:2] == ["-m", "unittest"] or _run_package(words, root) is not None:
            return words
        if words[:3] == ["-m", "django", "test"] and (suite := django(root)) is not None:
            # the settings module the tests' environment names (tox's setenv), as an option of the command's own
            given = any(w.partition("=")[0] == "--settings" for w in words)
            return words if given else [*words, f"--settings={suite.settings}"]
        script = repo_config.inside(words[0], root) if words and words[0].endswith(".py") else None
        if script is not None and (root / script).is_file():
            return [script, *words[1:]]
    return None if commands or repo_config.configures_pytest(root) else unittest_suite(root)


# What only unittest's loader honours: the ``load_tests`` protocol and testscenarios' scenarios (python-daemon
# 3.1.2's ``WithScenarios`` cases ran once under pytest, without a scenario's attributes: 10 failed, 9 errors).
_UNITTEST_PROTOCOL = re.compile(r"^(?:def\s+load_tests\s*\(|(?:from|import)\s+testscenarios\b)", re.MULTILINE)
# A test package's ``__main__`` that runs unittest over what it imports.
_UNITTEST_MAIN = re.compile(r"^\s*unittest\.main\(", re.MULTILINE)
# A suite written for pytest: it imports pytest, or has a test function at module level.
_PYTEST_STYLE = re.compile(r"^(?:(?:from|import)\s+pytest\b|(?:async\s+)?def\s+test)", re.MULTILINE)


def unittest_suite(root: Path) -> list[str] | None:
    """Where nothing says how the tests run and none of the tests' folder (``tests`` or ``test``) is written for
    pytest: ``-m FOLDER`` where that package's ``__main__`` runs ``unittest.main()`` (lark-parser 0.12.0's, which
    imports its optional Nearley tests only if they import: pytest failed that module), else ``-m unittest
    discover`` of the folder where its modules use what only unittest's loader honours; else None. A suite with a
    test pytest runs and unittest does not is left to pytest, which would fail it alone."""
    for name in ("tests", "test"):
        folder = root / name
        texts = [_text(path) for path in folder.rglob("*.py")]
        if any(map(_PYTEST_STYLE.search, texts)):
            continue
        package = (folder / "__init__.py").is_file()
        if package and _UNITTEST_MAIN.search(_text(folder / "__main__.py")):
            return ["-m", name]
        if any(map(_UNITTEST_PROTOCOL.search, texts)):
            return ["-m", "unittest", "discover", "-s", name, *(["-t", "."] if package else [])]  # a package: from root
    return None


def _script_words(words: list[str]) -> list[str]:
    """A command's words from the script or the ``-m`` module it runs: past ``python`` and past ``[python -m]
    coverage run``'s options."""
    words = words[1:] if words and posixpath.basename(words[0]).startswith("python") else words
    words = _past_interpreter_options(words)
    if words[:2] == ["-m", "coverage"]:
        words = ["coverage", *words[2:]]
    if words[:2] != ["coverage", "run"]:
        return words
    args = iter(words[2:])
    for word in args:
        if word == "-m":
            return ["-m", *args]
        if word in _COVERAGE_RUN_VALUES:
            next(args, None)
        elif not word.startswith("-"):
            return [word, *args]
    return []


# The interpreter's options that take the next word as their value (``-W error``).
_INTERPRETER_VALUES = {"-W", "-X", "--check-hash-based-pycs"}
# Its one-letter flags run together, the last one -m (pwned-passwords-django 5.2.0's ``python -Im coverage``).
_FLAGS_THEN_MODULE = re.compile(r"-[bBdEiIOPqsSuvx]+m")


def _past_interpreter_options(words: list[str]) -> list[str]:
    """The words from the module (``-m NAME``) or script on, past the interpreter's options (django-debug-toolbar
    8.0.0's ``python -b -m coverage run -m django test``)."""
    at = 0
    while at < len(words) and words[at].startswith("-") and words[at] not in ("-m", "-c"):
        if _FLAGS_THEN_MODULE.fullmatch(words[at]):
            return ["-m", *words[at + 1 :]]
        at += 2 if words[at] in _INTERPRETER_VALUES else 1
    return words[at:]


def pytest_command(words: list[str], root: Path) -> Collection | None:
    """The collection of a ``pytest …``, ``py.test …`` or ``… -m pytest …`` command; None for another command."""
    at = next((i + 1 for i, w in enumerate(words) if posixpath.basename(w) in ("pytest", "py.test")), None)
    at = at or next((i + 2 for i in range(len(words) - 1) if words[i : i + 2] == ["-m", "pytest"]), None)
    if at is None:
        return None
    options: list[str] = []
    paths: list[str] = []
    args = iter(words[at:])
    for word in args:
        name, eq, value = word.partition("=")
        if name in _KEPT_WITH_VALUE:
            options.append(f"{name}={value if eq else next(args, '')}")
        elif word in _KEPT_FLAGS:
            options.append(word)
        elif name in _TAKES_VALUE and not eq:
            next(args, None)
        elif not word.startswith("-") and (path := repo_config.inside(word, root)) is not None:
            paths.append(path)
    return Collection(tuple(options), tuple(paths))


def _has_unittest_only_file(root: Path, start: str = ".", pattern: str = DEFAULT_PATTERN) -> bool:
    """Whether a file under ``start`` unittest's ``pattern`` finds and pytest's do not defines a ``TestCase`` with a
    test method (walked as a collector walks: hidden and vendored directories left out). Importing unittest is not
    enough: pytest suites import ``unittest.mock``; nor is a ``TestCase`` with no test, a package's base class for its
    tests (leather 0.4.1's ``leather/testcase.py``: its unittest rules collected the scratch script ``test.py``
    beside its pytest suite, which failed at import)."""
    for folder, dirs, files in os.walk(root / start):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in (f for f in files if _unittest_only_name(f, pattern)):
            text = _text(Path(folder, name))
            if _TEST_CASE.search(text) and _TEST_METHOD.search(text):
                return True
    return False


def _unittest_only_name(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern) and not any(fnmatch.fnmatchcase(name, p) for p in PYTEST_FILES)


def unittest_command(words: list[str], root: Path) -> Collection | None:
    """The rules of a ``… -m unittest [discover] …`` command (``python``, ``coverage run`` or any wrapper)."""
    at = next((i for i in range(len(words) - 1) if words[i] == "-m" and words[i + 1] == "unittest"), None)
    if at is None:
        return None
    args = words[at + 2 :]
    if args and args[0] == "discover":
        return _discover(args[1:], root)
    if not [a for a in args if not a.startswith("-")]:  # bare `python -m unittest` discovers from "."
        return unittest_rules(root)
    return None  # named modules, classes or methods: unittest's loading, which no pytest rule says


# zope.testrunner's default rules: test modules named ``test…`` in a package named ``tests``, or a module named
# ``tests`` (``--tests-pattern ^tests$``, ``--test-file-pattern ^test``); pytest matches a pattern with a ``/``
# against the whole path.
ZOPE_TEST_FILES = "tests.py */tests/test*.py"
# zope-testrunner's options that choose tests or where they are found, other than ``--test-path``
_ZOPE_CHOOSING = {"-s", "--package", "-m", "--module", "-t", "--test", "--tests-pattern", "--test-file-pattern"}
_ZOPE_CHOOSING |= {"--layer", "--path", "--package-path", "--test-suite", "-u", "--unit", "-f", "--non-unit"}


def zope_testrunner(words: list[str], root: Path) -> Collection | None:
    """The rules of ``zope-testrunner --test-path=src`` (the test command of every zopefoundation package's tox,
    ``python -m zope.testrunner`` too): the ``TestCase`` classes of its default test modules under the test paths.
    None where an option chooses tests otherwise, or a test path is not the repository's."""
    at = next((i for i, w in enumerate(words) if _runs_zope_testrunner(words[: i + 1])), None)
    if at is None:
        return None
    paths: list[str] = []
    args = iter(words[at + 1 :])
    for word in args:
        option, equals, value = word.partition("=")
        if option in _ZOPE_CHOOSING:
            return None
        if option == "--test-path":
            found = repo_config.inside(value if equals else next(args, ""), root)
            if found is None or not _is_dir(root, found):
                return None
            paths.append(found)
    return Collection(_test_cases_only(ZOPE_TEST_FILES), tuple(p for p in paths if p != "."))


def django(root: Path) -> django_suite.DjangoSuite | None:
    """The Django test runner's suite the repository's test command runs, or the one its files suggest
    (``django_suite.guessed``), where it configures no pytest."""
    if repo_config.configures_pytest(root):
        return None
    return django_suite.django_suite(root, _test_commands(root)) or django_suite.guessed(root)


def django_rules(words: list[str], root: Path) -> Collection | None:
    """The rules of a command running Django's test runner: unittest's discovery from its labels, under
    pytest-django's ini option naming the settings module, and the directories the command puts on ``sys.path``."""
    suite = django_suite.django_suite(root, [words])
    if suite is None:
        return None
    base = unittest_rules(root, suite.labels[0] if len(suite.labels) == 1 else ".")
    return Collection((*base.options, *_django_options(suite)), suite.labels if len(suite.labels) > 1 else base.paths)


def _django_options(suite: django_suite.DjangoSuite) -> tuple[str, ...]:
    options = ("-o", f"{django_suite.SETTINGS}={suite.settings}")
    return options + (("-o", f"pythonpath={' '.join(suite.python_path)}") if suite.python_path else ())


def collection_options(root: Path) -> tuple[str, ...]:
    """The options of the repository's collection ``rules``, with the test packages ``sibling_paths`` finds on
    pytest's ``pythonpath`` (joined to Django's runner's: one ``-o pythonpath=`` holds both) and the
    ``namespace_options``."""
    declared = rules(root)
    return _with_python_path(declared.options if declared else (), sibling_paths(root)) + namespace_options(root)


def _with_python_path(options: tuple[str, ...], folders: tuple[str, ...]) -> tuple[str, ...]:
    """``options`` with ``folders`` added to the ``-o pythonpath=`` among them, or in one of their own."""
    if not folders:
        return options
    at = next(
        (i for i in range(1, len(options)) if options[i - 1] == "-o" and options[i].startswith("pythonpath=")), None
    )
    if at is None:
        return (*options, "-o", f"pythonpath={' '.join(folders)}")
    return (*options[:at], f"{options[at]} {' '.join(folders)}", *options[at + 1 :])


def _runs_zope_testrunner(words: list[str]) -> bool:
    """Whether ``words`` end in zope.testrunner's script, or in ``-m zope.testrunner``."""
    return posixpath.basename(words[-1]) == "zope-testrunner" or words[-2:] == ["-m", "zope.testrunner"]


def _discover(args: list[str], root: Path) -> Collection | None:
    """``discover [-s START] [-p PATTERN] [-t TOP] [START [PATTERN [TOP]]]``; flags such as ``-v`` pass."""
    named: dict[str, str] = {}
    positional: list[str] = []
    words = iter(args)
    for word in words:
        option = {"-s": "start", "--start-directory": "start", "-p": "pattern", "--pattern": "pattern"}.get(word)
        if option is not None:
            named[option] = next(words, "")
        elif word in ("-t", "--top-level-directory", "-k"):
            next(words, None)
        elif not word.startswith("-"):
            positional.append(word)
    start = named.get("start") or (positional[0] if positional else ".")
    pattern = named.get("pattern") or (positional[1] if len(positional) > 1 else DEFAULT_PATTERN)
    found = repo_config.inside(start, root)
    return unittest_rules(root, found, pattern) if found is not None and pattern and _is_dir(root, found) else None


def _is_dir(root: Path, path: str) -> bool:
    return (root / path).is_dir()
