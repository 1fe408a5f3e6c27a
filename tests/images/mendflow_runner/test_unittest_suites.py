"""unittest suites built as their own command runs them: the runner end to end with real uv, pytest, coverage.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.contracts import BuildReport, BuildStatus
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import PYPROJECT, build

pytestmark = pytest.mark.slow

NO_PYTEST_CONFIG = PYPROJECT.replace('[tool.pytest.ini_options]\nmarkers = ["fast: quick tests"]\n', "")
TOX = "[testenv]\ncommands =\n    coverage run --source=demo -m unittest discover {toxinidir}/tests\n"
# What unittest runs: one TestCase. What pytest's own rules would also collect, and fail on: a helper class
# named Test… (markdown's TestSuite) whose test method fails, and a test_*.py beside the start directory.
UNITTEST_MODULE = """\
import unittest

from demo import add


class TestHelper:
    def test_not_a_test_case(self):
        raise AssertionError("unittest never runs this")


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(1, 2), 3)
"""
# zope.publisher 8.1's: a module-level function its test cases call, named test…, which unittest never runs
HELPER_MODULE = "def test_mapping(self):\n    raise AssertionError('unittest never runs this')\n"
OUTSIDE_START = "def test_outside_the_start_directory():\n    raise AssertionError('unittest never runs this')\n"


def build_unittest(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path, files: dict[str, str | None]) -> BuildReport:
    """The demo project without its pytest configuration and pytest test, with ``files``."""
    return build(
        make_repo, tmp_path, uv_cache, **{"pyproject.toml": NO_PYTEST_CONFIG, "tests/test_demo.py": None, **files}
    )


def test_a_suite_tox_runs_with_unittest_is_collected_by_unittests_rules(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {"tox.ini": TOX, "tests/test_add.py": UNITTEST_MODULE, "scripts/test_outside.py": OUTSIDE_START}
    report = build_unittest(make_repo, tmp_path, uv_cache, {**files, "tests/test_helpers.py": HELPER_MODULE})
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)
    assert report.test_command[-9:] == [
        *("-o", "python_files=test*.py", "-o", "python_classes=", "-o", "python_functions=", "-p", "no:doctest"),
        "tests",
    ]


def test_the_same_suite_without_its_tox_command_is_collected_by_pytests_rules(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {"tests/test_add.py": UNITTEST_MODULE, "scripts/test_outside.py": OUTSIDE_START}
    report = build_unittest(make_repo, tmp_path, uv_cache, files)
    assert report.status is BuildStatus.FAILED and report.tests.failed == 2


def test_a_setuptools_test_suites_modules_run_whatever_their_names(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """parsedatetime 2.6's layout: setup.py's ``test_suite='tests'``, its files named ``tests/TestUnits.py``."""
    setup = "from setuptools import setup\n\nsetup(test_suite='tests')\n"
    files = {"setup.py": setup, "tests/__init__.py": "", "tests/TestAdd.py": UNITTEST_MODULE}
    report = build_unittest(make_repo, tmp_path, uv_cache, files)
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)


def test_an_undeclared_unittest_file_named_test_py_is_run(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """decorator's layout: ``src/tests/test.py``, run by ``unittest.main()``, declared nowhere."""
    module = UNITTEST_MODULE + "\n\nif __name__ == '__main__':\n    unittest.main()\n"
    report = build_unittest(make_repo, tmp_path, uv_cache, {"src/tests/__init__.py": "", "src/tests/test.py": module})
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)
    assert report.coverage is not None and report.coverage.line_pct > 0


def test_a_test_module_calling_unittest_main_unguarded_is_run_by_pytest(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """toposort 1.10's ``test/test_toposort.py`` ends in ``unittest.main()``: its Makefile runs it as a script."""
    module = UNITTEST_MODULE.replace("class TestHelper:", "class Helper:") + "\n\nunittest.main()\n"
    report = build_unittest(make_repo, tmp_path, uv_cache, {"tests/__init__.py": "", "tests/test_add.py": module})
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)


SUBTESTS = """\
import unittest


class Cases(unittest.TestCase):
    def test_each_below_three(self):
        for i in range(5):
            with self.subTest(i=i):
                self.assertLess(i, 3)

    def test_each_passes(self):
        for i in range(4):
            with self.subTest(i=i):
                self.assertGreaterEqual(i, 0)

    def test_plain(self):
        self.assertTrue(True)
"""


def test_subtests_count_once_within_their_test(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path) -> None:
    """pytest 9's JUnit suites count each subTest as a test; the report counts the tests pytest collected."""
    report = build_unittest(make_repo, tmp_path, uv_cache, {"tox.ini": TOX, "tests/test_cases.py": SUBTESTS})
    assert (report.tests.total, report.tests.passed, report.tests.failed) == (3, 2, 1)
    assert report.failed_tests == ["tests/test_cases.py::Cases::test_each_below_three"]


SUBTEST_SKIPS = """\
import unittest


class Backends(unittest.TestCase):
    def test_each_backend(self):
        for name in ("present", "absent"):
            with self.subTest(backend=name):
                if name == "absent":
                    self.skipTest("backend absent")

    def test_plain(self):
        self.assertTrue(True)

    def test_skipped_itself(self):
        self.skipTest("not here")
"""


def test_a_test_counts_by_its_own_outcome_not_a_skipped_subtests(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """python-slugify's backends test: pytest reports it passed; pytest 9's JUnit holds its subtest's skip."""
    report = build_unittest(make_repo, tmp_path, uv_cache, {"tox.ini": TOX, "tests/test_backends.py": SUBTEST_SKIPS})
    assert (report.status, report.tests.total, report.tests.passed, report.tests.skipped) == (
        BuildStatus.PASSED,
        3,
        2,
        1,
    )
