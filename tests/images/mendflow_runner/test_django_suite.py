"""Which Django test runner a repository's own command runs (``mendflow_runner.django_suite``), and the pytest
rules and own command mendflow makes of it (``mendflow_runner.discovery``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_runner.asked_plugins import asked_plugins
from mendflow_runner.discovery import Collection, own_script, rules, unittest_rules
from mendflow_runner.django_suite import DjangoSuite, django_suite

from mendflow.contracts import BuildStatus
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import PYPROJECT, build, tree

SETTINGS = "SECRET_KEY = 'x'\n"
# django-debug-toolbar 8.0.0's tox
TOX = (
    "[testenv]\nsetenv =\n    DJANGO_SETTINGS_MODULE = tests.settings\n"
    "commands = python -b -m coverage run -m django test -v2 {posargs:tests}\n"
)
# pwned-passwords-django 5.2.0's runtests.py
RUNTESTS = """\
import os
import sys

import django
from django.conf import settings
from django.test.utils import get_runner

if __name__ == "__main__":
    sys.path.append("tests")
    os.environ["DJANGO_SETTINGS_MODULE"] = "test_settings"
    django.setup()
    failures = get_runner(settings)().run_tests(["tests"])
    sys.exit(bool(failures))
"""
NOX = 'import nox\n\n@nox.session\ndef tests(session):\n    session.run("python", "runtests.py")\n'


def test_django_s_test_command_names_its_labels_and_tox_s_settings(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/settings.py": SETTINGS})
    assert django_suite(root, [["python", "-m", "django", "test", "-v2", "tests"]]) == DjangoSuite(
        "tests.settings", ("tests",), ()
    )


def test_a_settings_option_of_the_command_comes_first(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/settings.py": SETTINGS, "tests/other.py": SETTINGS})
    found = django_suite(root, [["django-admin", "test", "--settings", "tests.other"]])
    assert found is not None and found.settings == "tests.other"


def test_manage_py_test_takes_the_settings_manage_py_sets(tmp_path: Path) -> None:
    manage = 'import os\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "site.settings")\n'
    root = tree(tmp_path, {"project/manage.py": manage, "project/site/settings.py": SETTINGS, "project/app/x.py": ""})
    found = django_suite(root, [["python", "project/manage.py", "test", "app"]])
    assert found == DjangoSuite("site.settings", (), ("project",))


def test_a_runner_script_is_read_for_its_settings_labels_and_path(tmp_path: Path) -> None:
    root = tree(tmp_path, {"runtests.py": RUNTESTS, "tests/test_settings.py": SETTINGS})
    assert django_suite(root, [["coverage", "run", "runtests.py"]]) == DjangoSuite(
        "test_settings", ("tests",), ("tests",)
    )


def test_settings_that_are_no_module_of_the_repository_s_are_not_taken(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/test_a.py": ""})
    assert django_suite(root, [["python", "-m", "django", "test", "tests"]]) is None


def test_a_script_that_runs_no_django_runner_is_not_read(tmp_path: Path) -> None:
    script = 'import os\nos.environ["DJANGO_SETTINGS_MODULE"] = "test_settings"\nimport pytest\npytest.main()\n'
    root = tree(tmp_path, {"runtests.py": script, "test_settings.py": SETTINGS})
    assert django_suite(root, [["python", "runtests.py"]]) is None


def test_the_rules_are_unittest_s_under_pytest_django_s_settings(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/__init__.py": "", "tests/settings.py": SETTINGS})
    base = unittest_rules(root, "tests")
    assert rules(root) == Collection((*base.options, "-o", "DJANGO_SETTINGS_MODULE=tests.settings"), ("tests",))


def test_the_rules_put_the_script_s_directories_on_pytest_s_path(tmp_path: Path) -> None:
    root = tree(tmp_path, {"noxfile.py": NOX, "runtests.py": RUNTESTS, "tests/test_settings.py": SETTINGS})
    found = rules(root)
    assert found is not None and found.options[-4:] == (
        "-o",
        "DJANGO_SETTINGS_MODULE=test_settings",
        "-o",
        "pythonpath=tests",
    )


def test_a_repository_configuring_pytest_keeps_its_rules(tmp_path: Path) -> None:
    files = {"tox.ini": TOX, "tests/settings.py": SETTINGS, "pytest.ini": "[pytest]\nDJANGO_SETTINGS_MODULE = x\n"}
    assert rules(tree(tmp_path, files)) is None


def test_a_django_suite_asks_for_pytest_django(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/settings.py": SETTINGS})
    assert asked_plugins(root) == {"pytest_django": "pytest-django"}


def test_django_s_runner_is_the_repository_s_own_command_with_tox_s_settings(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tox.ini": TOX, "tests/settings.py": SETTINGS})
    assert own_script(root) == ["-m", "django", "test", "-v2", "tests", "--settings=tests.settings"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python -W error -m unittest", ["-m", "unittest"]),
        ("python -Im unittest", ["-m", "unittest"]),
        ("python -b -m coverage run -m unittest", ["-m", "unittest"]),
    ],
)
def test_the_interpreter_s_options_are_passed_over(tmp_path: Path, command: str, expected: list[str]) -> None:
    root = tree(tmp_path, {"tox.ini": f"[testenv]\ncommands = {command}\n", "test_a.py": ""})
    assert own_script(root) == expected


DJANGO_SETTINGS = """\
SECRET_KEY = "x"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
USE_TZ = True
"""
DJANGO_TESTS = """\
from django.contrib.auth.models import User
from django.test import TestCase

from demo import add


class UsersTest(TestCase):
    def test_a_user_is_saved(self):
        User.objects.create(username=f"u{add(1, 2)}")
        self.assertEqual(User.objects.get().username, "u3")
"""


@pytest.mark.slow
def test_a_django_suite_is_built_with_its_settings_and_test_database(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    files = {
        "pyproject.toml": PYPROJECT.replace("dependencies = []", 'dependencies = ["django>=4.2"]').replace(
            '[tool.pytest.ini_options]\nmarkers = ["fast: quick tests"]\n', ""
        ),
        "tox.ini": TOX,
        "tests/__init__.py": "",
        "tests/settings.py": DJANGO_SETTINGS,
        "tests/test_demo.py": None,
        "tests/test_users.py": DJANGO_TESTS,
    }
    report = build(make_repo, tmp_path, uv_cache, **files)
    assert (report.status, report.tests.total, report.tests.passed) == (BuildStatus.PASSED, 1, 1)
    assert "DJANGO_SETTINGS_MODULE=tests.settings" in report.test_command


DJANGO_TEST_MODULE = "from django.test import TestCase\n"


def test_the_one_settings_module_of_tests_using_django_is_guessed(tmp_path: Path) -> None:
    # django-storages 1.14.6's sdist: tests/settings.py, no tox.ini, no pytest configuration
    files = {"tests/__init__.py": "", "tests/settings.py": SETTINGS, "tests/test_a.py": DJANGO_TEST_MODULE}
    root = tree(tmp_path, files)
    assert rules(root) == Collection((*unittest_rules(root).options, "-o", "DJANGO_SETTINGS_MODULE=tests.settings"))
    assert asked_plugins(root) == {"django": "django", "pytest_django": "pytest-django"}


def test_a_guessed_settings_module_outside_a_package_is_put_on_the_path(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/test_settings.py": SETTINGS, "tests/test_a.py": DJANGO_TEST_MODULE})
    found = rules(root)
    assert found is not None and found.options[-4:] == (
        *("-o", "DJANGO_SETTINGS_MODULE=test_settings"),
        *("-o", "pythonpath=tests"),
    )


def test_no_settings_are_guessed_for_tests_that_do_not_use_django(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tests/settings.py": SETTINGS, "tests/test_a.py": "def test_a():\n    pass\n"})
    assert rules(root) is None


def test_no_settings_are_guessed_among_several(tmp_path: Path) -> None:
    files = {"tests/settings.py": SETTINGS, "test_settings.py": SETTINGS, "tests/test_a.py": DJANGO_TEST_MODULE}
    assert rules(tree(tmp_path, files)) is None


def test_an_app_s_own_settings_module_is_no_project_settings(tmp_path: Path) -> None:
    # django-appconf 1.2.0: tests/settings.py holds an app's settings, tests/test_settings.py the project's
    files = {"tests/__init__.py": "", "tests/settings.py": "SIMPLE_VALUE = True\n", "tests/test_settings.py": SETTINGS}
    root = tree(tmp_path, {**files, "tests/test_a.py": DJANGO_TEST_MODULE})
    found = rules(root)
    assert found is not None and found.options[-2:] == ("-o", "DJANGO_SETTINGS_MODULE=tests.test_settings")


def test_the_settings_and_path_hatch_sets_serve_django_s_command(tmp_path: Path) -> None:
    # django-otp 1.7.5: `python -s -m django test django_otp`, its settings in test/test_project/
    hatch = '[tool.hatch.envs.default.env-vars]\nPYTHONPATH = "test"\nDJANGO_SETTINGS_MODULE = "project.settings"\n'
    root = tree(tmp_path, {"pyproject.toml": hatch, "test/project/settings.py": SETTINGS})
    found = django_suite(root, [["python", "-s", "-m", "django", "test", "django_otp"]])
    assert found == DjangoSuite("project.settings", (), ("test",))


def test_django_admin_found_by_the_shell_is_django_s_command(tmp_path: Path) -> None:
    # django-formtools 2.7's Makefile: python -m coverage run `which django-admin` test tests
    root = tree(tmp_path, {"tox.ini": TOX, "tests/settings.py": SETTINGS})
    found = django_suite(root, [["python", "-m", "coverage", "run", "`which", "django-admin`", "test", "tests"]])
    assert found == DjangoSuite("tests.settings", ("tests",), ())


def test_the_settings_of_the_app_s_own_tests_package_are_guessed_by_their_dotted_name(tmp_path: Path) -> None:
    # django-modeltranslation 0.20.6: modeltranslation/tests/settings.py, nothing naming it
    files = {"app/__init__.py": "", "app/tests/__init__.py": "", "app/tests/settings.py": SETTINGS}
    root = tree(tmp_path, {**files, "app/tests/test_a.py": DJANGO_TEST_MODULE})
    found = rules(root)
    assert found is not None and found.options[-2:] == ("-o", "DJANGO_SETTINGS_MODULE=app.tests.settings")


def test_django_itself_is_asked_for_where_nothing_declares_it(tmp_path: Path) -> None:
    # django-loginas 0.3.14's sdist declares no Django: its tox gives it by factor
    root = tree(tmp_path, {"loginas/tests/tests.py": "from django.test import TestCase\n"})
    assert asked_plugins(root) == {"django": "django"}
