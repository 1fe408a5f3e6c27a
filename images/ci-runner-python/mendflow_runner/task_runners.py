"""What a project's task runner does for its tests, as pyproject.toml declares it (nothing here is ever run).

The commands of its test tasks (poethepoet's ``[tool.poe.tasks]``, pdm's ``[tool.pdm.scripts]``, taskipy's
``[tool.taskipy.tasks]``, hatch's environment scripts and pixi's tasks) say what a test run installs: python-ulid
4.1.0's ``test = "uv run --extra pydantic pytest"`` needs its ``pydantic`` extra, which its tests import. Hatch's
test environments list their ``features`` (extras) and dependencies outright, and so do the features of pixi's
environment its test task runs in.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

_TASK_TABLES = (("poe", "tasks"), ("pdm", "scripts"), ("taskipy", "tasks"))
_COMMAND_KEYS = ("cmd", "shell", "sequence", "composite", "ref")  # poe's and pdm's task forms; the rest is help
_REFERENCE_DEPTH = 5  # a task that refers back to itself stops here


def commands_for_tests(tool: dict[str, Any], named_for_tests: Callable[[str], bool]) -> list[str]:
    """The shell commands of the tasks ``named_for_tests`` picks, a task another refers to by name followed."""
    found: list[str] = []
    tables = [_table(_table(tool, runner), key) for runner, key in _TASK_TABLES]
    tables += [_table(env, "scripts") for env in hatch_test_environments(tool)]
    for tasks in tables:
        for name, task in tasks.items():
            if named_for_tests(name):
                found += _commands(task, tasks, 0)
    pixi_tasks = _pixi_tasks(_table(tool, "pixi"))
    for name, task in pixi_tasks.items():
        if named_for_tests(name):
            found += _pixi_commands(task, pixi_tasks, 0)
    return found


def names_a_test(name: str) -> bool:
    """A task or environment named for the tests themselves (``test``, ``tests``, ``unit-tests``, ``hatch-test``),
    not for lint, typing or development at large."""
    return "test" in name.lower()


def hatch_test_environments(tool: dict[str, Any]) -> list[dict[str, Any]]:
    """Hatch's environments a test run uses: ``default`` (``hatch run test``, and every environment's template),
    ``hatch-test`` (``hatch test``) and those named for tests; never its lint, docs or release ones, whose tools
    may pin what the tests' need otherwise."""
    envs = _table(_table(tool, "hatch"), "envs")
    return [env for name, env in envs.items() if isinstance(env, dict) and (name == "default" or names_a_test(name))]


def hatch_features(tool: dict[str, Any]) -> set[str]:
    """The extras hatch's test environments install."""
    return {f for env in hatch_test_environments(tool) for f in _strings(env.get("features"))}


def hatch_env_vars(tool: dict[str, Any]) -> dict[str, str]:
    """The ``env-vars`` hatch's test environments set (django-otp 1.7.5's ``PYTHONPATH = "test"`` and
    ``DJANGO_SETTINGS_MODULE``), ``default``'s first, each named for tests over it."""
    found: dict[str, str] = {}
    for env in hatch_test_environments(tool):
        found.update({str(k): str(v) for k, v in _table(env, "env-vars").items()})
    return found


# What ``hatch test`` installs beside pytest and coverage.py unless its environment names its own
# ``dependencies``: of its plugins, pytest-mock's ``mocker`` fixture is one a suite may use undeclared; the others
# (pytest-randomly, pytest-rerunfailures, pytest-xdist) act only where hatch's own flags ask.
_HATCH_TEST_PLUGINS = ("pytest-mock",)


def hatch_dependencies(tool: dict[str, Any]) -> list[str]:
    """The requirements hatch's test environments add; one with a ``{...}`` context field (``{root:uri}``, a path
    of the repository's) is left out, as hatch alone can fill it in."""
    found = {
        r
        for env in hatch_test_environments(tool)
        for key in ("dependencies", "extra-dependencies")
        for r in _strings(env.get(key))
        if "{" not in r
    }
    own_test = _table(_table(_table(tool, "hatch"), "envs"), "hatch-test")
    if own_test and "dependencies" not in own_test:
        found.update(_HATCH_TEST_PLUGINS)
    return sorted(found)


def pixi_requirements(tool: dict[str, Any]) -> dict[str, list[str]]:
    """The requirements, per feature, of the pixi environment a test task runs in (``pixi run test`` takes the
    ``default`` environment where it holds the task, else the one that does), as PEP 508 strings: its conda
    ``dependencies`` by their names on PyPI, which are mostly the same (skops 0.16.0's ``tests`` feature: pandas and
    matplotlib, which its tests import), and its ``pypi-dependencies``, but a path, git or URL source. The default
    feature (``[tool.pixi.dependencies]``) comes first, unless the environment says ``no-default-feature``."""
    pixi = _table(tool, "pixi")
    if not pixi:
        return {}
    features = {name: f for name, f in _table(pixi, "feature").items() if isinstance(f, dict)}
    named, with_default = _pixi_test_environment(pixi, features)
    chosen = {"default": pixi} if with_default else {}
    chosen.update({name: features[name] for name in named if name in features})
    found = {name: _pixi_feature_requirements(feature) for name, feature in chosen.items()}
    return {name: reqs for name, reqs in found.items() if reqs}


def _commands(task: Any, tasks: dict[str, Any], depth: int) -> list[str]:
    """A task's commands: a string names another task or is a command; a list is a sequence of either (poe's,
    pdm's ``composite``, hatch's scripts); a table's ``cmd`` may be an argument list (pdm's)."""
    if depth > _REFERENCE_DEPTH:
        return []
    if isinstance(task, str):
        return _commands(tasks[task], tasks, depth + 1) if task in tasks else [task]
    if isinstance(task, list):
        return [command for item in task for command in _commands(item, tasks, depth + 1)]
    if not isinstance(task, dict):
        return []
    if isinstance(argv := task.get("cmd"), list):
        return [shlex.join(_strings(argv))]
    return [command for key in _COMMAND_KEYS if key in task for command in _commands(task[key], tasks, depth)]


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _pixi_tasks(pixi: dict[str, Any]) -> dict[str, Any]:
    """Every task of the pixi manifest: its own (``[tasks]``) and its features' (``[feature.NAME.tasks]``)."""
    tasks = dict(_table(pixi, "tasks"))
    for feature in _table(pixi, "feature").values():
        if isinstance(feature, dict):
            tasks.update(_table(feature, "tasks"))
    return tasks


def _pixi_commands(task: Any, tasks: dict[str, Any], depth: int) -> list[str]:
    """A pixi task's commands: those of the tasks it ``depends-on`` first, then its ``cmd`` (a string, or words
    pixi joins with spaces); a string task is a command, never another task's name."""
    if depth > _REFERENCE_DEPTH:
        return []
    if isinstance(task, str):
        return [task]
    if not isinstance(task, dict):
        return []
    before = task.get("depends-on", task.get("depends_on", []))
    found: list[str] = []
    for item in [before] if isinstance(before, str) else before if isinstance(before, list) else []:
        name = item.get("task") if isinstance(item, dict) else item
        if isinstance(name, str) and name in tasks:
            found += _pixi_commands(tasks[name], tasks, depth + 1)
    cmd = task.get("cmd")
    return found + ([cmd] if isinstance(cmd, str) else [" ".join(_strings(cmd))] if isinstance(cmd, list) else [])


def _pixi_test_environment(pixi: dict[str, Any], features: dict[str, Any]) -> tuple[list[str], bool]:
    """The features of the environment a test task runs in, and whether it has the default feature: the default
    environment where it holds a feature named for tests or holding a test task, else the first that does; with
    no such feature, the default environment (the default feature alone, unless the manifest says otherwise)."""
    for_tests = {
        name for name, f in features.items() if names_a_test(name) or any(map(names_a_test, _table(f, "tasks")))
    }
    environments = {name: _pixi_environment(value) for name, value in _table(pixi, "environments").items()}
    holding = [name for name, (named, _) in environments.items() if for_tests & set(named)]
    if not for_tests or not holding:
        return environments.get("default", ([], True))
    return environments["default" if "default" in holding else holding[0]]


def _pixi_environment(value: Any) -> tuple[list[str], bool]:
    """An environment's features (a list, or a table's ``features``) and whether it has the default feature."""
    if isinstance(value, dict):
        return _strings(value.get("features")), not value.get("no-default-feature", False)
    return _strings(value), True


# conda-forge's names of PyPI packages where the two differ; a conda package with no PyPI twin (python, pip, a
# compiler) is left out, or fails to install and is left out with a line.
_CONDA_NAMES = {"matplotlib-base": "matplotlib", "pytorch": "torch", "py-xgboost": "xgboost", "pytables": "tables"}
_CONDA_ONLY = {"python", "pip"}
_SPECIFIER = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*[\w.*+!-]+\s*$")


def _pixi_feature_requirements(feature: dict[str, Any]) -> list[str]:
    found = []
    for name, spec in _table(feature, "dependencies").items():
        if name not in _CONDA_ONLY:
            found.append(_requirement(_CONDA_NAMES.get(name, name), spec, conda=True))
    for name, spec in _table(feature, "pypi-dependencies").items():
        if not (isinstance(spec, dict) and {"path", "git", "url"} & spec.keys()):
            found.append(_requirement(name, spec, conda=False))
    return found


def _requirement(name: str, spec: Any, conda: bool) -> str:
    """``name`` with the version ``spec`` where it reads as PEP 440 (a conda ``1.2`` or ``1.2.*`` as ``==1.2.*``),
    and a table's ``extras``; else the bare name, as a spec pip cannot read must not make the install fail."""
    extras = _strings(spec.get("extras")) if isinstance(spec, dict) else []
    version = spec.get("version", "*") if isinstance(spec, dict) else spec
    named = f"{name}[{','.join(extras)}]" if extras else name
    if not isinstance(version, str) or version.strip() in ("", "*"):
        return named
    if conda and re.fullmatch(r"[\d.]+(\.\*)?", version.strip()):
        version = "==" + version.strip().removesuffix(".*") + ".*"
    return named + version if all(_SPECIFIER.match(part) for part in version.split(",")) else named
