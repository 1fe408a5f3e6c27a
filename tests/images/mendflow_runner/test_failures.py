"""Each failing test's details in the report, and runs of only the selected node ids: real repos, real pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pygit2
import pytest

from mendflow.contracts import BuildReport, BuildStatus, FailReason, FailureKind, TestFailure
from tests.fixtures.repos import commit_files
from tests.images.mendflow_runner.helpers import PYPROJECT, RUNNER_DIR, demo_files, run_runner, snapshot

pytestmark = pytest.mark.slow

NO_MARKERS = PYPROJECT.replace('markers = ["fast: quick tests"]\n', "")

BODY_TESTS = """\
from demo import add


def test_add_is_wrong() -> None:
    total = add(1, 2)
    assert total == 4


def test_add_with_three_arguments() -> None:
    add(1, 2, 3)  # type: ignore[call-arg]


def test_add_passes() -> None:
    assert add(2, 2) == 4
"""

BROKEN_IMPORT = """\
from demo import nope


def test_never_runs() -> None:
    assert nope
"""

FIXTURE_ERROR = """\
import pytest


@pytest.fixture
def database() -> int:
    raise RuntimeError("no database here")


def test_uses_the_database(database: int) -> None:
    assert database
"""

FIVE_TESTS = "".join(f"def test_{i}() -> None:\n    assert {i} == {i}\n\n\n" for i in range(4)) + (
    "def test_4() -> None:\n    assert 4 == 5\n"
)


def _repo(path: Path, files: dict[str, str | bytes | None]) -> Path:
    pygit2.init_repository(str(path), initial_head="main")
    commit_files(path, files, "initial")
    return path


def _run(tmp: Path, uv_cache: Path, files: Mapping[str, str | None], *args: str) -> BuildReport:
    repo = _repo(tmp / "repo", demo_files(**{"pyproject.toml": NO_MARKERS, **files}))
    rc, data = run_runner(snapshot(repo, tmp / "src.tar.gz"), tmp / "out", uv_cache, *args)
    assert rc == 0
    return BuildReport.model_validate(data)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory, uv_cache: Path) -> BuildReport:
    """One build of a repo whose tests break every way: an import, an assertion, a call, a fixture."""
    files = {
        "tests/test_body.py": BODY_TESTS,
        "tests/test_broken.py": BROKEN_IMPORT,
        "tests/test_fixture.py": FIXTURE_ERROR,
    }
    return _run(tmp_path_factory.mktemp("broken"), uv_cache, files)


def _failure(report: BuildReport, node_id: str) -> TestFailure:
    return next(f for f in report.failures if f.node_id == node_id)


def test_a_module_that_fails_to_import_is_a_failed_test_named_by_its_path(broken: BuildReport) -> None:
    assert "tests/test_broken.py" in broken.failed_tests
    assert (broken.status, broken.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)


def test_an_import_error_is_an_error_with_its_exception_message_and_line(broken: BuildReport) -> None:
    f = _failure(broken, "tests/test_broken.py")
    assert (f.kind, f.exception, f.location) == (FailureKind.ERROR, "ImportError", "tests/test_broken.py:1")
    assert f.message.startswith("cannot import name 'nope' from 'demo'")


def test_a_collection_error_does_not_stop_the_other_tests(broken: BuildReport) -> None:
    assert broken.tests.passed == 3  # test_add_passes and the two of tests/test_demo.py ran


def test_an_assertion_is_failed_with_its_first_line_and_the_assert_line(broken: BuildReport) -> None:
    f = _failure(broken, "tests/test_body.py::test_add_is_wrong")
    assert (f.kind, f.exception, f.message) == (FailureKind.FAILED, "AssertionError", "assert 3 == 4")
    assert f.location == "tests/test_body.py:6"
    assert "assert total == 4" in f.traceback


def test_a_type_error_in_the_body_is_failed_at_the_call(broken: BuildReport) -> None:
    f = _failure(broken, "tests/test_body.py::test_add_with_three_arguments")
    assert (f.kind, f.exception, f.location) == (FailureKind.FAILED, "TypeError", "tests/test_body.py:10")
    assert "takes 2 positional arguments but 3 were given" in f.message


def test_a_fixture_that_raises_is_an_error_of_the_test_at_the_fixture(broken: BuildReport) -> None:
    f = _failure(broken, "tests/test_fixture.py::test_uses_the_database")
    assert (f.kind, f.exception, f.message) == (FailureKind.ERROR, "RuntimeError", "no database here")
    assert f.location == "tests/test_fixture.py:6"


def test_failures_follow_failed_tests_in_order(broken: BuildReport) -> None:
    assert [f.node_id for f in broken.failures] == broken.failed_tests
    assert len(broken.failed_tests) == 4


def test_a_traceback_names_paths_relative_to_the_repository(broken: BuildReport) -> None:
    f = _failure(broken, "tests/test_broken.py")
    assert "tests/test_broken.py" in f.traceback and "/src/tests/" not in f.traceback


def test_a_conftest_that_fails_to_import_is_a_collection_error(tmp_path: Path, uv_cache: Path) -> None:
    files = {"tests/conftest.py": "from demo import gone\n"}
    report = _run(tmp_path, uv_cache, files)
    assert report.failed_tests == ["tests/conftest.py"]
    f = report.failures[0]
    assert (f.kind, f.exception, f.location) == (FailureKind.ERROR, "ImportError", "tests/conftest.py:1")


def test_a_selection_runs_only_those_tests(tmp_path: Path, uv_cache: Path) -> None:
    chosen = ["tests/test_five.py::test_1", "tests/test_five.py::test_4"]
    report = _run(tmp_path, uv_cache, {"tests/test_five.py": FIVE_TESTS}, "--select", json.dumps(chosen))
    assert (report.tests.total, report.tests.passed, report.failed_tests) == (2, 1, ["tests/test_five.py::test_4"])
    assert report.selected == chosen and report.test_command[-2:] == chosen


def test_a_selection_from_the_environment_skips_the_marker(tmp_path: Path, uv_cache: Path) -> None:
    repo = _repo(tmp_path / "repo", demo_files(**{"tests/test_five.py": FIVE_TESTS}))  # declares 'fast'
    env = {"MENDFLOW_JOB_SELECT": json.dumps(["tests/test_five.py::test_2"])}
    rc, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache, **env)
    report = BuildReport.model_validate(data)
    assert rc == 0
    assert (report.status, report.tests.total, "-m" in report.test_command) == (BuildStatus.PASSED, 1, False)


def test_a_selection_still_lints(tmp_path: Path, uv_cache: Path) -> None:
    files = {
        "pyproject.toml": PYPROJECT + "\n[tool.ruff]\n",
        "tests/test_five.py": FIVE_TESTS,
        "demo/extra.py": "import os\n",
    }
    report = _run(tmp_path, uv_cache, files, "--select", json.dumps(["tests/test_five.py::test_0"]))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)


@pytest.mark.parametrize("node", ["--collect-only", "@args.txt", "/etc/passwd", "../outside.py::test_x"])
def test_a_selection_that_is_not_a_node_id_of_the_repo_is_bad_input(node: str, tmp_path: Path, uv_cache: Path) -> None:
    report = _run(tmp_path, uv_cache, {}, "--select", json.dumps([node]))
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert report.selected == [node] and report.tests.total == 0


def test_a_conftest_pytest_refuses_is_named_as_what_stopped_it(tmp_path: Path, uv_cache: Path) -> None:
    # A hook implementation with an argument its spec lacks: pluggy refuses the conftest before collection.
    files = {"tests/conftest.py": "def pytest_collection_modifyitems(gone):\n    pass\n"}
    report = _run(tmp_path, uv_cache, files)
    assert report.status is BuildStatus.FAILED and report.failed_tests == []
    reason = report.error_reason or ""
    assert "PluginValidationError" in reason and "tests/conftest.py" in reason and "{'gone'}" in reason
    assert "/src/" not in reason


def test_a_hook_that_crashes_pytest_is_named_as_what_stopped_it(tmp_path: Path, uv_cache: Path) -> None:
    # python-dateutil's conftest, with pytest-cov's marker unknown under filterwarnings = error: an INTERNALERROR.
    hook = "def pytest_collection_modifyitems(items):\n    raise RuntimeError('the conftest broke')\n"
    report = _run(tmp_path, uv_cache, {"tests/conftest.py": hook})
    assert report.status is BuildStatus.FAILED
    assert report.error_reason == "pytest exited 3: RuntimeError: the conftest broke"


def test_a_plugin_pytest_refuses_while_configuring_is_named_as_what_stopped_it(tmp_path: Path, uv_cache: Path) -> None:
    # pytest-docker 3.2.6's venv: a plugin registered as pytest configures, with a hook argument pytest 9 lacks; the
    # INTERNALERROR traceback goes to stderr, and its message runs over three lines.
    stale = "class Stale:\n    def pytest_collect_file(self, gone, parent):\n        pass\n\n\n"
    hook = stale + "def pytest_configure(config):\n    config.pluginmanager.register(Stale())\n"
    report = _run(tmp_path, uv_cache, {"tests/conftest.py": hook})
    reason = report.error_reason or ""
    assert reason.startswith("pytest exited 3: pluggy._manager.PluginValidationError: Plugin '")
    assert "for hook 'pytest_collect_file' hookimpl definition: pytest_collect_file(gone, parent) Argument(s)" in reason


# python-interface 1.6.1's test extra installs pytest-pep8, whose hook pytest 9 refuses as it loads the plugin.
REFUSED_PLUGIN = '[project.entry-points.pytest11]\nstale = "demo.stale"\n'


def test_a_plugin_pytest_refuses_to_load_is_named_as_what_stopped_it(tmp_path: Path, uv_cache: Path) -> None:
    pyproject = PYPROJECT.replace("[build-system]", REFUSED_PLUGIN + "\n[build-system]")
    files = {"pyproject.toml": pyproject, "demo/stale.py": "def pytest_collect_file(gone, parent):\n    pass\n"}
    report = _run(tmp_path, uv_cache, files)
    assert report.status is BuildStatus.FAILED and report.failed_tests == []
    reason = report.error_reason or ""
    assert reason.startswith('pytest exited 3: Error while loading plugin "pytest11". pluggy')
    assert "Plugin 'stale' for hook 'pytest_collect_file'" in reason and "{'gone'}" in reason


PLUGIN_ADDOPTS = '[tool.pytest.ini_options]\naddopts = "--speedy-mode=on"\n'


def test_a_usage_error_is_named_by_pytests_error_line(tmp_path: Path, uv_cache: Path) -> None:
    # tqdm's addopts named pytest-asyncio's option, only in its tox deps (now installed as a guess): an option of a
    # plugin no one knows stops pytest at once.
    files = {"pyproject.toml": NO_MARKERS.replace("[tool.pytest.ini_options]\n", PLUGIN_ADDOPTS)}
    report = _run(tmp_path, uv_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, [])
    assert report.error_reason == "pytest exited 4: error: unrecognized arguments: --speedy-mode=on"


def test_a_package_importing_pkg_resources_gets_a_setuptools_that_has_it(tmp_path: Path, uv_cache: Path) -> None:
    # jupyter-contrib-core 0.4.2: its application imports pkg_resources, which setuptools 82 dropped
    module = "import pkg_resources\n\n\ndef version():\n    return pkg_resources.parse_version('1.0')\n"
    test = "from demo.old import version\n\n\ndef test_version():\n    assert str(version()) == '1.0'\n"
    report = _run(tmp_path, uv_cache, {"demo/old.py": module, "tests/test_old.py": test})
    assert report.status is BuildStatus.PASSED, report.error_reason or report.failures


def test_a_plugins_option_in_addopts_installs_the_plugin(tmp_path: Path, uv_cache: Path) -> None:
    # tqdm: `addopts = "--asyncio-mode=strict"`, pytest-asyncio only in its tox deps
    addopts = '[tool.pytest.ini_options]\naddopts = "--asyncio-mode=strict"\n'
    report = _run(tmp_path, uv_cache, {"pyproject.toml": NO_MARKERS.replace("[tool.pytest.ini_options]\n", addopts)})
    assert report.status is BuildStatus.PASSED


# Passes its first run and fails every later one: the marker is a file beside it, which the first run leaves.
FLAKY = """\
from pathlib import Path

MARKER = Path(__file__).with_name("ran-once")


def test_flaky():
    first = not MARKER.exists()
    MARKER.write_text("x")
    assert first, "ran before"
"""


def test_runs_stop_at_the_first_run_that_fails_and_report_it(tmp_path: Path, uv_cache: Path) -> None:
    node = "tests/test_flaky.py::test_flaky"
    report = _run(tmp_path, uv_cache, {"tests/test_flaky.py": FLAKY}, "--select", json.dumps([node]), "--runs", "3")
    assert (report.status, report.fail_reason, report.runs, report.failed_tests) == (
        BuildStatus.FAILED,
        FailReason.TESTS,
        2,
        [node],
    )
    assert "ran before" in report.failures[0].message and report.coverage is not None


def test_runs_from_the_environment_repeat_a_passing_selection(tmp_path: Path, uv_cache: Path) -> None:
    repo = _repo(tmp_path / "repo", demo_files(**{"tests/test_five.py": FIVE_TESTS}))
    env = {"MENDFLOW_JOB_SELECT": json.dumps(["tests/test_five.py::test_2"]), "MENDFLOW_JOB_RUNS": "3"}
    rc, data = run_runner(snapshot(repo, tmp_path / "src.tar.gz"), tmp_path / "out", uv_cache, **env)
    report = BuildReport.model_validate(data)
    assert (rc, report.status, report.runs, report.tests.total) == (0, BuildStatus.PASSED, 3, 1)
    assert "reruns" in report.durations


def test_a_number_of_runs_out_of_range_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(RUNNER_DIR), "MENDFLOW_JOB_RUNS": "0"}
    argv = [sys.executable, "-m", "mendflow_runner", "--source", "x.tar.gz", "--out", str(tmp_path)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    said = "python -m mendflow_runner: error: argument --runs: --runs wants a whole number from 1 to 20, got '0'"
    assert (done.returncode, errors) == (2, [said])
