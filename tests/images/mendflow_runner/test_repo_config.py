"""What the runner reads from a repository's own configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_runner import repo_config, testing
from mendflow_runner.repo_config import coverage_chooses_files, pytest_addopts
from mendflow_runner.testing import NOT_CODE_OMIT, TEST_OMIT, coverage_argv, without_cov


def test_cov_options_are_taken_out_with_their_values() -> None:
    args = ["--cov", "src", "--cov-report=xml", "--cov-report", "term", "--no-cov-on-fail", "-q", "--cov"]
    assert without_cov(args) == ["-q"]


def test_other_options_and_test_paths_stay() -> None:
    assert without_cov(["-x", "--cov-branch", "tests", "-p", "xdist"]) == ["-x", "tests", "-p", "xdist"]


@pytest.mark.parametrize(
    "args",
    [["-n", "auto", "-x"], ["-n4", "-x"], ["--numprocesses=auto", "-x"], ["-x", "--dist", "loadfile", "-nauto"]],
)
def test_xdists_distribution_options_are_dropped(args: list[str]) -> None:
    assert testing.without_distribution(args) == ["-x"]


def test_a_required_pytest_cov_is_no_longer_required_where_the_runner_blocks_it(tmp_path: Path) -> None:
    # pycountry 26.2.16: pytest stopped at "Missing required plugins: pytest-cov>=4.0.0", no test ran
    (tmp_path / "pytest.ini").write_text("[pytest]\nrequired_plugins = pytest-cov>=4.0.0 pytest-timeout\n")
    assert testing.addopts_without_cov(tmp_path) == ["-p", "no:cov", "-o", "required_plugins=pytest-timeout"]


def test_required_plugins_are_read_in_either_form(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nrequired_plugins = ["pytest-cov>=4"]\n')
    assert repo_config.pytest_required_plugins(tmp_path) == ["pytest-cov>=4"]
    (tmp_path / "pytest.ini").write_text("[pytest]\nrequired_plugins = pytest-mock pytest-cov\n")
    assert repo_config.pytest_required_plugins(tmp_path) == ["pytest-mock", "pytest-cov"]


def test_pytest_ini_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --cov=pkg -x\n")
    assert pytest_addopts(tmp_path) == ["--cov=pkg", "-x"]


def test_pyproject_list_form_and_setup_cfg(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -v\n")
    assert pytest_addopts(tmp_path) == ["-v"]
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = ["--cov=pkg", "-q"]\n')
    assert pytest_addopts(tmp_path) == ["--cov=pkg", "-q"]


def test_pytest_9s_own_table_in_pyproject_is_read(tmp_path: Path) -> None:
    # pydyf 0.13.0: [tool.pytest] with native values; its pytest-cov options were left in and stopped pytest
    (tmp_path / "pyproject.toml").write_text("[tool.pytest]\naddopts = ['--cov', '--cov-fail-under=100']\n")
    assert pytest_addopts(tmp_path) == ["--cov", "--cov-fail-under=100"]


def test_pytest_toml_wins_over_every_other_file(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
    (tmp_path / "pytest.toml").write_text("[pytest]\naddopts = ['--cov=pkg', '-x']\n")
    assert (pytest_addopts(tmp_path), repo_config.configures_pytest(tmp_path)) == (["--cov=pkg", "-x"], True)


def test_a_plugins_option_in_the_pytest_configuration_names_the_plugin(tmp_path: Path) -> None:
    # aiosignal 1.3.2 as published: setup.cfg's [tool:pytest] sets asyncio_mode; nothing declares pytest-asyncio.
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\nasyncio_mode = strict\ntimeout = 30\ntestpaths = tests/\n")
    found = repo_config.configured_pytest_plugins(tmp_path)
    assert found == {"pytest_asyncio": "pytest-asyncio", "pytest_timeout": "pytest-timeout"}


def test_pytest_django_s_settings_in_any_case_name_it(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nDJANGO_SETTINGS_MODULE = tests.settings\n")
    assert repo_config.configured_pytest_plugins(tmp_path) == {"pytest_django": "pytest-django"}


def test_a_plugins_option_in_addopts_names_the_plugin(tmp_path: Path) -> None:
    # django-extensions 4.1's pyproject: `addopts = "--doctest-modules --nomigrations --cov=django_extensions"`
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q --nomigrations"\n')
    assert repo_config.configured_pytest_plugins(tmp_path) == {"pytest_django": "pytest-django"}


def test_a_rerun_option_in_addopts_names_pytest_rerunfailures(tmp_path: Path) -> None:
    # ssh-python 1.2.0.post1 as published: setup.cfg's addopts has --reruns=5; nothing it ships declares the plugin.
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -v --durations=10 --reruns=5\n")
    assert repo_config.configured_pytest_plugins(tmp_path) == {"pytest_rerunfailures": "pytest-rerunfailures"}


def test_a_rerun_ini_option_names_pytest_rerunfailures(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nreruns = 2\nreruns_delay = 1\n")
    assert repo_config.configured_pytest_plugins(tmp_path) == {"pytest_rerunfailures": "pytest-rerunfailures"}


def test_only_the_configuration_pytest_reads_names_plugins(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\nasyncio_mode = strict\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
    assert repo_config.configured_pytest_plugins(tmp_path) == {}


def test_coverage_source_in_pyproject_chooses_the_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.coverage.run]\nsource = ["pkg"]\n')
    (tmp_path / "pkg").mkdir()
    assert coverage_chooses_files(tmp_path)
    assert not any(a.startswith("--source") for a in coverage_argv("python", tmp_path))


@pytest.mark.parametrize(
    ("source", "chooses"),
    [("orderly_set.py", False), ("orderly_set.py, gone", False), ("orderly_set", True), ("gone\n orderly_set", True)],
)
def test_a_coverage_source_chooses_files_only_where_it_names_something_in_the_tree(
    tmp_path: Path, source: str, chooses: bool
) -> None:
    # orderly-set 5.5.0: `source = orderly_set.py` names the module its package replaced; coverage.py measured
    # nothing, and the report had no coverage
    (tmp_path / ".coveragerc").write_text(f"[run]\nsource = {source}\n")
    (tmp_path / "orderly_set").mkdir()
    assert coverage_chooses_files(tmp_path) is chooses


def test_a_coverage_source_may_name_a_module_under_src(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[coverage:run]\nsource = pkg.sub\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "sub.py").write_text("")
    assert coverage_chooses_files(tmp_path)


@pytest.mark.parametrize(
    ("addopts", "measured"),
    [
        ("--doctest-modules --cov portalocker --cov-report html", "portalocker"),
        ("--cov=pkg --cov=tools -x", "pkg,tools"),
        ("--cov -x --cov=pkg", "pkg"),
        ("-x --cov", "."),  # a bare --cov measures the configured source, which the tree has not: the tree then
    ],
)
def test_what_pytest_covs_cov_options_name_is_measured(tmp_path: Path, addopts: str, measured: str) -> None:
    # portalocker 2.10: its .coveragerc says source = src, a directory it does not have; its pytest run says
    (tmp_path / ".coveragerc").write_text("[run]\nsource = src\n")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
    sources = [a for a in coverage_argv("python", tmp_path) if a.startswith("--source")]
    assert sources == [f"--source={measured}"]


def test_a_coveragerc_hides_pyprojects_coverage_settings(tmp_path: Path) -> None:
    # coverage.py reads an existing .coveragerc and nothing else
    (tmp_path / "pyproject.toml").write_text('[tool.coverage.run]\nsource = ["pkg"]\n')
    (tmp_path / ".coveragerc").write_text("[run]\nbranch = true\n")
    assert not coverage_chooses_files(tmp_path)


def test_a_setup_cfg_coverage_section_is_read_with_its_prefix(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[coverage:run]\ninclude = pkg/*\n")
    assert coverage_chooses_files(tmp_path)


def test_config_without_source_measures_the_repos_packages_under_src_too(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.coverage.run]\nparallel = true\n")
    (tmp_path / "src").mkdir()
    assert coverage_argv("python", tmp_path)[-1] == "--source=.,src"


def test_an_in_tree_build_backend_is_not_code_under_test(tmp_path: Path) -> None:
    """charset-normalizer's ``backend-path = ["_build_hook"]``: build tooling, as setup.py is."""
    build_system = '[build-system]\nbuild-backend = "backend"\nbackend-path = ["_build_hook"]\n'
    (tmp_path / "pyproject.toml").write_text(build_system)
    omit = coverage_argv("python", tmp_path)[-1].removeprefix("--omit=").split(",")
    assert "_build_hook/*" in omit and "setup.py" in omit


@pytest.mark.parametrize("path", [".", "src"])
def test_a_backend_that_builds_itself_from_the_root_or_src_stays_measured(tmp_path: Path, path: str) -> None:
    """flit-core's ``backend-path = ["."]``, hatchling's ``["src"]``: there the backend is the project's code."""
    (tmp_path / "pyproject.toml").write_text(f'[build-system]\nbuild-backend = "b"\nbackend-path = ["{path}"]\n')
    assert coverage_argv("python", tmp_path)[-1] == f"--omit={TEST_OMIT},{NOT_CODE_OMIT}"


def test_a_pre_commit_ruff_hook_configures_ruff(tmp_path: Path) -> None:
    hook = "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.4.4\n    hooks:\n"
    (tmp_path / ".pre-commit-config.yaml").write_text(hook + "      - id: ruff\n")
    assert repo_config.configures_ruff(tmp_path) and not repo_config.has_ruff_config(tmp_path)


RUFF_HOOKS = "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.4.4\n    hooks:\n"
BLACK_HOOK = "  - repo: https://github.com/psf/black-pre-commit-mirror\n    rev: 24.1.0\n"
BLACK_HOOK += "    hooks:\n      - id: black\n"


def test_a_pre_commit_ruff_format_hook_formats_with_ruff_without_a_ruff_config(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(RUFF_HOOKS + "      - id: ruff\n      - id: ruff-format\n")
    assert repo_config.formats_with_ruff(tmp_path)


def test_a_ruff_config_with_black_in_pre_commit_is_not_held_to_ruffs_format(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.lint]\nselect = ['E']\n")
    (tmp_path / ".pre-commit-config.yaml").write_text(RUFF_HOOKS + "      - id: ruff-check\n" + BLACK_HOOK)
    assert not repo_config.formats_with_ruff(tmp_path)


def test_a_ruff_config_with_tool_black_is_not_held_to_ruffs_format(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n\n[tool.black]\nline-length = 100\n")
    assert not repo_config.formats_with_ruff(tmp_path)


def test_a_ruff_config_alone_formats_with_ruff(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert repo_config.formats_with_ruff(tmp_path)


def test_no_ruff_anywhere_is_not_held_to_ruffs_format(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert not repo_config.formats_with_ruff(tmp_path)


UV_SOURCES = """\
[tool.uv.sources]
langchain-core = { path = "../../core", editable = true }
here = { path = "libs/here" }
rich = { git = "https://github.com/Textualize/rich" }
marked = [{ path = "../gone", marker = "sys_platform == 'linux'" }, { index = "pytorch" }]
"""


def test_uv_sources_outside_the_tree_are_its_path_sources_the_tree_lacks(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(UV_SOURCES)
    (tmp_path / "libs/here").mkdir(parents=True)
    assert repo_config.uv_sources_outside(tmp_path) == {"langchain-core": "../../core", "marked": "../gone"}


SETENV_TOX = """\
[testenv]
setenv =
    TZ=EST5EDT,M3.2.0,M11.1.0
    DATA = {toxinidir}/data
    ZONE = {env:ZONE:utc}
    PATH = /nowhere
    SCRATCH = {envtmpdir}/x
    py38: OLD = 1
commands = pytest
"""


def test_tox_setenv_is_the_tests_environment(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text(SETENV_TOX)
    assert repo_config.test_setenv(tmp_path) == {
        "TZ": "EST5EDT,M3.2.0,M11.1.0",
        "DATA": f"{tmp_path}/data",
        "ZONE": "utc",
    }


def test_hatch_s_and_make_s_test_environments_are_the_tests_environment_under_tox_s(tmp_path: Path) -> None:
    # django-otp 1.7.5's hatch env-vars
    hatch = '[tool.hatch.envs.default.env-vars]\nPYTHONPATH = "test"\nZONE = "hatch"\nROOT = "{root}"\n'
    (tmp_path / "pyproject.toml").write_text(hatch)
    (tmp_path / "Makefile").write_text("export LEVEL = make\nexport ZONE = make\n")
    (tmp_path / "tox.ini").write_text("[testenv]\nsetenv =\n    LEVEL = tox\n")
    assert repo_config.test_setenv(tmp_path) == {"LEVEL": "tox", "ZONE": "hatch", "PYTHONPATH": "test"}
