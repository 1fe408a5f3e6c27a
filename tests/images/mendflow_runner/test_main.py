"""The runner end to end on real git repos, with real uv, ruff, pytest and coverage.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mendflow_runner.plugin import mendflow_job_plugin

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import (
    DEMO_MODULE,
    PASSING_TEST,
    PYPROJECT,
    build,
    demo_files,
    run_runner,
    snapshot,
)

pytestmark = pytest.mark.slow


def test_passing_repo_reports_passed_with_counts_and_metrics(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache)
    assert (report.status, report.fail_reason, report.lint_errors) == (BuildStatus.PASSED, None, [])
    assert (report.tests.total, report.tests.passed) == (2, 2)
    assert report.metrics is not None and report.metrics.ci_tests_passed_total == 2
    assert {"unpack", "dependencies", "lint", "tests", "coverage"} <= report.durations.keys()
    assert {"report.json", "coverage.json", "junit.xml", "runner.log"} <= {p.name for p in (tmp_path / "out").iterdir()}


VERSION_FROM_GIT = (
    PYPROJECT.replace('version = "0.1.0"', 'dynamic = ["version"]').replace(
        'requires = ["hatchling>=1.25"]', 'requires = ["hatchling>=1.25", "hatch-vcs"]'
    )
    + '[tool.hatch.version]\nsource = "vcs"\n'
)


@pytest.mark.parametrize(
    ("version", "status"), [("1.2.4.dev5+gabc1234", BuildStatus.PASSED), ("", BuildStatus.ERRORED)]
)
def test_a_project_taking_its_version_from_git_builds_with_the_version_the_job_is_told(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path, version: str, status: BuildStatus
) -> None:
    """hatch-vcs reads the version from git; a job's sources come without .git (setuptools-scm: "unable to
    detect version")."""
    repo = make_repo(demo_files(**{"pyproject.toml": VERSION_FROM_GIT}))
    told = {"MENDFLOW_JOB_SCM_VERSION": version} if version else {}
    _, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache, **told)
    assert BuildReport.model_validate(data).status is status


MESON_PROJECT = {
    "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n'
    '[build-system]\nrequires = ["meson-python", "ninja"]\nbuild-backend = "mesonpy"\n',
    "meson.build": "project('demo', 'c')\npy = import('python').find_installation(pure: false)\n"
    "py.extension_module('_twice', 'demo/_twice.c', install: true, subdir: 'demo')\n"
    "py.install_sources('demo/__init__.py', subdir: 'demo')\n",
    "demo/_twice.c": """#include <Python.h>
static PyObject *twice(PyObject *self, PyObject *arg) {
    long v = PyLong_AsLong(arg);
    return v == -1 && PyErr_Occurred() ? NULL : PyLong_FromLong(2 * v);
}
static PyMethodDef methods[] = {{"twice", twice, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_twice", NULL, -1, methods};
PyMODINIT_FUNC PyInit__twice(void) { return PyModule_Create(&module); }
""",
    "demo/__init__.py": "from demo._twice import twice\n",
    "tests/test_demo.py": "from demo import twice\n\n\ndef test_twice() -> None:\n    assert twice(21) == 42\n",
}


def test_a_meson_python_project_s_tests_import_its_extension_built_in_the_venv(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """dwave-samplers 1.8.0, ninja among its build requirements: meson-python's editable install builds again on
    import, with the ninja of the environment it was built in; an isolated one is gone by then."""
    report = build(make_repo, tmp_path, uv_cache, **MESON_PROJECT)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1)


def test_a_locked_meson_python_project_keeps_its_build_tools_through_uvs_sync(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """An exact sync would remove the build tools the lock does not hold, which the import needs."""
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "pyproject.toml").write_text(MESON_PROJECT["pyproject.toml"])
    subprocess.run(["uv", "lock", "-q"], cwd=locked, env={**os.environ, "UV_CACHE_DIR": str(uv_cache)}, check=True)
    report = build(make_repo, tmp_path, uv_cache, **MESON_PROJECT, **{"uv.lock": (locked / "uv.lock").read_text()})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1)


def test_coverage_has_functions_with_spans(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    report = build(make_repo, tmp_path, uv_cache)
    assert report.coverage is not None
    demo = report.coverage.file("demo/__init__.py")
    assert demo is not None and report.coverage.file("tests/test_demo.py") is None
    symbols = {s.name: s for s in demo.symbols}
    assert symbols["Box.double"].line_pct == 0.0 and symbols["Box.double"].missing_lines == [16]
    assert (symbols["Box.double"].start_line, symbols["Box.double"].end_line) == (15, 16)
    assert symbols["sign"].branch_pct == 50.0 and symbols["Box"].kind == "class"
    assert 0 < report.coverage.line_pct < 100


def test_parallel_coverage_data_is_combined(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    pyproject = PYPROJECT + "\n[tool.coverage.run]\nparallel = true\n"
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject})
    assert report.status is BuildStatus.PASSED and report.coverage is not None
    demo = report.coverage.file("demo/__init__.py")
    assert demo is not None and 0 < demo.line_pct < 100


BUILDS_ITSELF = """\
from pathlib import Path

import pytest
from jaraco.packaging import metadata


@pytest.mark.fast
def test_the_metadata_names_the_project() -> None:
    assert metadata.load(Path(__file__).parents[1])["Name"] == "demo"
"""


def test_a_test_building_the_project_in_isolation_installs_its_build_backend_offline(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # inflect 7.6.0's pytest-checkdocs reads the metadata with jaraco.packaging, whose isolated build's pip fetches
    # the build backend: its one failure, "pip install … returned non-zero exit status 1", with no network.
    group = 'dependencies = []\n[dependency-groups]\ntest = ["jaraco.packaging"]'
    pyproject = PYPROJECT.replace("dependencies = []", group)
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject, "tests/test_meta.py": BUILDS_ITSELF})
    assert (report.status, report.tests.passed, report.failed_tests) == (BuildStatus.PASSED, 3, [])


SEES_ITS_INDEXES = """\
import os

import pytest


@pytest.mark.fast
def test_pip_may_use_an_index() -> None:
    assert "PIP_NO_INDEX" not in os.environ
"""


def test_tests_with_pypa_build_alone_keep_pips_indexes(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # pip-tools' tests point pip at indexes of their own, and pip-tools requires build
    pyproject = PYPROJECT.replace("dependencies = []", 'dependencies = []\n[dependency-groups]\ntest = ["build"]')
    files = {"pyproject.toml": pyproject, "tests/test_index.py": SEES_ITS_INDEXES}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3)


READS_ITS_CACHE = """\
def pytest_configure(config):
    config.cache.set("demo/configured", True)
"""


def test_a_plugin_reading_pytests_cache_has_one(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # dictdiffer 0.10.0's pytest-isort: "AttributeError: 'Config' object has no attribute 'cache'", exit 3
    report = build(make_repo, tmp_path, uv_cache, **{"conftest.py": READS_ITS_CACHE})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2)


def test_tests_xdist_would_distribute_are_measured(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # yarl 1.18.3 as published: `--numprocesses=auto` in pytest.ini's addopts; 1,466 tests passed, 0 % measured.
    group = 'dependencies = []\n[dependency-groups]\ntest = ["pytest-xdist"]'
    pyproject = PYPROJECT.replace("dependencies = []", group)
    pytest_ini = "[pytest]\naddopts = --numprocesses=2 -ra\n"
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject, "pytest.ini": pytest_ini})
    assert report.status is BuildStatus.PASSED and report.coverage is not None
    demo = report.coverage.file("demo/__init__.py")
    assert demo is not None and demo.line_pct > 0


# dill 0.3.9's shape: tox runs `{envpython} dill/tests/__main__.py`, which runs each test file as a script of its
# own; a test file imports a sibling by its bare name, which only a script's sys.path finds.
OWN_RUNNER = (
    "import glob, os, subprocess, sys\n"
    "tests = sorted(glob.glob(os.path.join(os.path.dirname(__file__), 'test_*.py')))\n"
    "sys.exit(max([subprocess.call([sys.executable, test]) for test in tests] or [0]))\n"
)
SCRIPT_TEST = (
    "import helper\n\n\ndef test_value():\n    assert helper.VALUE == 1\n\n\n"
    "if __name__ == '__main__':\n    test_value()\n"
)


def script_suite(value: int) -> dict[str, str | None]:
    return {
        "tox.ini": "[testenv]\ncommands =\n    {envpython} tests/__main__.py\n",
        "tests/__init__.py": "",
        "tests/__main__.py": OWN_RUNNER,
        "tests/helper.py": f"VALUE = {value}\n",
        "tests/test_script.py": SCRIPT_TEST,
    }


def test_a_suite_its_own_script_passes_is_judged_by_that_script(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **script_suite(1))
    assert report.status is BuildStatus.PASSED and report.failed_tests == []
    said = "pytest failed 1 test that the repository's own `python tests/__main__.py` passes: judged by that command"
    assert f".:0:0 tests {said}" in report.lint_advisory


def test_a_suite_its_own_script_passes_counts_no_failed_tests(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **script_suite(1))
    tests = report.tests
    assert (tests.passed, tests.failed, tests.errors) == (tests.total, 0, 0)


def test_a_suite_its_own_script_fails_stays_failed_with_pytests_failures(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **script_suite(2))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["tests/test_script.py"]


# A unittest suite pytest runs otherwise (clize 5.0.2's `python -m unittest`, whose repeated_test classes pytest's
# unittest plugin cannot instantiate): here unittest's load_tests protocol, which pytest ignores, builds the cases.
LOADED_TESTS = """import unittest

import pytest

pytestmark = pytest.mark.fast  # the demo's B1 runs its fast tests


class Check(unittest.TestCase):
    value = None

    def test_value(self):
        self.assertIsNotNone(self.value)


def load_tests(loader, tests, pattern):
    return unittest.TestSuite([type("CheckOne", (Check,), {"value": 1})("test_value")])
"""


def test_a_suite_its_own_unittest_passes_is_judged_by_unittest(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {"tox.ini": "[testenv]\ncommands = python -m unittest\n", "tests/test_loaded.py": LOADED_TESTS}
    report = build(make_repo, tmp_path, uv_cache, **{"tests/__init__.py": "", **files})
    assert report.status is BuildStatus.PASSED and report.failed_tests == []
    said = "pytest failed 1 test that the repository's own `python -m unittest` passes: judged by that command"
    assert f".:0:0 tests {said}" in report.lint_advisory


CASE = "import unittest\n\n\nclass Check(unittest.TestCase):\n    def test_value(self):\n        self.assertTrue(1)\n"


def test_a_unittest_suite_with_no_command_is_judged_by_unittests_discovery(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # python-daemon 3.1.2's: no tox, nox or pytest configuration; what builds its cases only unittest's loader runs
    pyproject = PYPROJECT.split("[tool.pytest")[0]
    loaded = LOADED_TESTS.replace(
        "import pytest\n\npytestmark = pytest.mark.fast  # the demo's B1 runs its fast tests\n", ""
    )
    files = {
        "pyproject.toml": pyproject,
        "tests/test_demo.py": None,
        "tests/__init__.py": "",
        "tests/test_loaded.py": loaded,
    }
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED and report.failed_tests == []
    own = "`python -m unittest discover -s tests -t .`"
    assert f".:0:0 tests pytest failed 1 test that the repository's own {own} passes: judged by that command" in (
        report.lint_advisory
    )


OPTIONAL_TESTS = "raise ImportError('Nearley not installed. Skipping Nearley tests!')\n"
TESTS_MAIN = """import unittest

from .test_loaded import Check

try:
    from .test_optional import *
except ImportError:
    pass

if __name__ == "__main__":
    unittest.main()
"""


def test_a_test_package_run_by_its_own_main_is_judged_by_it(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # lark-parser 0.12.0's: no command, no pytest configuration; tests/__main__.py runs unittest over the cases it
    # imports, an optional module's only if it imports, which pytest fails
    pyproject = PYPROJECT.split("[tool.pytest")[0]
    files = {"pyproject.toml": pyproject, "tests/test_demo.py": None, "tests/__init__.py": ""}
    files |= {"tests/__main__.py": TESTS_MAIN, "tests/test_loaded.py": CASE, "tests/test_optional.py": OPTIONAL_TESTS}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED and report.failed_tests == []
    said = "pytest failed 1 test that the repository's own `python -m tests` passes: judged by that command"
    assert f".:0:0 tests {said}" in report.lint_advisory


def test_a_test_package_importing_a_module_beside_it_by_its_bare_name_passes(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # perky 0.10's: tests/ is a package and its tests import tests/perkytestlib.py by that name; nothing configures
    # pytest, which imported none of its 4 test modules
    test = "import helper\n\n\ndef test_helper():\n    assert helper.VALUE == 1\n"
    files = {"pyproject.toml": PYPROJECT.split("[tool.pytest")[0], "tests/test_demo.py": None, "tests/__init__.py": ""}
    files |= {"tests/helper.py": "VALUE = 1\n", "tests/test_helper.py": test}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.failures


def test_a_suite_its_own_stestr_passes_is_judged_by_unittests_discovery(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {"tox.ini": "[testenv]\ncommands = stestr run --serial\n", ".stestr.conf": "[DEFAULT]\ntest_path=./tests\n"}
    report = build(
        make_repo, tmp_path, uv_cache, **{"tests/__init__.py": "", "tests/test_loaded.py": LOADED_TESTS, **files}
    )
    assert report.status is BuildStatus.PASSED and report.failed_tests == []
    own = "`python -m unittest discover -s ./tests -t ./`"
    assert f".:0:0 tests pytest failed 1 test that the repository's own {own} passes: judged by that command" in (
        report.lint_advisory
    )


# snoop 0.6.1's tests assert that no tracer is on, as under its own command, `pytest`, none is.
UNTRACED_TEST = """import sys

import pytest


@pytest.mark.fast
def test_no_tracer_is_on():
    assert sys.gettrace() {}
"""


def test_a_test_failing_only_under_coverages_tracer_counts_as_passed(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_untraced.py": UNTRACED_TEST.format("is None")})
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 3, 0)
    said = "1 test failed only under coverage.py's tracer and passed without it: counted as passed, their lines"
    assert f".:0:0 tests {said} unmeasured" in report.lint_advisory


def test_a_test_failing_without_the_tracer_too_stays_failed(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_untraced.py": UNTRACED_TEST.format("== 1")})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["tests/test_untraced.py::test_no_tracer_is_on"]
    assert [f.message for f in report.failures] == ["assert None == 1"]  # the unmeasured run's words


def test_a_paths_alias_to_a_tree_that_is_not_here_leaves_the_files_where_they_are(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # pyjwt 2.10.1: [tool.coverage.paths] source = [".tox/*/site-packages", "jwt"], parallel = true
    aliases = '\n[tool.coverage.paths]\nsource = [".tox/*/site-packages", "demo"]\n'
    pyproject = PYPROJECT + "\n[tool.coverage.run]\nparallel = true\n" + aliases
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject})
    assert report.coverage is not None and report.coverage.file("demo/__init__.py") is not None


def test_a_report_include_naming_the_installed_package_reports_it_in_the_tree(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # python-dotenv 1.0.1's setup.cfg: tox measures the package where it installs it
    include = '\n[tool.coverage.report]\ninclude = ["*/site-packages/demo/*"]\n'
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": PYPROJECT + include})
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["demo/__init__.py"]


def test_a_module_no_test_imports_counts_as_uncovered_in_a_src_layout(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {
        "pyproject.toml": PYPROJECT.replace('packages = ["demo"]', 'packages = ["src/demo"]'),
        "demo/__init__.py": None,
        "src/demo/__init__.py": DEMO_MODULE,
        "src/demo/untested.py": "def f() -> int:\n    return 1\n",
    }
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.coverage is not None and report.coverage.file("src/demo/__init__.py") is not None
    untested = report.coverage.file("src/demo/untested.py")
    assert untested is not None and (untested.line_pct, untested.missing_lines) == (0.0, [1, 2])


def test_packaging_and_documentation_scripts_are_not_code_under_test(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """Without a coverage configuration; simplejson ships setup.py and Sphinx's conf.py at its top."""
    scripts = {"setup.py": "import sys\nprint(sys.argv)\n", "conf.py": "project = 'demo'\n", "docs/make.py": "x = 1\n"}
    report = build(make_repo, tmp_path, uv_cache, **scripts)
    assert report.coverage is not None
    assert [f.path for f in report.coverage.files] == ["demo/__init__.py"]


def test_vendored_third_party_code_is_not_code_under_test(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """Without a coverage configuration; bleach ships html5lib in ``bleach/_vendor/``."""
    vendored = {"demo/_vendor/__init__.py": "", "demo/_vendor/lib.py": "def f():\n    return 1\n"}
    report = build(make_repo, tmp_path, uv_cache, **vendored)
    assert report.coverage is not None
    assert [f.path for f in report.coverage.files] == ["demo/__init__.py"]


def test_the_tests_run_with_python_writing_bytecode_as_in_the_repositorys_ci(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """execnet 2.1.2's test_dont_write_bytecode: a child interpreter is not told to skip it."""
    probe = "import sys\n\nimport pytest\n\n\n@pytest.mark.fast\ndef test_written():\n"
    probe += "    assert not sys.dont_write_bytecode\n"
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_bytecode.py": probe})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), report.failures


UNIX_SOCKET_TEST = """\
import socket

import pytest


@pytest.mark.fast
def test_a_server_listens_on_a_socket_in_tmp_path(tmp_path):
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "test.sock"))
"""


def test_the_tests_temp_dir_is_short_enough_for_a_unix_socket(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """werkzeug 3.1.3's test_server[unix socket] failed: its tmp_path was under the job's deep workspace."""
    deep = tmp_path / "work" / ("tmp-of-" + "a-job-with-a-long-id-" * 3)
    deep.mkdir(parents=True)
    repo = make_repo(demo_files(**{"tests/test_sock.py": UNIX_SOCKET_TEST}))
    rc, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache, TMPDIR=str(deep))
    report = BuildReport.model_validate(data)
    assert (rc, report.status, report.tests.passed) == (0, BuildStatus.PASSED, 3)


PIP_TEST = """\
import subprocess
import sys

import pytest


@pytest.mark.fast
def test_pip_knows_the_project():
    subprocess.run([sys.executable, "-m", "pip", "show", "demo"], check=True)
"""


def test_the_tests_venv_has_pip_as_toxs_has(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    """jsonschema 4.23.0's test_license runs ``pip show jsonschema``."""
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_pip.py": PIP_TEST})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3)


def test_failing_test_is_failed_tests_with_node_id(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    broken = PASSING_TEST.replace("add(1, 2) == 3", "add(1, 2) == 4")
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_demo.py": broken})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["tests/test_demo.py::test_add"]
    assert (report.tests.failed, report.tests.passed) == (1, 1)


WITH_RUFF = PYPROJECT + "\n[tool.ruff]\n"


def test_lint_error_alone_is_failed_lint(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    files = {"pyproject.toml": WITH_RUFF, "demo/extra.py": "import os\n"}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    assert report.lint_errors == ["demo/extra.py:1:8 F401 `os` imported but unused"]


def test_lint_only_lints_and_runs_no_test(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    repo = make_repo(demo_files(**{"pyproject.toml": WITH_RUFF, "demo/extra.py": "import os\n"}))
    rc, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache, "--lint-only")
    report = BuildReport.model_validate(data)
    assert (rc, report.status, report.fail_reason) == (0, BuildStatus.FAILED, FailReason.LINT)
    assert report.lint_errors == ["demo/extra.py:1:8 F401 `os` imported but unused"]
    assert (report.tests.total, report.coverage, "tests" in report.durations) == (0, None, False)


def test_unformatted_file_is_a_lint_error_when_the_repo_uses_ruff(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {"pyproject.toml": PYPROJECT + "\n[tool.ruff]\nline-length = 100\n", "demo/ugly.py": "x  =  1\n"}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.lint_errors == ["demo/ugly.py:1:3 FORMAT file would be reformatted by `ruff format`"]


def test_the_ruff_version_pre_commit_pins_is_the_one_that_lints(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    hook = "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.4.4\n    hooks:\n"
    files = {".pre-commit-config.yaml": hook + "      - id: ruff\n", "pyproject.toml": PYPROJECT + "\n[tool.ruff]\n"}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED, report.lint_errors
    log = (tmp_path / "out" / "runner.log").read_text()
    assert "ruff==0.4.4" in log and f"{tmp_path / 'work' / 'venv'}/bin/ruff check" in log


def test_a_repo_without_ruff_config_is_held_to_bug_level_rules_only(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    style_only = "import sys\n\nx  =  sys.version_info[0:1] == (3,)\n"  # unformatted, YTT-flagged: no bug
    report = build(
        make_repo,
        tmp_path,
        uv_cache,
        **{"pyproject.toml": WITH_RUFF.replace("[tool.ruff]", ""), "demo/style.py": style_only},
    )
    assert (report.status, report.lint_errors, report.lint_advisory) == (BuildStatus.PASSED, [], [])


def test_a_repo_that_configures_no_ruff_gets_its_findings_as_advice(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{"demo/extra.py": "import os\n"})
    assert (report.status, report.lint_errors) == (BuildStatus.PASSED, [])
    assert report.lint_advisory == ["demo/extra.py:1:8 F401 `os` imported but unused"]


def test_mypy_runs_when_the_repo_configures_it(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    typed = PYPROJECT + '\n[tool.mypy]\nfiles = ["demo"]\n'
    bad = "def half(x: int) -> int:\n    return x / 2\n"
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": typed, "demo/half.py": bad})
    assert report.fail_reason == FailReason.LINT
    assert next(e for e in report.lint_errors if "mypy" in e).startswith("demo/half.py:2:12 mypy[return-value] ")


def test_a_mypy_hooks_pin_of_a_package_the_tests_have_does_not_replace_it(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """iniconfig's: the hook's ``additional_dependencies`` pin pytest 7.2.0; the tests run on the pytest they got."""
    hook = "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v1.10.0\n    hooks:\n"
    hook += "      - id: mypy\n        additional_dependencies: [pytest==7.2.0]\n"
    check = "import pytest\n\n\n@pytest.mark.fast\ndef test_runs_on_the_pytest_it_got() -> None:\n"
    check += "    assert not pytest.__version__.startswith('7.')\n"
    files = {
        ".pre-commit-config.yaml": hook,
        "pyproject.toml": PYPROJECT + '\n[tool.mypy]\nfiles = ["demo"]\n',
        "tests/test_version.py": check,
    }
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED, (report.failed_tests, report.lint_errors)
    assert "mypy==1.10.0" in (tmp_path / "out" / "runner.log").read_text()


def test_a_mypy_that_cannot_run_is_one_finding_naming_its_error(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    twins = {"pyproject.toml": PYPROJECT + "\n[tool.mypy]\n", "a/util.py": "X = 1\n", "b/util.py": "X = 2\n"}
    report = build(make_repo, tmp_path, uv_cache, **twins)
    [finding] = [e for e in report.lint_errors if "mypy" in e]
    assert finding.startswith(".:0:0 mypy-error exited 2: ") and 'Duplicate module named "util"' in finding
    assert str(tmp_path) not in finding  # the same in every job: comparable with the parent commit's


def test_missing_dependency_is_errored_dependencies(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{"requirements.txt": "mendflow-no-such-package-xyz==1.0\n"})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    assert report.error_reason is not None and "uv pip install" in report.error_reason
    assert "mendflow-no-such-package-xyz" in report.error_reason and "hint:" not in report.error_reason
    assert report.transient is False


def test_a_build_backend_failure_names_the_exception_it_ended_with(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """html5lib 1.1's setup.py imports pkg_resources, which today's setuptools no longer has."""
    files = {"pyproject.toml": None, "setup.py": "import no_such_build_module\n"}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    said = "[stderr] ModuleNotFoundError: No module named 'no_such_build_module'"
    assert report.error_reason is not None and said in report.error_reason, report.error_reason


def test_only_the_dependency_groups_for_tests_are_installed(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    groups = '\n[dependency-groups]\ntest = ["pytest"]\ndocs = ["mendflow-no-such-package-xyz==1.0"]\n'
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": PYPROJECT + groups})
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert "--group=test" in (tmp_path / "out" / "runner.log").read_text()


def test_a_repo_no_python_here_fits_errors_at_once_saying_so(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    pyproject = PYPROJECT.replace('requires-python = ">=3.11"', 'requires-python = ">=3.99"')
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject})
    assert (report.status, report.fail_reason, report.transient) == (
        BuildStatus.ERRORED,
        FailReason.DEPENDENCIES,
        False,
    )
    assert report.error_reason is not None and "no Python here fits requires-python '>=3.99'" in report.error_reason


def test_a_python_version_pin_missing_here_falls_back_to_one_requires_python_allows(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{".python-version": "3.99\n"})
    assert report.status is BuildStatus.PASSED
    assert "no Python 3.99 here (.python-version)" in (tmp_path / "out" / "runner.log").read_text()


def test_no_tests_is_failed_no_tests(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_demo.py": None, "tests/__init__.py": ""})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert report.error_reason is not None and "collected no tests" in report.error_reason


def test_marker_selects_the_fast_suite_when_declared(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    slow = "def test_unmarked() -> None:\n    assert False\n"
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_slow.py": slow})
    assert report.status == BuildStatus.PASSED and report.test_command[-2:] == ["-m", "fast"]


def test_memory_error_in_a_test_is_errored_oom_naming_it(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    hog = "def test_hog() -> None:\n    raise MemoryError()\n"
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_hog.py": hog, "pyproject.toml": _no_markers()})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.OOM)
    assert report.error_reason is not None and "tests/test_hog.py::test_hog" in report.error_reason


def test_bad_snapshot_is_errored_bad_input(tmp_path: Path, uv_cache: Path) -> None:
    bogus = tmp_path / "src.tar.gz"
    bogus.write_bytes(b"not a tarball")
    rc, data = run_runner(bogus, tmp_path / "out", uv_cache)
    report = BuildReport.model_validate(data)
    assert (rc, report.status, report.fail_reason) == (0, BuildStatus.ERRORED, FailReason.BAD_INPUT)


def test_warm_cache_installs_faster(make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calc = Path(__file__).resolve().parents[3] / "examples" / "calc"
    files: dict[str, str | bytes | None] = {
        str(p.relative_to(calc)): p.read_bytes()
        for p in calc.rglob("*")
        if p.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in p.parts)
    }
    source = snapshot(make_repo(files), tmp_path / "calc.tar.gz")
    cache = tmp_path / "fresh-cache"
    times = []
    for run in ("cold", "warm"):
        _, data = run_runner(source, tmp_path / run / "out", cache)
        report = BuildReport.model_validate(data)
        assert report.status == BuildStatus.PASSED, report.error_reason
        times.append(report.durations["dependencies"])
    with capsys.disabled():
        print(f"\nexamples/calc dependency install: cold {times[0]:.2f}s, warm {times[1]:.2f}s")
    (tmp_path / "timings.json").write_text(json.dumps(times))


def _no_markers() -> str:
    return PYPROJECT.replace('markers = ["fast: quick tests"]\n', "")


def test_pytest_cov_options_in_addopts_do_not_break_the_build(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # pytest-cov is not installed: left in, "--cov" would be a usage error; the other options still apply.
    addopts = 'addopts = "--cov=demo --cov-report term-missing -p no:randomly --strict-markers"\n'
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": PYPROJECT + addopts})
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and report.coverage.file("demo/__init__.py") is not None
    assert "--strict-markers" in (tmp_path / "out" / "runner.log").read_text()


def test_pytest_cov_options_in_pytest_9s_own_table_do_not_break_the_build(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # pydyf 0.13.0: [tool.pytest] (pytest 9's native TOML) with --cov and --cov-fail-under; exit 4 before this
    native = "[tool.pytest]\nmarkers = ['fast: quick tests']\naddopts = ['--cov', '--cov-fail-under=100']\n"
    pyproject = PYPROJECT.replace('[tool.pytest.ini_options]\nmarkers = ["fast: quick tests"]\n', native)
    assert native in pyproject
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject})
    assert report.status is BuildStatus.PASSED, report.error_reason


def test_pytest_cov_enabled_by_a_plugin_does_not_take_the_coverage_over(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # zipp and the other jaraco projects: pytest-enabler adds --cov at start-up whenever pytest-cov is installed.
    pyproject = PYPROJECT.replace("dependencies = []", 'dependencies = []\n\n[project.optional-dependencies]\n'
                                  'test = ["pytest", "pytest-cov", "pytest-enabler"]')  # fmt: skip
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject})
    assert report.coverage is not None
    demo = report.coverage.file("demo/__init__.py")
    assert demo is not None and demo.line_pct > 0


def test_a_configuration_requiring_pytest_cov_builds_with_it_blocked(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # pycountry 26.2.16's requirement; here nothing else declares pytest-cov, so the requirement installs it
    required = 'required_plugins = "pytest-cov>=4.0.0"\n'
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": PYPROJECT + required})
    assert report.status is BuildStatus.PASSED, report.error_reason


ONLINE_TEST = """\
import socket

import pytest


@pytest.mark.network
def test_resolves_a_public_name():
    assert socket.gethostbyname("pypi.org")
"""


def test_a_test_the_repository_marks_as_needing_the_internet_is_skipped_saying_so(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # email-validator 2.4.0's marker; a job's tests have no network, so the test failed whatever the commit did
    markers = 'markers = ["network: marks tests as requiring Internet access"]\n'
    pyproject = PYPROJECT.replace('markers = ["fast: quick tests"]\n', markers)
    report = build(make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject, "tests/test_online.py": ONLINE_TEST})
    assert (report.status, report.tests.skipped) == (BuildStatus.PASSED, 1), report.failures
    assert "registers as needing the Internet" in (tmp_path / "out" / "junit.xml").read_text()


# pytest-perf collects a module that names it, as exercises.py's import does.
PERF_EXERCISES = """\
from pytest_perf.deco import extras


def add_perf():
    "adding"
    import demo  # end warmup

    demo.add(1, 2)
"""


def test_a_pytest_perf_experiment_is_skipped_saying_so(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # importlib_metadata 10.2.0: each experiment of its exercises.py failed on `git remote get-url origin`; it
    # installs the upstream code to time against from there, which no job could do
    group = 'dependencies = []\n[dependency-groups]\ntest = ["pytest-perf"]'
    files = {"pyproject.toml": _no_markers().replace("dependencies = []", group), "exercises.py": PERF_EXERCISES}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.tests.passed, report.tests.skipped) == (BuildStatus.PASSED, 2, 1), report.failures
    assert "a pytest-perf experiment" in (tmp_path / "out" / "junit.xml").read_text()


OWN_COVERAGE_TEST = """\
import subprocess
import sys


def test_coverage_writes_its_data_where_it_runs(tmp_path):
    (tmp_path / "script.py").write_text("done = True\\n")
    subprocess.run([sys.executable, "-m", "coverage", "run", "script.py"], cwd=tmp_path, check=True)
    assert (tmp_path / ".coverage").is_file()
"""


def test_a_tests_own_coverage_run_keeps_its_data_apart_from_the_runners(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # beartype 0.23.1: the runner's COVERAGE_FILE reached its test's `coverage report`, which combined the
    # runner's data files
    files = {"pyproject.toml": _no_markers(), "tests/test_own_coverage.py": OWN_COVERAGE_TEST}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), report.failures
    assert report.coverage is not None and report.coverage.line_pct > 0


@pytest.mark.parametrize(
    ("line", "needs_it"),
    [
        ("network: marks tests as requiring Internet access", True),
        ("online: talks to the real service", True),
        ("slow(reason): needs a network connection", True),
        ("socket: tests of the network module", False),
        ("fast: quick tests", False),
    ],
)
def test_a_marker_needs_the_internet_by_its_name_or_its_description(line: str, needs_it: bool) -> None:
    assert bool(mendflow_job_plugin.internet_markers([line])) is needs_it


NO_COVER_CONFTEST = """\
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.no_cover)
"""


def test_a_suite_marking_tests_no_cover_runs_with_pytest_cov_blocked(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # python-dateutil: its conftest marks tests no_cover (pytest-cov's marker) and warnings are errors.
    pyproject = PYPROJECT.replace("dependencies = []", 'dependencies = []\n\n[project.optional-dependencies]\n'
                                  'test = ["pytest", "pytest-cov"]') + 'filterwarnings = ["error"]\n'  # fmt: skip
    report = build(
        make_repo, tmp_path, uv_cache, **{"pyproject.toml": pyproject, "tests/conftest.py": NO_COVER_CONFTEST}
    )
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.tests.passed > 0


def test_a_coverage_plugin_the_config_loads_is_installed(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # pycodestyle's sdist: setup.cfg loads covdefaults, which only its CI's requirements (not shipped) install;
    # and covdefaults' fail_under = 100, which makes `coverage json` exit 2 with its report written.
    report = build(make_repo, tmp_path, uv_cache, **{"setup.cfg": "[coverage:run]\nplugins = covdefaults\n"})
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and report.coverage.file("demo/__init__.py") is not None


def test_a_coverage_py_without_json_is_read_from_its_xml(
    make_repo: RepoFactory, tmp_path_factory: pytest.TempPathFactory, uv_cache: Path
) -> None:
    # pyparsing's tests pin coverage 4.4.2: no `coverage json` before 5.0, but `coverage xml` (Cobertura). Not
    # under tmp_path: coverage 4 matches the omit pattern */test_*.py against the whole path, test name included.
    files = {"tests/requirements.txt": "coverage==4.5.4\npytest\n"}
    report = build(make_repo, tmp_path_factory.mktemp("old-coverage"), uv_cache, **files)
    assert report.status is BuildStatus.PASSED and report.coverage is not None
    demo = report.coverage.file("demo/__init__.py")
    assert demo is not None and 0 < demo.line_pct < 100
    assert {s.name for s in demo.symbols} == {"add", "sign", "Box.__init__", "Box.double"}
    assert any("coverage json" in advisory for advisory in report.lint_advisory)


NOT_PYTHON_TEST = """\
import pytest


@pytest.mark.fast
def test_code_compiled_from_a_template_is_measured() -> None:
    exec(compile("x = 1", "demo/page", "exec"), {})
"""


def test_a_measured_file_that_is_not_python_is_left_out(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # jinja2 compiles templates to code named after the template: coverage.py measures it, then cannot parse it.
    files = {"demo/page": "{% if x %}{{ x }}{% endif %}\n", "tests/test_template.py": NOT_PYTHON_TEST}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.coverage is not None and report.coverage.file("demo/__init__.py") is not None
    assert any("demo/page" in advisory for advisory in report.lint_advisory)


def test_measured_code_without_a_source_file_is_left_out(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    # mako compiles templates to modules named after no file (`_chs_unicode_py3k_html`): coverage.py measures
    # them, then finds no source to report.
    test = NOT_PYTHON_TEST.replace('"demo/page"', '"demo/_compiled_page"')
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_template.py": test})
    assert report.coverage is not None and report.coverage.file("demo/__init__.py") is not None
    assert any("demo/_compiled_page" in advisory for advisory in report.lint_advisory)


# zope.event 6.2's shape: a native namespace package (no src/ns/__init__.py) with its tests inside it, coverage's
# source named as a package, and no pytest configuration (zope-testrunner runs its tests).
NAMESPACE_PYPROJECT = (
    PYPROJECT.split("[tool.pytest.ini_options]")[0]
    .replace('name = "demo"', 'name = "ns.demo"')
    .replace('packages = ["demo"]', 'packages = ["src/ns"]')
) + '[tool.coverage.run]\nsource = ["ns.demo"]\n'
NAMESPACE_TEST = """\
import unittest


class AddTest(unittest.TestCase):
    def test_add(self):
        from ns.demo import add

        self.assertEqual(add(1, 2), 3)
"""


def test_a_native_namespace_packages_tests_measure_it(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    files = {
        "pyproject.toml": NAMESPACE_PYPROJECT,
        "demo/__init__.py": None,
        "tests/test_demo.py": None,
        "src/ns/demo/__init__.py": DEMO_MODULE,
        "src/ns/demo/tests.py": NAMESPACE_TEST,
    }
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED and report.coverage is not None, report.error_reason
    demo = report.coverage.file("src/ns/demo/__init__.py")
    assert demo is not None and demo.line_pct > 0


PROGRAM_NAME_TEST = """\
import os
import sys

import pytest


@pytest.mark.fast
def test_the_program_is_pytest() -> None:
    assert os.path.basename(sys.argv[0]) == "pytest", sys.argv
"""


def test_tests_see_pytest_as_the_program_their_ci_runs(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    # typed-argument-parser 1.12.0: argparse's usage line names the program, "usage: pytest"
    report = build(make_repo, tmp_path, uv_cache, **{"tests/test_program.py": PROGRAM_NAME_TEST})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), [f.message for f in report.failures]


# javaproperties 0.8.2's tox sets the zone its tests expect times in
ZONE_TEST = """import time

import pytest


@pytest.mark.fast
def test_the_zone_is_tox_s():
    assert time.strftime("%Z", time.localtime(0)) == "EST"
"""


def test_tox_setenv_reaches_the_tests(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    files = {"tox.ini": "[testenv]\nsetenv =\n    TZ=EST5EDT\ncommands = pytest\n", "tests/test_zone.py": ZONE_TEST}
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert report.status is BuildStatus.PASSED and report.tests.passed == report.tests.total
