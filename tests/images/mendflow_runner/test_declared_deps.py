"""What the runner installs from what a repository declares, and how it tells a failure's kind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from mendflow_runner import deps, interpreter, lockfiles, poetry, precommit
from mendflow_runner.deps import DependencyError, Installer
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.repo_config import (
    RepoConfigError,
    build_requires,
    coverage_plugins,
    for_tests,
    hatch_deps,
    nox_deps,
    pdm_dev_deps,
    pipfile_deps,
    pixi_deps,
    requirement_files,
    setuptools_tests_require,
    tox_deps,
    tox_env_holds,
    uv_default_groups,
    uv_group_pythons,
    wanted_extras,
    wanted_groups,
)

PY311 = (3, 11)


@pytest.mark.parametrize(
    "name", ["test", "tests", "Testing", "dev", "typing", "lint", "test-extras", "unit_test", "ci"]
)
def test_groups_for_tests_and_development_are_installed(name: str) -> None:
    assert for_tests(name)


@pytest.mark.parametrize(
    "name", ["docs", "doc", "docstest", "docs-tests", "release", "publish", "build", "benchmark", "all"]
)
def test_docs_release_and_publish_groups_are_not(name: str) -> None:
    assert not for_tests(name)


def test_groups_and_extras_are_read_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\ntests = ["a"]\ndocs = ["b"]\n'
        '[dependency-groups]\ndev = ["c"]\nrelease = ["d"]\n'
    )
    assert (wanted_extras(tmp_path, PY311), wanted_groups(tmp_path, PY311)) == (["tests"], ["dev"])


PARVER_GROUPS = """\
[dependency-groups]
test = ["pytest"]
docs = ["sphinx"]
docstest = [{ include-group = "docs" }, "doc8"]
[tool.uv.dependency-groups]
docs = { requires-python = ">=3.12" }
"""


def test_uvs_python_for_a_group_is_read_through_the_groups_that_include_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PARVER_GROUPS)
    assert [uv_group_pythons(tmp_path, g) for g in ("test", "docstest")] == [[], [">=3.12"]]


def test_a_group_uv_installs_for_a_newer_python_only_is_left_out(tmp_path: Path, uv_cache: Path) -> None:
    # parver 1.0.1: `uv sync --frozen --group=docstest` refused Python 3.11 (docs' requires-python >=3.12)
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.11"\n[build-system]\nrequires = ["setuptools"]\n'
        'build-backend = "setuptools.build_meta"\n'
        + PARVER_GROUPS.replace('"pytest"', '"six"').replace("docstest = ", "typing = ")
    )
    (tmp_path / "src/x.py").write_text("")
    env = {**os.environ, "UV_CACHE_DIR": str(uv_cache)}
    subprocess.run(["uv", "lock", "-q"], cwd=tmp_path / "src", env=env, check=True)
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] and not list(site.glob("sphinx-*.dist-info"))


# litestar-htmx 0.5.0: its tests import litestar, which only [tool.uv] dev-dependencies lists; synced with its lock,
# installed beside the project without one (an sdist ships its pyproject.toml, seldom its uv.lock)
@pytest.mark.parametrize("locked", [True, False])
def test_uvs_dev_dependencies_of_before_dependency_groups_are_installed(
    tmp_path: Path, uv_cache: Path, locked: bool
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n[build-system]\nrequires = ["setuptools"]\n'
        'build-backend = "setuptools.build_meta"\n[tool.uv]\ndev-dependencies = ["six"]\n'
    )
    (tmp_path / "src/x.py").write_text("")
    if locked:
        env = {**os.environ, "UV_CACHE_DIR": str(uv_cache)}
        subprocess.run(["uv", "lock", "-q"], cwd=tmp_path / "src", env=env, check=True)
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")]


def test_test_requirement_files_are_installed_and_docs_ones_are_not(tmp_path: Path) -> None:
    names = ["requirements.txt", "requirements-test.txt", "requirements-docs.txt", "requirements_dev.in"]
    for name in [*names, "requirements_dev.txt", "test-requirements.txt"]:
        (tmp_path / name).write_text("")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "tests.txt").write_text("")
    (tmp_path / "requirements" / "docs.txt").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "requirements.txt").write_text("")
    found = [p.relative_to(tmp_path).as_posix() for p in requirement_files(tmp_path)]
    assert found == [
        "requirements/tests.txt",
        "requirements-test.txt",
        "requirements.txt",
        "requirements_dev.txt",
        "test-requirements.txt",
        "tests/requirements.txt",
    ]


def test_extras_tox_installs_for_the_tests_are_installed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\ndiagrams = ["a"]\ndocs = ["b"]\nyaml = ["c"]\n'
    )
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps = pytest\nextras = diagrams, undeclared\n    py38: yaml\n")
    assert wanted_extras(tmp_path, PY311) == ["diagrams"]


def test_groups_tox_installs_for_the_tests_are_installed(tmp_path: Path) -> None:
    # lazy-object-proxy 1.13.0: its tests use pytest-benchmark, from the `benchmark` group tox 4.22 installs
    (tmp_path / "pyproject.toml").write_text('[dependency-groups]\nbenchmark = ["a"]\ndocs = ["b"]\ntest = ["c"]\n')
    (tmp_path / "tox.ini").write_text("[testenv]\ndependency_groups =\n    test\n    benchmark\n")
    assert wanted_groups(tmp_path, PY311) == ["benchmark", "test"]


# zope.interface 7.1.1's setup.py: its extras a dict literal, a value by name.
SETUP_PY = """\
from setuptools import setup
tests_require = ['coverage[toml]', 'zope.testing']
setup(name='x', extras_require={'docs': ['Sphinx'], 'test': tests_require}, tests_require=['hypothesis<7', '-e', 'y'])
"""


def test_extras_setup_pys_extras_require_names_are_read_without_running_it(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(SETUP_PY)
    assert wanted_extras(tmp_path, PY311) == ["test"]


def test_extras_a_conditional_key_is_its_extras_name(tmp_path: Path) -> None:
    # jupyter-contrib-core 0.4.2: `'testing_utils:python_version == "2.7"'`, which uv refused as an extra's name
    text = "setup(extras_require={'testing': ['nose'], 'testing:python_version == \"2.7\"': ['mock']})\n"
    (tmp_path / "setup.py").write_text(text)
    assert wanted_extras(tmp_path, PY311) == ["testing"]


def test_extras_an_sdists_pkg_info_provides_are_read(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(**computed())\n")
    (tmp_path / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: x\nProvides-Extra: testing\n\nProvides-Extra: body\n"
    )
    assert wanted_extras(tmp_path, PY311) == ["testing"]


def test_build_requires_are_the_frontends_default_when_pyproject_names_none(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    assert build_requires(tmp_path) == ["setuptools>=40.8.0"]


def test_build_requires_are_the_build_systems(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["hatchling>=1.25", "hatch-vcs"]\n')
    assert build_requires(tmp_path) == ["hatchling>=1.25", "hatch-vcs"]


def test_setup_pys_tests_require_is_a_declared_test_dependency(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(SETUP_PY)
    assert setuptools_tests_require(tmp_path) == ["hypothesis<7"]


def test_setup_cfgs_tests_require_is_a_declared_test_dependency(tmp_path: Path) -> None:
    # makefun 1.16.0 declares pytest-asyncio in [options] tests_require alone
    listed = "\n\tpytest\n\tpytest-asyncio\n\tsix;python_version<'3.6'\n"
    (tmp_path / "setup.cfg").write_text(f"[options]\ntests_require = {listed}")
    assert setuptools_tests_require(tmp_path) == ["pytest", "pytest-asyncio", "six;python_version<'3.6'"]


def test_a_setup_py_that_does_not_parse_declares_nothing(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("setup(extras_require={'test': [\n")
    assert (wanted_extras(tmp_path, PY311), setuptools_tests_require(tmp_path)) == ([], [])


EXTRAS_PROJECT = '[project]\nname = "x"\n[project.optional-dependencies]\nmsgspec = ["a"]\nyaml = ["b"]\nbson = ["c"]\n'


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        ("pdm sync -G :all,test", ["bson", "msgspec", "yaml"]),  # cattrs 24.1
        ("pdm sync -G yaml -G bson", ["bson", "yaml"]),
        ("poetry install --extras 'yaml msgspec'", ["msgspec", "yaml"]),
        ("poetry install --all-extras", ["bson", "msgspec", "yaml"]),
        ("uv sync --extra=bson", ["bson"]),
        ("pip install -e .[yaml,bson]", ["bson", "yaml"]),
        ("pip install -e .", []),
    ],
)
def test_extras_the_test_environments_install_command_names_are_installed(
    tmp_path: Path, command: str, wanted: list[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / "tox.ini").write_text(f"[testenv]\ncommands_pre =\n    {command}\ncommands = pytest tests\n")
    assert wanted_extras(tmp_path, PY311) == wanted


@pytest.mark.parametrize(
    "tasks",
    [
        '[tool.poe.tasks]\ntest = "uv run --extra yaml pytest --cov"\n',  # python-ulid 4.1.0
        '[tool.poe.tasks.test]\ncmd = "uv run --extra yaml pytest"\nhelp = "run the tests"\n',
        '[tool.poe.tasks]\nunit = "uv run --extra yaml pytest"\ntest = ["lint", "unit"]\nlint = "ruff check"\n',
        '[tool.pdm.scripts]\ntest = {cmd = ["uv", "run", "--extra", "yaml", "pytest"]}\n',
        '[tool.pdm.scripts]\ntest = {composite = ["pip install -e .[yaml]", "pytest"]}\n',
        '[tool.taskipy.tasks]\ntests = "uv run --extra=yaml pytest"\n',
        '[tool.hatch.envs.default.scripts]\ntest = ["pip install -e .[yaml]", "pytest {args}"]\n',
        '[tool.pixi.feature.tests.tasks]\ntests = {cmd = "uv run --extra yaml pytest"}\n',
        '[tool.pixi.tasks]\nsetup = "pip install -e .[yaml]"\ntest = {cmd = "pytest", depends-on = ["setup"]}\n',
        '[tool.pixi.tasks]\ntest = {cmd = ["uv", "run", "--extra", "yaml", "pytest"]}\n',
    ],
)
def test_extras_a_task_runners_test_task_names_are_installed(tmp_path: Path, tasks: str) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT + tasks)
    assert wanted_extras(tmp_path, PY311) == ["yaml"]


def test_extras_a_docs_task_names_are_not(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT + '[tool.poe.tasks]\ndocs = "uv run --extra yaml mkdocs"\n')
    assert wanted_extras(tmp_path, PY311) == []


# polyfactory 3.5.0's ci.yml, cut down: a lint job, the test job, and a docs job that installs every extra too.
WORKFLOW = """\
name: Tests And Linting
on:
  push:
jobs:
  validate:
    runs-on: ubuntu-latest
    steps:
      - name: Install dependencies
        run: uv sync --extra msgspec
      - uses: j178/prek-action@v3.0.1

  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
      - name: Pin hypothesis
        run: |
          uv add --group test "hypothesis==6.135.20"
          echo done
      - name: Sync
        run: |
          uv sync --extra yaml \\
            --extra bson
      - name: Test
        run: uv run pytest tests

  build-docs:
    runs-on: ubuntu-latest
    steps:
      - run: uv sync --all-extras
      - run: uv run make docs
"""


def test_extras_a_workflows_test_job_installs_are_installed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    assert wanted_extras(tmp_path, PY311) == ["bson", "yaml"]


@pytest.mark.parametrize(
    "step",
    [
        "      - run: |\n          uv sync --all-extras\n          uv run pytest\n",
        "      - name: all\n        run: >-\n          pip install -e .[yaml,bson,msgspec]\n      - run: make test\n",
        "      - run: 'poetry install --all-extras'\n      - run: poetry run python -m unittest\n",
        "      - run: uv sync --extra yaml\n          --extra bson --extra msgspec\n      - run: tox -e py\n",
    ],
)
def test_a_workflows_test_job_is_read_in_each_form_a_step_takes(tmp_path: Path, step: str) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "tests.yaml").write_text(f"on: push\njobs:\n  unit:\n    steps:\n{step}")
    assert wanted_extras(tmp_path, PY311) == ["bson", "msgspec", "yaml"]


def test_a_workflows_test_job_installs_through_the_repositorys_own_composite_action(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    job = "      - uses: ./.github/actions/setup\n      - run: uv run pytest\n"
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(f"on: push\njobs:\n  test:\n    steps:\n{job}")
    (tmp_path / ".github" / "actions" / "setup").mkdir(parents=True)
    action = "runs:\n  using: composite\n  steps:\n    - shell: bash\n      run: uv sync --extra bson\n"
    (tmp_path / ".github" / "actions" / "setup" / "action.yml").write_text(action)
    assert wanted_extras(tmp_path, PY311) == ["bson"]


def test_a_workflows_test_job_installs_through_the_repositorys_own_shell_script(tmp_path: Path) -> None:
    # fastapi-pagination 0.16.1: its test job runs `bash scripts/ci-test.sh`, which syncs every extra
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    job = "      - name: Run tests\n        run: |\n          bash scripts/ci-test.sh\n"
    (tmp_path / ".github" / "workflows" / "test.yml").write_text(f"on: push\njobs:\n  test:\n    steps:\n{job}")
    (tmp_path / "scripts").mkdir()
    script = "#!/usr/bin/env bash\nset -ex\nuv sync --extra yaml \\\n  --dev\nuv run --no-project pytest tests\n"
    (tmp_path / "scripts" / "ci-test.sh").write_text(script)
    assert wanted_extras(tmp_path, PY311) == ["yaml"]


def test_a_group_a_test_task_names_is_installed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[dependency-groups]\nextra-tools = ["a"]\nrelease = ["b"]\n'
        '[tool.poe.tasks]\ntest = "uv run --group extra-tools pytest"\n'
    )
    assert wanted_groups(tmp_path, PY311) == ["extra-tools"]


def test_extras_hatchs_test_environments_install_are_installed_and_its_lint_ones_not(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        EXTRAS_PROJECT
        + '[tool.hatch.envs.hatch-test]\nfeatures = ["yaml"]\n[tool.hatch.envs.lint]\nfeatures = ["bson"]\n'
    )
    assert wanted_extras(tmp_path, PY311) == ["yaml"]


def test_hatchs_test_environments_dependencies_are_declared_but_not_its_paths_or_lint_tools(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hatch.envs.default]\ndependencies = ["pytest>=8", "helper @ {root:uri}/helper"]\n'
        '[tool.hatch.envs.tests]\nextra-dependencies = ["freezegun"]\n[tool.hatch.envs.lint]\ndependencies = ["ruff"]\n'
    )
    assert hatch_deps(tmp_path) == ["freezegun", "pytest>=8"]


@pytest.mark.parametrize(
    ("filename", "config"),
    [
        ("setup.cfg", "[coverage:run]\nplugins = covdefaults\nomit = testing/data\n"),
        (".coveragerc", "[run]\nplugins =\n    covdefaults\n    coverage_conditional_plugin\n"),
        ("pyproject.toml", '[tool.coverage.run]\nplugins = ["covdefaults"]\n'),
    ],
)
def test_coverage_plugins_come_from_the_file_coverage_reads(tmp_path: Path, filename: str, config: str) -> None:
    (tmp_path / filename).write_text(config)
    assert coverage_plugins(tmp_path)[0] == "covdefaults"


def test_tox_deps_are_plain_requirements_only(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps =\n    pytest>=7\n    -rrequirements.txt\n    py38: mock\n")
    assert tox_deps(tmp_path, PY311) == ["pytest>=7"]


def test_tox_deps_of_this_interpreters_environment_are_installed(tmp_path: Path) -> None:
    """ecdsa's tox.ini: hypothesis only under factor conditions, one of which holds for py311."""
    deps = (
        "    py{26}: hypothesis<3\n"
        "    py{27,35,310,311,312,py,py3}: hypothesis\n"
        "    gmpy2py{27,39,311}: gmpy2\n"
        "    py: pytest\n"
        "    coverage\n"
    )
    (tmp_path / "tox.ini").write_text(f"[testenv]\ndeps =\n{deps}")
    assert tox_deps(tmp_path, PY311) == ["hypothesis", "pytest", "coverage"]


LEGACY_TOX_INI = '''
[tool.tox]
legacy_tox_ini = """
[testenv]
deps =
    pytest
    pytest-asyncio
"""
'''


def test_tox_deps_are_read_from_pyprojects_legacy_tox_ini(tmp_path: Path) -> None:
    """tqdm's tox configuration: an ini text in pyproject.toml, tox 4's third place to look."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n' + LEGACY_TOX_INI)
    assert tox_deps(tmp_path, PY311) == ["pytest", "pytest-asyncio"]


def test_tox_deps_are_read_from_setup_cfgs_tox_section(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tox:tox]\nenvlist = py311\n\n[testenv]\ndeps = pytest-asyncio\n")
    assert tox_deps(tmp_path, PY311) == ["pytest-asyncio"]


def test_tox_ini_wins_over_pyprojects_legacy_tox_ini(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n' + LEGACY_TOX_INI)
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps = hypothesis\n")
    assert tox_deps(tmp_path, PY311) == ["hypothesis"]


def test_tox_deps_substitute_another_sections_value_recursively(tmp_path: Path) -> None:
    """tqdm's ``deps = {[core]deps}``; here ``[core]`` refers on to ``[base]``, and tox substitutes both."""
    config = "[base]\ndeps = pytest\n[core]\ndeps =\n    {[base]deps}\n    pytest-asyncio\n"
    (tmp_path / "tox.ini").write_text(config + "[testenv]\ndeps =\n    {[core]deps}\n    {[core]missing}\n")
    assert tox_deps(tmp_path, PY311) == ["pytest", "pytest-asyncio"]


@pytest.mark.parametrize(
    ("condition", "env", "holds"),
    [
        ("py311", "py311", True),
        ("py38,py311", "py311", True),
        ("py3{9,10,11}", "py311", True),
        ("py311-django", "py311", False),
        ("py311-django", "py311-django", True),
        ("!py38", "py311", True),
        ("!py311", "py311", False),
        ("py{38,311}-!pypy", "py311", True),
        ("gmpy2py{27,311}", "py311", False),
    ],
)
def test_a_tox_factor_condition_holds_as_tox_says(condition: str, env: str, holds: bool) -> None:
    assert tox_env_holds(condition, env) is holds


@pytest.mark.parametrize(
    ("constraint", "specifier"),
    [
        ("^1.2.3", ">=1.2.3,<2.0.0"),
        ("^0.2.3", ">=0.2.3,<0.3.0"),
        ("~1.2", ">=1.2,<1.3"),
        ("1.2.*", "==1.2.*"),
        (">=1.0 <2.0", ">=1.0,<2.0"),
        ("*", ""),
        ("^1 || ^2", ""),
    ],
)
def test_poetry_constraints_become_pep_440(constraint: str, specifier: str) -> None:
    assert poetry.specifier(constraint) == specifier


def test_poetry_test_groups_become_requirements(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry.group.test.dependencies]\npytest = "^8.0"\nhypothesis = {version = "*", extras = ["cli"]}\n'
        '[tool.poetry.group.docs.dependencies]\nsphinx = "^7"\n'
        '[tool.poetry.dev-dependencies]\nlocal = {path = "../local"}\n'
    )
    assert poetry.test_requirements(tmp_path) == ["hypothesis[cli]", "pytest>=8.0,<9.0"]


def test_a_poetry_lock_pins_main_and_test_groups_with_their_markers(tmp_path: Path) -> None:
    lock = tmp_path / "poetry.lock"
    lock.write_text(
        '[[package]]\nname = "attrs"\nversion = "23.1.0"\ngroups = ["main"]\n'
        '[[package]]\nname = "pytest"\nversion = "8.0.0"\ngroups = ["test"]\n'
        '[[package]]\nname = "colorama"\nversion = "0.4.6"\ngroups = ["test"]\n'
        'markers = {test = "sys_platform == \\"win32\\""}\n'
        '[[package]]\nname = "sphinx"\nversion = "7.0.0"\ngroups = ["docs"]\n'
        '[[package]]\nname = "ujson"\nversion = "5.0.0"\noptional = true\ngroups = ["main"]\n'
    )
    assert lockfiles.read(lock).pins == [
        "attrs==23.1.0",
        'colorama==0.4.6 ; (sys_platform == "win32")',
        "pytest==8.0.0",
    ]


def test_an_old_poetry_lock_uses_categories(tmp_path: Path) -> None:
    lock = tmp_path / "poetry.lock"
    lock.write_text('[[package]]\nname = "pytest"\nversion = "7.0.0"\ncategory = "dev"\n')
    assert lockfiles.read(lock).pins == ["pytest==7.0.0"]


def test_a_pdm_lock_pins_default_and_test_groups(tmp_path: Path) -> None:
    lock = tmp_path / "pdm.lock"
    lock.write_text(
        '[[package]]\nname = "a"\nversion = "1"\ngroups = ["default"]\n'
        '[[package]]\nname = "b"\nversion = "2"\ngroups = ["doc"]\nmarker = "python_version >= \\"3.8\\""\n'
    )
    assert lockfiles.read(lock).pins == ["a==1"]


def test_a_lock_that_names_no_groups_only_constrains(tmp_path: Path) -> None:
    # pdm's cross_platform strategy (cattrs 24.1), poetry 1.5-1.8: no groups, no markers, every Python's packages
    lock = tmp_path / "pdm.lock"
    lock.write_text(
        '[metadata]\nstrategy = ["cross_platform"]\n'
        '[[package]]\nname = "backports-zoneinfo"\nversion = "0.2.1"\n'
        '[[package]]\nname = "attrs"\nversion = "23.1.0"\n'
    )
    locked = lockfiles.read(lock)
    assert (locked.pins, locked.option) == (["attrs==23.1.0", "backports-zoneinfo==0.2.1"], "-c")


PIPFILE = """\
[packages]
requests = "*"
project = {path = ".", editable = true}

[dev-packages]
pytest-mock = ">=3"
rich = {version = "==13.7.1", extras = ["jupyter"], markers = "python_version >= '3.8'"}
tool = {git = "https://example.org/tool.git"}
"""


def test_pipfiles_packages_and_dev_packages_are_installed_as_pipenv_install_dev_would(tmp_path: Path) -> None:
    (tmp_path / "Pipfile").write_text(PIPFILE)
    assert pipfile_deps(tmp_path) == [
        "pytest-mock>=3",
        "requests",
        "rich[jupyter]==13.7.1 ; python_version >= '3.8'",
    ]


def test_a_pipfile_lock_pins_default_and_develop_with_their_markers(tmp_path: Path) -> None:
    lock = tmp_path / "Pipfile.lock"
    lock.write_text(
        '{"_meta": {}, "default": {"six": {"version": "==1.16.0"}, "x": {"editable": true, "path": "."}},'
        ' "develop": {"colorama": {"version": "==0.4.6", "markers": "sys_platform == \'win32\'"}}}'
    )
    locked = lockfiles.read(lock)
    assert (locked.pins, locked.option) == (["colorama==0.4.6 ; sys_platform == 'win32'", "six==1.16.0"], "-r")


@pytest.mark.slow
def install(tmp_path: Path, uv_cache: Path, venv_name: str = "venv", **more_env: str) -> Path:
    """The Installer's run on ``tmp_path/src``; the venv's site-packages."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "UV_CACHE_DIR": str(uv_cache), "TMPDIR": str(tmp_path / "tmp"), **more_env}
    venv = tmp_path / "env" / venv_name
    Installer(tmp_path / "src", venv, sys.executable, env, Log(tmp_path / "log")).install(lambda: 120.0)
    return next((venv / "lib").glob("python3*/site-packages"))


def _project_needing(tmp_path: Path, *requirements: str) -> None:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src/pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "0"\ndependencies = {list(requirements)!r}\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "src/x.py").write_text("")


def test_a_rust_extension_without_cargo_fails_at_once_saying_so(tmp_path: Path, uv_cache: Path) -> None:
    # fastwarc 2.0.0 as published: maturin's backend asked for rustup, which no job reaches
    _project_needing(tmp_path)
    pyproject = (tmp_path / "src/pyproject.toml").read_text()
    (tmp_path / "src/pyproject.toml").write_text(pyproject.replace('["setuptools"]', '["maturin>=1.9,<2.0"]'))
    with pytest.raises(DependencyError) as raised:
        install(tmp_path, uv_cache, PATH="/usr/bin:/bin")
    assert (
        str(raised.value) == "the project builds a Rust extension (maturin), and this job has no Rust toolchain (cargo)"
    )
    assert raised.value.transient is False


OUTSIDE_SOURCE = '[tool.uv.sources]\nsix = { path = "../../six", editable = true }\n'


def test_a_uv_source_outside_the_tree_is_installed_from_the_index(tmp_path: Path, uv_cache: Path) -> None:
    # langchain-ollama 1.1.0's shape: its sdist's sources name its monorepo's siblings
    _project_needing(tmp_path, "six==1.16.0")
    with (tmp_path / "src/pyproject.toml").open("a") as pyproject:
        pyproject.write(OUTSIDE_SOURCE)
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.16.0.dist-info"]
    said = "pyproject.toml: uv sources outside the tree: six (../../six); from the index instead"
    assert said in (tmp_path / "log").read_text()


def test_a_lock_of_a_uv_source_outside_the_tree_gives_way_to_the_index(tmp_path: Path, uv_cache: Path) -> None:
    sibling = tmp_path / "six"  # where the source points when the lock is made: ../../six from src/x
    sibling.mkdir()
    (sibling / "pyproject.toml").write_text(
        '[project]\nname = "six"\nversion = "1.16.0"\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (sibling / "six.py").write_text("")
    _project_needing(tmp_path, "six")
    (tmp_path / "src/pyproject.toml").write_text(
        (tmp_path / "src/pyproject.toml").read_text() + OUTSIDE_SOURCE.replace("../../six", "../six")
    )
    env = {**os.environ, "UV_CACHE_DIR": str(uv_cache)}
    subprocess.run(["uv", "lock", "--quiet"], cwd=tmp_path / "src", env=env, check=True)
    shutil.rmtree(sibling)
    site = install(tmp_path, uv_cache)
    assert list(site.glob("six-*.dist-info")) and (site / "six.py").stat().st_size > 0  # the index's six


NO_INDEX = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "UV_HTTP_RETRIES": "0"}


def test_a_repositorys_next_install_resolves_from_its_cache_without_the_index(tmp_path: Path) -> None:
    _project_needing(tmp_path, "six")
    install(tmp_path, tmp_path / "uv-cache", "first")
    site = install(tmp_path, tmp_path / "uv-cache", "second", **NO_INDEX)
    assert list(site.glob("six-*.dist-info"))
    assert "again with the index" not in (tmp_path / "log").read_text()


def test_what_the_cache_does_not_hold_is_resolved_against_the_index(tmp_path: Path) -> None:
    _project_needing(tmp_path, "six")
    install(tmp_path, tmp_path / "uv-cache", "first")
    _project_needing(tmp_path, "six", "idna")
    site = install(tmp_path, tmp_path / "uv-cache", "second")
    assert list(site.glob("idna-*.dist-info"))
    assert "again with the index" in (tmp_path / "log").read_text()


@pytest.mark.parametrize(("named", "expected"), [('["docs", "ci"]', ["docs", "ci"]), ('"all"', ["ci", "docs"])])
def test_uvs_default_groups_are_read(tmp_path: Path, named: str, expected: list[str]) -> None:
    groups = '[dependency-groups]\nci = ["pytest"]\ndocs = ["mkdocs"]\n'
    (tmp_path / "pyproject.toml").write_text(f"[tool.uv]\ndefault-groups = {named}\n{groups}")
    assert uv_default_groups(tmp_path) == expected


def _project_with_default_group(tmp_path: Path, requirement: str) -> None:
    _project_needing(tmp_path)
    with (tmp_path / "src/pyproject.toml").open("a") as pyproject:
        pyproject.write(f'[tool.uv]\ndefault-groups = ["site"]\n[dependency-groups]\nsite = ["{requirement}"]\n')


def test_uvs_default_groups_are_installed_as_uv_sync_would(tmp_path: Path, uv_cache: Path) -> None:
    _project_with_default_group(tmp_path, "six")
    assert list(install(tmp_path, uv_cache).glob("six-*.dist-info"))


def test_a_default_group_that_cannot_install_is_left_out_with_a_line(tmp_path: Path, uv_cache: Path) -> None:
    _project_with_default_group(tmp_path, "mendflow-no-such-package-xyz==1.0")
    assert list(install(tmp_path, uv_cache).glob("x-*.dist-info"))
    assert "uv's default groups ['site'] failed" in (tmp_path / "log").read_text()


def test_a_group_naming_a_package_that_does_not_build_here_is_left_out(tmp_path: Path, uv_cache: Path) -> None:
    # django-guardian 3.5.2: its ci group adds mysqlclient, which needs MySQL's client library, to its dev group
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text(
        '[project]\nname = "broken"\nversion = "1"\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (broken / "setup.py").write_text("raise SystemExit('mysql_config not found')\n")
    _project_needing(tmp_path)
    with (tmp_path / "src/pyproject.toml").open("a") as pyproject:
        pyproject.write(
            f'[dependency-groups]\ndev = ["six"]\nci = ["broken @ {broken.as_uri()}", {{include-group = "dev"}}]\n'
        )
    assert list(install(tmp_path, uv_cache).glob("six-*.dist-info"))
    assert "broken does not build here: groups ['ci'] left out" in (tmp_path / "log").read_text()


def _project_whose_conftest_imports(tmp_path: Path, line: str, declared: str) -> None:
    _project_needing(tmp_path)
    with (tmp_path / "src/pyproject.toml").open("a") as pyproject:
        pyproject.write(declared)
    (tmp_path / "src/tests").mkdir()
    (tmp_path / "src/tests/conftest.py").write_text(f"{line}\n")


def test_a_group_naming_what_a_conftest_imports_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    # obspec-utils 0.9.0: its conftest imports xarray, which only its `xarray` group names (its CI syncs them all)
    groups = '[dependency-groups]\ntest = ["idna"]\nsix = ["six"]\nall = ["six", "toml"]\n'
    _project_whose_conftest_imports(tmp_path, "import six", groups)
    site = install(tmp_path, uv_cache)
    assert list(site.glob("six-*.dist-info"))
    assert not list(site.glob("toml-*"))  # the smaller group of the two that name six
    assert "the tests import six: adding [('group', 'six')]" in (tmp_path / "log").read_text()


def test_a_locked_group_naming_what_a_conftest_imports_is_synced(tmp_path: Path, uv_cache: Path) -> None:
    groups = '[dependency-groups]\ntest = ["idna"]\nsix = ["six"]\n'
    _project_whose_conftest_imports(tmp_path, "import six", groups)
    subprocess.run(
        ["uv", "lock", "-q"], cwd=tmp_path / "src", env={**os.environ, "UV_CACHE_DIR": str(uv_cache)}, check=True
    )
    site = install(tmp_path, uv_cache)
    assert (bool(list(site.glob("six-*.dist-info"))), bool(list(site.glob("idna-*.dist-info")))) == (True, True)


def test_an_extra_naming_what_a_conftest_imports_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    extras = '[project.optional-dependencies]\ntest = ["idna"]\ncompat = ["six"]\n'
    _project_whose_conftest_imports(tmp_path, "from six import moves", extras)
    assert list(install(tmp_path, uv_cache).glob("six-*.dist-info"))


def test_an_import_the_tests_guard_adds_no_group(tmp_path: Path, uv_cache: Path) -> None:
    groups = '[dependency-groups]\ntest = ["idna"]\nsix = ["six"]\n'
    _project_whose_conftest_imports(tmp_path, "try:\n    import six\nexcept ImportError:\n    six = None", groups)
    assert not list(install(tmp_path, uv_cache).glob("six-*.dist-info"))


def test_a_group_for_an_import_that_cannot_install_is_left_out_with_a_line(tmp_path: Path, uv_cache: Path) -> None:
    groups = '[dependency-groups]\ntest = ["idna"]\nnope = ["mendflow-no-such-package-xyz==1.0"]\n'
    _project_whose_conftest_imports(tmp_path, "import mendflow_no_such_package_xyz", groups)
    assert list(install(tmp_path, uv_cache).glob("idna-*.dist-info"))
    assert "[('group', 'nope')] left out" in (tmp_path / "log").read_text()


def test_a_constraining_lock_installs_only_what_the_project_needs_at_its_pins(tmp_path: Path, uv_cache: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\ndependencies = ["six"]\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "src/x.py").write_text("")
    (tmp_path / "src/pdm.lock").write_text(
        '[[package]]\nname = "six"\nversion = "1.15.0"\n[[package]]\nname = "idna"\nversion = "3.4"\n'
    )
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.15.0.dist-info"]
    assert not list(site.glob("idna*"))


def _project_with_extras(tmp_path: Path, extras: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "0"\n[project.optional-dependencies]\n{extras}'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "src/x.py").write_text("")


def test_a_project_declaring_nothing_for_its_tests_gets_its_features_not_its_docs_tools(
    tmp_path: Path, uv_cache: Path
) -> None:
    # httpcore 1.0.9's sdist: no requirements; its tests import what its http2, socks, trio and asyncio extras bring
    _project_with_extras(tmp_path, 'http2 = ["six"]\ndocs = ["idna"]\n')
    site = install(tmp_path, uv_cache)
    assert (bool(list(site.glob("six-*.dist-info"))), list(site.glob("idna*"))) == (True, [])


def test_extras_that_cannot_install_leave_the_project_alone(tmp_path: Path, uv_cache: Path) -> None:
    _project_with_extras(tmp_path, 'gone = ["mendflow-no-such-distribution-anywhere"]\n')
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("x-*.dist-info")] == ["x-0.dist-info"]


def test_a_lock_of_nothing_beside_a_project_uv_does_not_manage_leaves_its_tox_extras_to_install(
    tmp_path: Path, uv_cache: Path
) -> None:
    # eval_type_backport 0.4.0: a setup.cfg project, tox's `extras = tests`, and a uv.lock that locks no package;
    # uv sync refused the extra ("Extra `tests` is not defined")
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "src/setup.cfg").write_text(
        "[metadata]\nname = x\nversion = 0\n[options]\npy_modules = x\n[options.extras_require]\ntests =\n    six\n"
    )
    (tmp_path / "src/tox.ini").write_text("[testenv]\ncommands = pytest tests\nextras = tests\n")
    (tmp_path / "src/uv.lock").write_text('version = 1\nrevision = 3\nrequires-python = ">=3.7"\n')
    (tmp_path / "src/x.py").write_text("")
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] and [p.name for p in site.glob("x-*.dist-info")]


@pytest.mark.parametrize(
    ("table", "wanted"),
    [
        ('extra-dependencies = ["freezegun"]\n', ["freezegun", "pytest-mock"]),
        ('dependencies = ["pytest"]\n', ["pytest"]),  # its own list replaces hatch's
    ],
)
def test_hatch_tests_own_environment_brings_pytest_mock_unless_it_names_its_own(
    tmp_path: Path, table: str, wanted: list[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.hatch.envs.hatch-test]\n" + table)
    assert hatch_deps(tmp_path) == wanted


def test_what_a_hatch_test_environment_adds_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    _project_with_extras(tmp_path, "")
    with (tmp_path / "src/pyproject.toml").open("a") as f:
        f.write('[tool.hatch.envs.hatch-test]\nextra-dependencies = ["six"]\n')
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] and [p.name for p in site.glob("x-*.dist-info")]


SKOPS_PIXI = """\
[tool.pixi.dependencies]
rich = ">=12"
[tool.pixi.pypi-dependencies]
skops = { path = ".", editable = true }
[tool.pixi.feature.tests.dependencies]
python = "3.11.*"
matplotlib-base = ">=3.3"
pandas = "2.2.*"
numpy = "1.26"
[tool.pixi.feature.tests.pypi-dependencies]
xgboost = { version = ">=1.6", extras = ["scikit-learn"] }
[tool.pixi.feature.docs.dependencies]
sphinx = "*"
[tool.pixi.feature.sklearn18.dependencies]
scikit-learn = "~=1.8.0"
[tool.pixi.feature.tests.tasks]
tests = "pytest skops"
[tool.pixi.environments]
docs = ["docs"]
ci-sklearn18 = ["tests", "sklearn18"]
"""


def test_pixis_test_environment_adds_its_features_packages_by_their_pypi_names(tmp_path: Path) -> None:
    # skops 0.16.0: its tests import pandas and matplotlib, which only its pixi `tests` feature brings
    (tmp_path / "pyproject.toml").write_text(SKOPS_PIXI)
    assert pixi_deps(tmp_path) == {
        "default": ["rich>=12"],
        "tests": ["matplotlib>=3.3", "pandas==2.2.*", "numpy==1.26.*", "xgboost[scikit-learn]>=1.6"],
        "sklearn18": ["scikit-learn~=1.8.0"],
    }


def test_pixis_default_environment_is_taken_where_it_holds_the_test_task(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SKOPS_PIXI + 'default = ["docs", "tests"]\n')
    assert list(pixi_deps(tmp_path)) == ["default", "docs", "tests"]


def test_pixi_toml_is_read_as_pyprojects_pixi_table(tmp_path: Path) -> None:
    (tmp_path / "pixi.toml").write_text(
        '[tasks]\ntest = "pytest tests"\n[feature.test.dependencies]\nsix = ">=1.16"\n'
        '[environments]\ntest = { features = ["test"], no-default-feature = true }\n'
    )
    assert pixi_deps(tmp_path) == {"test": ["six>=1.16"]}


def test_a_pixi_feature_installs_what_pypi_has_and_leaves_out_what_it_lacks(tmp_path: Path, uv_cache: Path) -> None:
    _project_with_extras(tmp_path, "")
    with (tmp_path / "src/pyproject.toml").open("a") as f:
        f.write('[tool.pixi.feature.tests.dependencies]\nsix = "1.16.*"\nmendflow-no-such-distribution = "*"\n')
        f.write('[tool.pixi.environments]\ndefault = ["tests"]\n')
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.16.0.dist-info"]
    assert "mendflow-no-such-distribution (pixi feature 'tests') do not install here" in (tmp_path / "log").read_text()


def test_a_pipenv_application_gets_its_locked_packages(tmp_path: Path, uv_cache: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/Pipfile").write_text('[packages]\nsix = "*"\n')
    (tmp_path / "src/Pipfile.lock").write_text('{"default": {"six": {"version": "==1.15.0"}}, "develop": {}}')
    (tmp_path / "src/app.py").write_text("import six\n")
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.15.0.dist-info"]


def test_per_requirement_options_uv_refuses_are_left_out(tmp_path: Path, uv_cache: Path) -> None:
    # frozenlist 1.5.0 as published: requirements/dev.txt is `-e . --config-settings=pure-python=false`, `-r ci.txt`.
    (tmp_path / "src/requirements").mkdir(parents=True)
    (tmp_path / "src/pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "src/x.py").write_text("")
    (tmp_path / "src/requirements/dev.txt").write_text("-e . --config-settings=pure-python=false\n-r ci.txt\n")
    (tmp_path / "src/requirements/ci.txt").write_text("six==1.16.0\n")
    site = install(tmp_path, uv_cache)
    assert {p.name for p in site.glob("*.dist-info")} >= {"x-0.dist-info", "six-1.16.0.dist-info"}
    assert sorted(p.name for p in (tmp_path / "src/requirements").iterdir()) == ["ci.txt", "dev.txt"]
    assert "left out: --config-settings=pure-python=false" in (tmp_path / "log").read_text()


def test_a_short_option_with_its_value_attached_is_read_as_pip_reads_it(tmp_path: Path, uv_cache: Path) -> None:
    # astunparse 1.6.3 as published: test_requirements.txt is `-rrequirements.txt`, which uv alone refuses.
    (tmp_path / "src").mkdir()
    (tmp_path / "src/test_requirements.txt").write_text("-rrequirements.txt\n")
    (tmp_path / "src/requirements.txt").write_text("six==1.16.0\n")
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.16.0.dist-info"]


def test_an_included_file_the_tree_lacks_is_left_out(tmp_path: Path, uv_cache: Path) -> None:
    # aiohttp-jinja2 1.6 as published: requirements-dev.txt includes requirements.txt, which its sdist lacks.
    (tmp_path / "src").mkdir()
    (tmp_path / "src/requirements-dev.txt").write_text("-r requirements.txt\n-c constraints.txt\nsix==1.16.0\n")
    site = install(tmp_path, uv_cache)
    assert [p.name for p in site.glob("six-*.dist-info")] == ["six-1.16.0.dist-info"]
    said = "requirements-dev.txt: includes requirements.txt, constraints.txt, which the tree lacks; left out"
    assert said in (tmp_path / "log").read_text()


def test_the_plugin_a_pytest_option_belongs_to_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/setup.cfg").write_text("[tool:pytest]\nasyncio_mode = strict\n")
    site = install(tmp_path, uv_cache)
    assert list(site.glob("pytest_asyncio-*.dist-info"))


def test_a_plugin_the_tests_ask_for_by_a_fixture_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    (tmp_path / "src/tests").mkdir(parents=True)
    (tmp_path / "src/tests/test_x.py").write_text("def test_x(mocker):\n    pass\n")
    site = install(tmp_path, uv_cache)
    assert list(site.glob("pytest_mock-*.dist-info"))


def test_a_fixture_a_declared_plugin_defines_too_installs_no_other(tmp_path: Path, uv_cache: Path) -> None:
    # pytest-base-url 2.1.0: its `httpserver` is pytest-localserver's, which it declares
    _project_needing(tmp_path, "pytest-localserver")
    (tmp_path / "src/tests").mkdir()
    (tmp_path / "src/tests/test_x.py").write_text("def test_x(httpserver):\n    httpserver.serve_content('')\n")
    site = install(tmp_path, uv_cache)
    assert list(site.glob("pytest_localserver-*.dist-info")) and not list(site.glob("pytest_httpserver-*"))


def test_a_test_library_the_tests_import_is_installed(tmp_path: Path, uv_cache: Path) -> None:
    (tmp_path / "src/tests").mkdir(parents=True)
    (tmp_path / "src/tests/test_x.py").write_text("import requests_mock\n\n\ndef test_x():\n    pass\n")
    site = install(tmp_path, uv_cache)
    assert list(site.glob("requests_mock-*.dist-info"))


def test_a_plugin_the_tests_ask_for_that_does_not_install_is_left_out_with_a_line(
    tmp_path: Path, uv_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the asked plugin is a guess from the tests' words: the distribution it names here is one no index serves
    monkeypatch.setattr(deps, "asked_plugins", lambda root: {"mendflow_no_such": "mendflow-no-such-plugin-xyz"})
    _project_needing(tmp_path, "six")
    assert list(install(tmp_path, uv_cache).glob("six-*.dist-info"))
    assert "mendflow-no-such-plugin-xyz, which the tests ask for, left out" in (tmp_path / "log").read_text()


UV_NO_SOLUTION = """\
  \u00d7 No solution found when resolving dependencies:
  \u2570\u2500\u25b6 Because mendflow-no-such-package was not found in the package registry and you require
      mendflow-no-such-package==1.0, we can conclude that your requirements are unsatisfiable.
  hint: An index URL (https://pypi.org/simple) could not be queried due to a lack of network connectivity.
"""
# The same without a terminal.
UV_NO_SOLUTION_PLAIN = """\
error: No solution found when resolving dependencies
  cause: Because mendflow-no-such-package was not found in the package registry and you require \
mendflow-no-such-package==1.0, we can conclude that your requirements are unsatisfiable.
"""
UV_UNREACHABLE = """\
error: Failed to fetch: `http://127.0.0.1:9/simple/x/`
  Caused by: Request failed after 3 retries
  Caused by: error sending request for url (http://127.0.0.1:9/simple/x/)
  Caused by: tcp connect error: Connection refused (os error 111)
"""


# keyring 25.7.0's type extra, abridged: meson prints to stdout, and its error comes after 40 lines of probing.
UV_BACKEND_STDOUT = (
    """\
error: Failed to build `pycairo==1.29.2`
  cause: The build backend returned an error
  cause: Call to `mesonpy.build_wheel` failed (exit status: 1)

         [stdout]
         + meson setup /cache/pycairo/src /cache/pycairo/src/.mesonpy-nc2kzpq7 -Dbuildtype=release
         The Meson build system
"""
    + "         Compiler for C supports arguments -Wall: YES\n" * 40
    + """\
         Run-time dependency cairo found: NO  (tried pkg-config and cmake)

         ../cairo/meson.build:31:12: ERROR: Dependency "cairo" not found (tried pkg-config and cmake)

         A full log can be found at /cache/pycairo/src/.mesonpy-nc2kzpq7/meson-logs/meson-log.txt

hint: `pycairo` (v1.29.2) was included because `keyring[type]` (v25.7.0) depends on `pygobject-stubs` (v2.20.0) \
which depends on `pygobject` (v3.58.1) which depends on `pycairo`

hint: Build failures usually indicate a problem with the package or the build environment
"""
)


def failed(stderr: str) -> StepResult:
    return StepResult(["uv", "pip", "install", "-r", "requirements.txt"], 1, "", stderr, 0.1)


@pytest.mark.parametrize("stderr", [UV_NO_SOLUTION, UV_NO_SOLUTION_PLAIN])
def test_no_solution_is_deterministic_and_names_uvs_cause_not_its_hint(stderr: str) -> None:
    error = DependencyError(failed(stderr))
    assert not error.transient
    assert "No solution found when resolving dependencies" in str(error) and "was not found" in str(error)
    assert "your requirements are unsatisfiable" in str(error)
    assert "hint" not in str(error)


def test_a_build_backend_failure_names_its_error_line_and_what_brought_the_package_in() -> None:
    said = str(DependencyError(failed(UV_BACKEND_STDOUT)))
    assert '[stdout] ../cairo/meson.build:31:12: ERROR: Dependency "cairo" not found' in said, said
    assert "was included because `keyring[type]`" in said and "Compiler for C" not in said


def test_a_connection_refused_is_transient() -> None:
    error = DependencyError(failed(UV_UNREACHABLE))
    assert error.transient and "Connection refused" in str(error)


@pytest.mark.parametrize(
    "said",
    [
        "File \"setuptools/build_meta.py\", line 429, in _build\nImportError: cannot import name 'formatargspec'",
        "Because pytest-timeout==1.3.3 depends on pytest>=3.6 and you require pytest<3, no solution is found",
        "    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,\n"
        "subprocess.CalledProcessError: Command 'krb5-config --libs gssapi' returned non-zero exit status 127.",
    ],
)
def test_a_line_number_or_a_package_name_is_no_network_error(said: str) -> None:
    # nameko 2.14.1: wrapt 1.13.3's build failed on Python 3.11, with "line 429" and "line 504" in its traceback;
    # pyspnego 0.12.4: gssapi 1.12.0's setup.py found no krb5-config, and its traceback quotes subprocess's code
    assert not DependencyError(failed(f"error: Failed to build `wrapt==1.13.3`\n{said}\n")).transient


@pytest.mark.parametrize(
    "said",
    ["HTTP status server error (503 Service Unavailable) for url", "status code: 429", "operation timed out"],
)
def test_a_servers_refusal_or_a_timeout_is_transient(said: str) -> None:
    assert DependencyError(
        failed(f"error: Failed to fetch: `https://pypi.org/simple/x/`\n  Caused by: {said}\n")
    ).transient


PRE_COMMIT = """\
repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.5.0
    hooks:
      - id: trailing-whitespace
  - repo: https://github.com/charliermarsh/ruff-pre-commit  # moved to astral-sh
    rev: 'v0.4.4'
    hooks:
      - id: ruff
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.10.0
    hooks:
      - id: mypy
        additional_dependencies:
          - types-requests
          - "pydantic>=2"
"""


def test_pre_commit_pins_ruff_by_its_rev(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    assert precommit.pinned(tmp_path, "ruff") == ["ruff==0.4.4"]


def test_pre_commit_pins_mypy_with_its_hooks_stubs(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    assert precommit.pinned(tmp_path, "mypy") == ["mypy==1.10.0", "types-requests", "pydantic>=2"]


def test_flow_style_additional_dependencies_are_read(tmp_path: Path) -> None:
    flow = "repos:\n- repo: https://github.com/pre-commit/mirrors-mypy\n  rev: v1.0.0\n  hooks:\n"
    flow += "  - id: mypy\n    additional_dependencies: [types-six, 'attrs']\n"
    (tmp_path / ".pre-commit-config.yaml").write_text(flow)
    assert precommit.pinned(tmp_path, "mypy") == ["mypy==1.0.0", "types-six", "attrs"]


FROZEN = (
    "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {rev}\n    hooks:\n      - id: ruff\n"
)


def test_a_frozen_hook_pins_the_tag_its_comment_names(tmp_path: Path) -> None:
    # pytest-env 1.8.5: `pre-commit autoupdate --freeze` wrote the commit, and its tag in a comment
    rev = '"25bcf95026b96e2dd3c0aec3090c3d6ef6ca2e6c" # frozen: v0.17.3'
    (tmp_path / ".pre-commit-config.yaml").write_text(FROZEN.format(rev=rev))
    assert precommit.pinned(tmp_path, "ruff") == ["ruff==0.17.3"]


def test_a_commit_with_no_tag_pins_nothing(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(FROZEN.format(rev="25bcf95026b96e2dd3c0aec3090c3d6ef6ca2e6c"))
    assert precommit.pinned(tmp_path, "ruff") == []


def test_no_pre_commit_config_pins_nothing(tmp_path: Path) -> None:
    assert precommit.pinned(tmp_path, "ruff") == []


@pytest.mark.parametrize(
    ("request_", "fits"),
    [
        (">=3.8", True),
        (">=3.12", False),
        (">=3.9,<3.11", False),
        ("~=3.10", True),
        ("~=3.10.0", False),
        ("==3.11.*", True),
        ("!=3.11.*,>=3.8", False),
        ("3.11", True),
        ("3.12", False),
        (">3.11", True),
    ],
)
def test_an_interpreter_fits_what_the_repository_asks(request_: str, fits: bool) -> None:
    assert interpreter.fits((3, 11, 7), request_) is fits


def test_the_pin_and_requires_python_are_read(tmp_path: Path) -> None:
    (tmp_path / ".python-version").write_text("# pyenv\n3.12\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.9"\n')
    assert interpreter.requests(tmp_path) == ("3.12", ">=3.9")


def test_an_unreadable_lockfile_is_a_config_error_the_build_will_not_guess_past(tmp_path: Path) -> None:
    lock = tmp_path / "poetry.lock"
    lock.write_text("[[package]\n")
    with pytest.raises(RepoConfigError, match=r"poetry\.lock is not valid TOML"):
        lockfiles.read(lock)


NOXFILE = """\
import nox


@nox.session
def tests(session):
    session.install("-e", ".", "pytest>=8", "hypothesis")
    session.install("-r", "requirements-test.txt")
    session.run("pytest")


@nox.session
def docs(session):
    session.install("sphinx")
"""


def test_nox_test_sessions_installs_are_read_without_running_the_noxfile(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(NOXFILE)
    assert nox_deps(tmp_path) == ["hypothesis", "pytest>=8"]


def test_the_value_of_a_nox_install_option_is_not_a_requirement(tmp_path: Path) -> None:
    # stamina 26.1.0: session.install(pkg, "coverage[toml]", "--group", "tests"); "tests" was installed as a package
    install = 'session.install(".", "coverage[toml]", "--group", "tests", "--index-url", "https://x.example/simple")'
    (tmp_path / "noxfile.py").write_text(f"import nox\n\n\n@nox.session\ndef tests(session):\n    {install}\n")
    assert nox_deps(tmp_path) == ["coverage[toml]"]


# deepdiff 9.1.0's noxfile: its tests import click and pydantic, which only these extras bring.
NOX_EXTRAS = """\
import nox


@nox.session
def pytest(session):
    session.install(".[yaml,bson]")
    session.run("pytest")


@nox.session
def docs(session):
    session.install(".[msgspec]")
"""


def test_extras_a_nox_test_session_installs_are_installed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRAS_PROJECT)
    (tmp_path / "noxfile.py").write_text(NOX_EXTRAS)
    assert wanted_extras(tmp_path, PY311) == ["bson", "yaml"]


def test_pdm_dev_groups_for_tests_are_read_and_editable_paths_left_out(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pdm.dev-dependencies]\ntest = ["pytest>=7", "-e file:///${PROJECT_ROOT}/sub"]\ndoc = ["mkdocs"]\n'
    )
    assert pdm_dev_deps(tmp_path) == ["pytest>=7"]


@pytest.mark.slow
def test_the_venv_may_go_to_a_directory_that_does_not_exist_yet(tmp_path: Path, uv_cache: Path) -> None:
    # The dependency phase may write only the directories it is given; the venv's parent is one of them.
    (tmp_path / "src").mkdir()
    (tmp_path / "src/pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "UV_CACHE_DIR": str(uv_cache), "TMPDIR": str(tmp_path / "tmp")}
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))  # not under the writable tmp_path
    try:
        venv = outside / "new" / "venv"
        Installer(tmp_path / "src", venv, sys.executable, env, Log(tmp_path / "log")).install(lambda: 120.0)
        assert (venv / "bin" / "python").exists()
    finally:
        shutil.rmtree(outside)


# jproperties 2.1.2's setup.py imports pkg_resources, which setuptools 82 dropped
SETUP_WITH_PKG_RESOURCES = (
    "import pkg_resources\nfrom setuptools import setup\n\nsetup(name='x', version='0', py_modules=['x'])\n"
)


def test_a_setup_py_importing_pkg_resources_is_built_with_the_setuptools_of_its_day(
    tmp_path: Path, uv_cache: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/setup.py").write_text(SETUP_WITH_PKG_RESOURCES)
    (tmp_path / "src/x.py").write_text("")
    site = install(tmp_path, uv_cache)
    assert (site / "x-0.dist-info").is_dir()
    assert "setuptools 82 dropped: setuptools<82" in (tmp_path / "log").read_text()


def test_the_uv_the_repository_requires_installs_it(tmp_path: Path, uv_cache: Path) -> None:
    # hijridate 2.6.0: `[tool.uv] required-version = ">=0.9.0, <0.10.0"`, which the image's uv refuses to run for
    _project_needing(tmp_path, "six")
    pyproject = tmp_path / "src/pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '[tool.uv]\nrequired-version = ">=0.9.0, <0.10.0"\n')
    assert list(install(tmp_path, uv_cache).glob("six-*.dist-info"))
    assert "uv >=0.9.0, <0.10.0, as the repository's required-version asks" in (tmp_path / "log").read_text()
