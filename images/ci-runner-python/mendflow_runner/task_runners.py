"""What a project's task runner does for its tests, as pyproject.toml declares it (nothing here is ever run).

The commands of its test tasks (poethepoet's ``[tool.poe.tasks]``, pdm's ``[tool.pdm.scripts]``, taskipy's
``[tool.taskipy.tasks]`` and hatch's environment scripts) say what a test run installs: python-ulid 4.1.0's
``test = "uv run --extra pydantic pytest"`` needs its ``pydantic`` extra, which its tests import. Hatch's test
environments list their ``features`` (extras) and dependencies outright.
"""

from __future__ import annotations

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
