"""Which collection rules a repository's own test command implies (``mendflow_runner.discovery``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_runner.discovery import Collection, namespace_options, own_script, rules, sibling_paths, unittest_rules
from mendflow_runner.testing import collection_options

from tests.images.mendflow_runner.helpers import tree

# unittest's default rules: its pattern, TestCase classes only, no module-level function, no text doctest
UNITTEST_OPTIONS = (
    "-o",
    "python_files=test*.py",
    "-o",
    "python_classes=",
    "-o",
    "python_functions=",
    "-p",
    "no:doctest",
)
UNITTEST_CASE = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        pass\n"


def test_tox_running_unittest_discover_gives_its_start_directory(tmp_path: Path) -> None:
    commands = "    coverage run --source=pkg -m unittest discover {toxinidir}/tests\n    coverage xml\n"
    tox = f"[testenv]\ncommands =\n{commands}"
    root = tree(tmp_path, {"tox.ini": tox, "tests/test_a.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root, "tests", "test*.py")


def test_discover_options_give_start_and_pattern(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = python -m unittest discover -v -s src -p '*_check.py' -t .\n"
    root = tree(tmp_path, {"tox.ini": tox, "src/a_check.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root, "src", "*_check.py")


def test_a_nox_session_running_unittest_is_read(tmp_path: Path) -> None:
    nox = 'import nox\n\n@nox.session\ndef tests(session):\n    session.run("python", "-m", "unittest")\n'
    root = tree(tmp_path, {"noxfile.py": nox, "test_a.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root)


# pbr 7.1.3's: OpenStack's tox runs stestr, which discovers with unittest from its .stestr.conf's test_path.
STESTR_TOX = "[testenv]\ncommands =\n  stestr run --serial --suppress-attachments {posargs}\n  stestr slowest\n"
STESTR_CONF = "[DEFAULT]\ntest_path=./pkg/tests\ntop_dir=./\n"


def test_a_stestr_run_is_unittests_discovery_of_its_test_path(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": STESTR_TOX, ".stestr.conf": STESTR_CONF, "pkg/tests/test_a.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root, "pkg/tests", "test*.py")
    assert own_script(root) == ["-m", "unittest", "discover", "-s", "./pkg/tests", "-t", "./"]


@pytest.mark.parametrize("workers", ["--concurrency=4", "--concurrency 4"])
def test_a_stestr_run_on_workers_of_its_choosing_is_unittests_discovery(tmp_path: Path, workers: str) -> None:
    tox = f"[testenv]\ncommands = stestr run {workers} --slowest\n"
    root = tree(tmp_path, {"tox.ini": tox, ".stestr.conf": STESTR_CONF, "pkg/tests/test_a.py": UNITTEST_CASE})
    assert own_script(root) == ["-m", "unittest", "discover", "-s", "./pkg/tests", "-t", "./"]


def test_a_stestr_test_path_is_expanded_as_its_shell_expands_it(tmp_path: Path) -> None:
    # oslo.cache 4.3.0: its functional tox environments set STESTR_TEST_PATH; its unit tests' leaves it unset
    conf = "[DEFAULT]\ntest_path=${STESTR_TEST_PATH:-./pkg/tests}\ntop_dir=./\n"
    root = tree(tmp_path, {"tox.ini": STESTR_TOX, ".stestr.conf": conf, "pkg/tests/test_a.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root, "pkg/tests", "test*.py")
    assert own_script(root) == ["-m", "unittest", "discover", "-s", "./pkg/tests", "-t", "./"]


def test_a_stestr_test_path_takes_the_variable_the_tests_are_given(tmp_path: Path) -> None:
    tox = STESTR_TOX + "setenv =\n  STESTR_TEST_PATH=./pkg/unit\n"
    conf = "[DEFAULT]\ntest_path=${STESTR_TEST_PATH:-./pkg/tests}\ntop_dir=./\n"
    root = tree(tmp_path, {"tox.ini": tox, ".stestr.conf": conf, "pkg/unit/test_a.py": UNITTEST_CASE})
    assert own_script(root) == ["-m", "unittest", "discover", "-s", "./pkg/unit", "-t", "./"]


def test_a_stestr_run_that_filters_its_tests_is_not_read(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = stestr run --exclude-regex slow\n"
    root = tree(tmp_path, {"tox.ini": tox, ".stestr.conf": STESTR_CONF, "pkg/tests/test_a.py": UNITTEST_CASE})
    assert own_script(root) is None


NOX_ON_A_PATH = """\
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "pkg"


@nox.session
def tests(session):
    session.run("coverage", "run", "-m", "pytest", *session.posargs, PACKAGE)
"""


def test_a_nox_session_running_pytest_on_a_path_the_noxfile_names_collects_that_path(tmp_path: Path) -> None:
    # referencing 0.37.0: its suite/ checkout's own test_sanity.py imports jsonschema, which depends on referencing
    files = {"noxfile.py": NOX_ON_A_PATH, "pkg/tests/test_a.py": "def test_a():\n    pass\n", "suite/test_x.py": ""}
    assert rules(tree(tmp_path, files)) == Collection((), ("pkg",))


def test_a_path_the_noxfile_computes_otherwise_is_not_guessed(tmp_path: Path) -> None:
    nox = NOX_ON_A_PATH.replace('ROOT / "pkg"', 'ROOT / os.environ["PACKAGE"]')
    assert rules(tree(tmp_path, {"noxfile.py": nox, "pkg/tests/test_a.py": ""})) is None


def test_a_repository_configuring_pytest_keeps_pytests_rules(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = python -m unittest discover tests\n"
    pyproject = "[tool.pytest.ini_options]\naddopts = '-ra'\n"
    root = tree(tmp_path, {"tox.ini": tox, "pyproject.toml": pyproject, "tests/test_a.py": UNITTEST_CASE})
    assert rules(root) is None


def test_a_conftest_means_pytest(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/conftest.py": "", "tests/test.py": UNITTEST_CASE})
    assert rules(root) is None


def test_named_test_modules_keep_pytests_rules(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = python -m unittest tests.test_a\n"
    root = tree(tmp_path, {"tox.ini": tox, "tests/test_a.py": UNITTEST_CASE})
    assert rules(root) is None


def test_a_start_directory_outside_the_repository_is_not_taken(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = python -m unittest discover -s ../elsewhere\n"
    root = tree(tmp_path / "repo", {"tox.ini": tox, "tests/test_a.py": UNITTEST_CASE})
    (tmp_path / "elsewhere").mkdir()
    assert rules(root) is None


def test_a_factor_conditioned_command_is_left_out(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands =\n    py38: python -m unittest discover tests\n    pytest\n"
    root = tree(tmp_path, {"tox.ini": tox, "tests/test_a.py": UNITTEST_CASE})
    assert rules(root) is None


def test_an_undeclared_unittest_file_only_unittest_finds_gives_its_default_rules(tmp_path: Path) -> None:
    root = tree(tmp_path, {"src/tests/__init__.py": "", "src/tests/test.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root)


def test_a_testcase_base_class_with_no_test_keeps_pytests_rules(tmp_path: Path) -> None:
    # leather 0.4.1: leather/testcase.py's LeatherTestCase has helpers and no test; its tests are pytest's to find
    base = "import unittest\n\n\nclass PkgTestCase(unittest.TestCase):\n    def render(self, chart):\n        pass\n"
    root = tree(tmp_path, {"pkg/testcase.py": base, "tests/test_a.py": UNITTEST_CASE, "test.py": "raise ValueError\n"})
    assert rules(root) is None


def test_unittests_rules_leave_out_the_directories_its_discovery_does_not_enter(tmp_path: Path) -> None:
    # factory_boy 3.3.3: `python -m unittest` runs its tests/ package; examples/ holds no package
    files = {"tests/__init__.py": "", "tests/tests.py": UNITTEST_CASE, "tests/data/test_x.py": "raise ValueError\n"}
    root = tree(tmp_path, {**files, "examples/flask/test_demoapp.py": "import flask\n", ".tox/test_y.py": ""})
    assert rules(root) == Collection((*UNITTEST_OPTIONS, "--ignore=examples", "--ignore=tests/data"))


def test_a_discovery_that_would_find_no_test_file_leaves_pytests_recursion_alone(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/test.py": UNITTEST_CASE})
    assert rules(root) == Collection(UNITTEST_OPTIONS)


def test_pytest_style_files_alone_keep_pytests_rules(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/test_a.py": UNITTEST_CASE, "tests/testing.py": "VALUE = 1\n"})
    assert rules(root) is None


def test_a_file_that_only_imports_unittest_mock_keeps_pytests_rules(tmp_path: Path) -> None:
    helper = "from unittest import mock\n\n\ndef patched():\n    return mock.Mock()\n"
    root = tree(tmp_path, {"tests/testutils.py": helper, "tests/test_a.py": "def test_a():\n    pass\n"})
    assert rules(root) is None


def test_a_tox_pytest_commands_paths_and_test_choosing_options_are_kept(tmp_path: Path) -> None:
    command = "pytest --cov cssselect --ignore=tests/slow -p no:randomly {posargs:cssselect tests docs}"
    tox = f"[testenv]\ncommands = {command}\n"
    root = tree(tmp_path, {"tox.ini": tox, "cssselect/__init__.py": "", "tests/test_a.py": "", "docs/index.rst": ""})
    assert rules(root) == Collection(("--ignore=tests/slow",), ("cssselect", "tests", "docs"))


@pytest.mark.parametrize(
    "tasks",
    [
        '[tool.poe.tasks]\ntest = "uv run pytest --ignore=tests/slow tests"\nlint = "python tools/lint.py"\n',
        '[tool.hatch.envs.hatch-test.scripts]\nrun = "pytest --ignore=tests/slow {args:tests}"\n'
        '[tool.hatch.envs.default.scripts]\ntest = "pytest --ignore=tests/slow {args:tests}"\n',
    ],
)
def test_a_task_runners_test_task_chooses_as_a_tox_command_does(tmp_path: Path, tasks: str) -> None:
    files = {"pyproject.toml": tasks, "tests/test_a.py": "", "tests/slow/test_b.py": "", "tools/lint.py": ""}
    assert rules(tree(tmp_path, files)) == Collection(("--ignore=tests/slow",), ("tests",))


def test_coverage_running_pytest_over_a_folder_gives_that_folder(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = coverage run --branch -m pytest {posargs:src/ecdsa}\n"
    root = tree(tmp_path, {"tox.ini": tox, "src/ecdsa/test_der.py": ""})
    assert rules(root) == Collection((), ("src/ecdsa",))


@pytest.mark.parametrize("layout", ["glom", "src/glom"])
def test_doctests_of_the_package_tox_installed_collect_its_source_not_the_whole_tree(
    tmp_path: Path, layout: str
) -> None:
    # glom 24.11: a whole-tree --doctest-modules would import docs/conf.py (sphinx)
    tox = "[testenv]\ncommands = coverage run -m pytest -vv --doctest-modules {envsitepackagesdir}/glom {posargs}\n"
    root = tree(tmp_path, {"tox.ini": tox, f"{layout}/__init__.py": "", "docs/conf.py": "import sphinx\n"})
    assert rules(root) == Collection(("--doctest-modules",), (layout,))


def test_a_path_named_by_a_setenv_variable_is_that_path(tmp_path: Path) -> None:
    # hyperlink 21.0: without it, a whole-tree --doctest-modules imported docs/conf.py (sphinx)
    tox = (
        "[default]\nsetenv =\n    PY_MODULE=hyperlink\n"
        "[testenv]\nsetenv =\n    {[default]setenv}\n    COVERAGE_FILE={toxworkdir}/coverage\n"
        "commands = pytest --cov={env:PY_MODULE} --doctest-modules {posargs:src/{env:PY_MODULE}} {env:MORE:tests}\n"
    )
    files = {"tox.ini": tox, "src/hyperlink/__init__.py": "", "tests/test_a.py": "", "docs/conf.py": "import sphinx\n"}
    assert rules(tree(tmp_path, files)) == Collection(("--doctest-modules",), ("src/hyperlink", "tests"))


def test_a_plain_pytest_command_keeps_pytests_configured_rules(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands =\n    pytest {posargs}\n    python -m unittest discover tests\n"
    root = tree(tmp_path, {"tox.ini": tox, "tests/test_a.py": UNITTEST_CASE})
    assert rules(root) is None


def test_of_several_pytest_commands_the_one_measuring_coverage_is_the_suite(tmp_path: Path) -> None:
    # natsort 8.4.0: its README's doctests first, then the package's, then the measured suite
    commands = "pytest README.rst\n    pytest --doctest-modules natsort\n    pytest --cov natsort --tb=short tests"
    files = {"tox.ini": f"[testenv]\ncommands =\n    {commands}\n", "README.rst": "", "natsort/__init__.py": ""}
    root = tree(tmp_path, {**files, "tests/test_a.py": ""})
    assert rules(root) == Collection((), ("tests",))


SUITE_SETUP = "from setuptools import setup\n\nsetup(name='p', test_suite='tests')\n"


def test_setuptools_test_suite_package_collects_every_module_of_it(tmp_path: Path) -> None:
    files = {"setup.py": SUITE_SETUP, "tests/__init__.py": "", "tests/TestUnits.py": UNITTEST_CASE}
    root = tree(tmp_path, files)
    assert rules(root) == unittest_rules(root, "tests", "*.py")


def test_a_pattern_of_every_module_leaves_out_the_packages_init(tmp_path: Path) -> None:
    # aiomultiprocess 0.9.1's tests/__init__.py imports the classes of its modules: pytest ran each test twice
    assert "--ignore-glob=*/__init__.py" in unittest_rules(tmp_path, ".", "*.py").options
    assert not [o for o in unittest_rules(tmp_path).options if o.startswith("--ignore-glob")]


def test_a_package_of_the_repositorys_run_as_a_module_collects_every_module_of_it(tmp_path: Path) -> None:
    makefile = "test:\n\tpython -m coverage run -m pkg.tests\n"
    files = {
        "Makefile": makefile,
        "pkg/__init__.py": "",
        "pkg/tests/__init__.py": "",
        "pkg/tests/core.py": UNITTEST_CASE,
    }
    root = tree(tmp_path, {**files, "pkg/tests/__main__.py": "import unittest\nunittest.main('pkg.tests')\n"})
    assert (rules(root), own_script(root)) == (unittest_rules(root, "pkg/tests", "*.py"), ["-m", "pkg.tests"])


def test_a_module_run_that_is_no_package_of_the_repositorys_keeps_pytests_rules(tmp_path: Path) -> None:
    root = tree(tmp_path, {"Makefile": "test:\n\tpython -m http.server\n", "tests/core.py": UNITTEST_CASE})
    assert (rules(root), own_script(root)) == (None, None)


def test_setuptools_test_suite_module_collects_that_file(tmp_path: Path) -> None:
    cfg = "[options]\ntest_suite = tests.suite\n"
    root = tree(tmp_path, {"setup.cfg": cfg, "tests/__init__.py": "", "tests/suite.py": UNITTEST_CASE})
    assert rules(root) == unittest_rules(root, "tests", "suite.py")


def test_setuptools_test_suite_whose_files_pytest_finds_keeps_pytests_rules(tmp_path: Path) -> None:
    files = {"setup.py": SUITE_SETUP, "tests/__init__.py": "", "tests/test_units.py": UNITTEST_CASE}
    assert rules(tree(tmp_path, files)) is None


def test_setuptools_test_aliased_to_pytest_keeps_pytests_rules(tmp_path: Path) -> None:
    files = {"setup.py": SUITE_SETUP, "setup.cfg": "[aliases]\ntest = pytest\n", "tests/__init__.py": ""}
    assert rules(tree(tmp_path, {**files, "tests/TestUnits.py": UNITTEST_CASE})) is None


@pytest.mark.parametrize(
    "command",
    ["coverage run --parallel-mode tests.py -v", "python -m coverage run --source pkg -p tests.py -v"],
)
def test_coverage_running_a_script_of_the_repositorys_is_its_own_script(tmp_path: Path, command: str) -> None:
    # defusedxml 0.7.1: `coverage run --parallel-mode tests.py`, whose suite leaves out its BaseTests class
    root = tree(tmp_path, {"tox.ini": f"[testenv]\ncommands =\n    {command}\n", "tests.py": UNITTEST_CASE})
    assert own_script(root) == ["tests.py", "-v"]


def test_coverage_running_a_module_is_no_script(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": "[testenv]\ncommands = coverage run -m tests\n", "tests.py": UNITTEST_CASE})
    assert own_script(root) is None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python -m unittest", ["-m", "unittest"]),  # clize 5.0.2's
        ("coverage run --branch -m unittest discover -s tests", ["-m", "unittest", "discover", "-s", "tests"]),
        ("python -m pytest tests", None),
    ],
)
def test_unittest_run_as_a_module_is_its_own_command(tmp_path: Path, command: str, expected: list[str] | None) -> None:
    root = tree(tmp_path, {"tox.ini": f"[testenv]\ncommands = {command}\n", "tests/test_a.py": UNITTEST_CASE})
    assert own_script(root) == expected


# python-daemon 3.1.2's: no command, no pytest configuration, and testscenarios' cases in a test/ package.
SCENARIOS = "import testscenarios\n\n\nclass T(testscenarios.WithScenarios):\n    scenarios = [('a', {'x': 1})]\n"
UNITTEST_MAIN = "import unittest\n\nfrom .test_a import *\n\nif __name__ == '__main__':\n    unittest.main()\n"
LOAD_TESTS = UNITTEST_CASE + "\n\ndef load_tests(loader, tests, pattern):\n    return tests\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"test/__init__.py": "", "test/scaffold.py": SCENARIOS},
            ["-m", "unittest", "discover", "-s", "test", "-t", "."],
        ),
        ({"tests/test_a.py": LOAD_TESTS}, ["-m", "unittest", "discover", "-s", "tests"]),
        # lark-parser 0.12.0's tests/__main__.py imports each module's cases, an optional one only if it imports
        (
            {"tests/__init__.py": "", "tests/__main__.py": UNITTEST_MAIN, "tests/test_a.py": UNITTEST_CASE},
            ["-m", "tests"],
        ),
    ],
)
def test_a_suite_only_unittest_loads_fully_is_unittests_discovery(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    assert own_script(tree(tmp_path, files)) == expected


@pytest.mark.parametrize(
    "files",
    [
        {"tests/test_a.py": LOAD_TESTS, "tests/test_b.py": "def test_b():\n    pass\n"},  # a test unittest never runs
        {"tests/test_a.py": LOAD_TESTS, "tests/conftest.py": "import pytest\n"},  # pytest's configuration
        {"tests/test_a.py": LOAD_TESTS, "tox.ini": "[testenv]\ncommands = pytest\n"},  # the repository's command
        {"tests/test_a.py": UNITTEST_CASE},  # nothing pytest leaves out
        {"tests/__main__.py": UNITTEST_MAIN, "tests/test_a.py": UNITTEST_CASE},  # not a package: no `-m tests`
        {"tests/__init__.py": "", "tests/__main__.py": UNITTEST_MAIN, "tests/test_a.py": "def test_a():\n    pass\n"},
    ],
)
def test_a_suite_pytest_runs_fully_has_no_unittest_judge(tmp_path: Path, files: dict[str, str]) -> None:
    assert own_script(tree(tmp_path, files)) is None


NAMESPACE_TESTS = {"src/ns/demo/__init__.py": "", "src/ns/demo/tests.py": UNITTEST_CASE}


def test_tests_in_a_native_namespace_package_are_imported_by_its_name(tmp_path: Path) -> None:
    # zope.event 6.2: src/zope/event/tests.py, and no src/zope/__init__.py
    assert namespace_options(tree(tmp_path, NAMESPACE_TESTS)) == ("-o", "consider_namespace_packages=true")


def test_a_test_file_outside_any_package_keeps_pytests_default(tmp_path: Path) -> None:
    root = tree(tmp_path, {**NAMESPACE_TESTS, "tests/test_more.py": UNITTEST_CASE})
    assert namespace_options(root) == ()


def test_a_repository_configuring_pytest_keeps_its_own_rules(tmp_path: Path) -> None:
    root = tree(tmp_path, {**NAMESPACE_TESTS, "pytest.ini": "[pytest]\n"})
    assert namespace_options(root) == ()


def test_tests_in_an_ordinary_package_keep_pytests_default(tmp_path: Path) -> None:
    root = tree(
        tmp_path, {"src/demo/__init__.py": "", "src/demo/tests/__init__.py": "", "src/demo/tests/test_a.py": ""}
    )
    assert namespace_options(root) == ()


CLIZE_TOX = """\
[tox]
envlist=test-{py39,py310},cover-py310-all

[testenv]
commands=
    test: {posargs:python -m unittest}
    cover: coverage erase
    cover-all: -coverage run {posargs:-m unittest}
"""


def test_a_factor_conditional_command_of_the_test_environments_is_read(tmp_path: Path) -> None:
    # clize 5.0.2: pytest collected its repeated_test fixture classes, 24 errors; its tox runs unittest
    root = tree(
        tmp_path,
        {
            "tox.ini": CLIZE_TOX,
            "pkg/__init__.py": "",
            "pkg/tests/__init__.py": "",
            "pkg/tests/test_a.py": UNITTEST_CASE,
        },
    )
    assert rules(root) == unittest_rules(root)


def test_a_factor_conditional_command_of_no_test_environment_is_left_out(tmp_path: Path) -> None:
    tox = CLIZE_TOX.replace("test-{py39,py310}", "py310")
    root = tree(
        tmp_path,
        {"tox.ini": tox, "pkg/__init__.py": "", "pkg/tests/__init__.py": "", "pkg/tests/test_a.py": UNITTEST_CASE},
    )
    assert rules(root) is None


# zope.publisher 8.1's tox (zope.meta's template, every zopefoundation package's)
ZOPE_TOX = "[testenv]\ncommands =\n    zope-testrunner --test-path=src {posargs:-vc}\n"
ZOPE_FILES = (
    *("-o", "python_files=tests.py */tests/test*.py", "-o", "python_classes=", "-o", "python_functions="),
    *("-p", "no:doctest"),
)


@pytest.mark.parametrize(
    "command", ["zope-testrunner --test-path=src -vc", "python -m zope.testrunner --test-path src"]
)
def test_zope_testrunner_collects_the_test_cases_of_its_test_modules(tmp_path: Path, command: str) -> None:
    root = tree(
        tmp_path, {"tox.ini": f"[testenv]\ncommands = {command}\n", "src/zope/x/tests/test_a.py": UNITTEST_CASE}
    )
    assert rules(root) == Collection(ZOPE_FILES, ("src",))


def test_zope_testrunner_s_default_command_is_read(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": ZOPE_TOX, "src/zope/x/tests.py": UNITTEST_CASE})
    assert rules(root) == Collection(ZOPE_FILES, ("src",))


def test_zope_testrunner_choosing_its_tests_otherwise_is_not_read(tmp_path: Path) -> None:
    tox = "[testenv]\ncommands = zope-testrunner --test-path=src -s zope.x\n"
    root = tree(tmp_path, {"tox.ini": tox, "src/zope/x/tests/test_a.py": UNITTEST_CASE})
    assert rules(root) is None


def test_unittest_rules_collect_no_module_level_function_and_no_text_doctest() -> None:
    assert unittest_rules(Path("/nonexistent")).options[-4:] == ("-o", "python_functions=", "-p", "no:doctest")


# perky 0.10's: tests/ is a package, its test modules import tests/perkytestlib.py by its bare name, and
# `python tests/test_all.py` runs them; nothing configures pytest.
SIBLING_TEST = "import helper\n\n\ndef test_a():\n    assert helper.VALUE\n"
SIBLINGS = {"tests/__init__.py": "", "tests/helper.py": "VALUE = 1\n", "tests/test_a.py": SIBLING_TEST}


def test_a_test_package_importing_a_module_beside_it_by_its_bare_name_is_on_the_path(tmp_path: Path) -> None:
    assert sibling_paths(tree(tmp_path, SIBLINGS)) == ("tests",)


@pytest.mark.parametrize(
    "files",
    [
        {**SIBLINGS, "tests/__init__.py": None},  # a loose folder: pytest puts it on sys.path itself
        {**SIBLINGS, "pytest.ini": "[pytest]\n"},  # the repository's pytest configuration rules
        {**SIBLINGS, "helper.py": "VALUE = 1\n"},  # the root holds the name: pytest finds that one
        {**SIBLINGS, "tests/test_a.py": "import os\n\n\ndef test_a():\n    pass\n"},  # nothing beside it imported
    ],
)
def test_a_test_folder_pytest_imports_from_as_it_is_is_not_added(tmp_path: Path, files: dict[str, str | None]) -> None:
    assert sibling_paths(tree(tmp_path, {k: v for k, v in files.items() if v is not None})) == ()


def test_a_test_package_joins_the_path_django_s_runner_puts_a_folder_on(tmp_path: Path) -> None:
    settings = "INSTALLED_APPS = []\n"
    files = {**SIBLINGS, "tests/test_a.py": "import django.test\nimport helper\n", "tests/settings.py": settings}
    files |= {"app/models.py": ""}
    files |= {"tox.ini": "[testenv]\ncommands = python -m django test --pythonpath=app --settings=tests.settings\n"}
    assert collection_options(tree(tmp_path, files))[-2:] == ["-o", "pythonpath=app tests"]
