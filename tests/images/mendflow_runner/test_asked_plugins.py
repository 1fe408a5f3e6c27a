"""The pytest plugins and test libraries a repository's tests ask for by a fixture or a mark only that plugin
defines, or by an import."""

from __future__ import annotations

from pathlib import Path

from mendflow_runner.asked_plugins import asked_plugins

from tests.images.mendflow_runner.helpers import tree

# aiohttp-cors 0.8.1 as published: its tests take aiohttp_client, and its sdist names no test requirement.
AIOHTTP_TEST = "async def test_roundtrip(aiohttp_client):\n    client = await aiohttp_client(None)\n"


def test_a_fixture_only_a_plugin_defines_asks_for_that_plugin(tmp_path: Path) -> None:
    tree(tmp_path, {"tests/test_main.py": AIOHTTP_TEST})
    assert asked_plugins(tmp_path) == {"pytest_aiohttp": "pytest-aiohttp"}


def test_a_fixture_a_fixture_takes_asks_too(tmp_path: Path) -> None:
    conftest = "import pytest\n\n\n@pytest.fixture\ndef patched(mocker):\n    return mocker.patch('os.getcwd')\n"
    tree(tmp_path, {"tests/conftest.py": conftest})
    assert asked_plugins(tmp_path) == {"pytest_mock": "pytest-mock"}


def test_an_asyncio_mark_asks_for_pytest_asyncio(tmp_path: Path) -> None:
    marked = "import pytest\n\n\n@pytest.mark.asyncio\nasync def test_it():\n    pass\n"
    tree(tmp_path, {"test_it.py": marked})
    assert asked_plugins(tmp_path) == {"pytest_asyncio": "pytest-asyncio"}


def test_a_fixture_the_repository_defines_itself_asks_for_nothing(tmp_path: Path) -> None:
    own = "import pytest\n\n\n@pytest.fixture\ndef mocker():\n    return None\n"
    tree(tmp_path, {"tests/test_a.py": "def test_a(mocker):\n    pass\n", "tests/fixtures.py": own})
    assert asked_plugins(tmp_path) == {}


def test_a_helpers_parameter_of_the_same_name_asks_for_nothing(tmp_path: Path) -> None:
    tree(tmp_path, {"tests/test_fs.py": "def check(fs, path):\n    return fs.exists(path)\n"})
    assert asked_plugins(tmp_path) == {}


def test_only_tests_ask(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {"pkg/client.py": "def send(aiohttp_client):\n    pass\n", "tests/test_x.py": "def test_x():\n    pass\n"},
    )
    assert asked_plugins(tmp_path) == {}


def test_a_test_library_the_tests_import_asks_for_its_distribution(tmp_path: Path) -> None:
    # canvasapi 3.6.0 as published: 73 test files import requests_mock, which nothing in its sdist names.
    tree(tmp_path, {"tests/test_account.py": "import unittest\n\nimport requests_mock\n"})
    assert asked_plugins(tmp_path) == {"requests_mock": "requests-mock"}


def test_a_name_imported_from_a_test_library_asks_for_it(tmp_path: Path) -> None:
    tree(tmp_path, {"tests/test_clock.py": "from freezegun.api import freeze_time\n"})
    assert asked_plugins(tmp_path) == {"freezegun": "freezegun"}


def test_a_module_of_the_repositorys_own_of_that_name_asks_for_nothing(tmp_path: Path) -> None:
    tree(tmp_path, {"tests/test_a.py": "import mock\n", "tests/mock/__init__.py": "def patch():\n    pass\n"})
    assert asked_plugins(tmp_path) == {}


def test_pkg_resources_imported_by_the_package_asks_for_the_setuptools_that_had_it(tmp_path: Path) -> None:
    # jupyter-contrib-core 0.4.2's application module: "No module named 'pkg_resources'" under setuptools 82
    tree(tmp_path, {"src/pkg/app.py": "import pkg_resources\n", "tests/test_app.py": "def test_a():\n    pass\n"})
    assert asked_plugins(tmp_path) == {"pkg_resources": "setuptools<82"}


def test_setuptools_own_pkg_resources_asks_for_nothing(tmp_path: Path) -> None:
    tree(tmp_path, {"pkg_resources/__init__.py": "", "setuptools/dist.py": "from pkg_resources import working_set\n"})
    assert asked_plugins(tmp_path) == {}


def test_a_relative_import_asks_for_nothing(tmp_path: Path) -> None:
    tree(tmp_path, {"tests/test_a.py": "from . import mock\nfrom .responses import ok\n"})
    assert asked_plugins(tmp_path) == {}


def test_a_mark_under_strict_markers_asks_for_its_plugin(tmp_path: Path) -> None:
    # zict 3.0.0: `@pytest.mark.repeat(5)` with `--strict-markers`, pytest-repeat in no requirement it ships
    marked = "import pytest\n\n\n@pytest.mark.repeat(5)\ndef test_it():\n    pass\n"
    tree(tmp_path, {"zict/tests/test_it.py": marked})
    assert asked_plugins(tmp_path) == {"pytest_repeat": "pytest-repeat"}
