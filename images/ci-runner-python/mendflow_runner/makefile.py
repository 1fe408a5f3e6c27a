"""What ``make test`` runs, as the repository's Makefile says (nothing here is ever run).

Many a project's CI runs its tests through its Makefile: aiomultiprocess 0.9.1's ``test`` target is ``python -m
coverage run -m aiomultiprocess.tests``, a suite of unittest cases in modules no test pattern names. Only what
is needed is read: variable assignments, the rules of targets named for tests and their recipe lines, with
``$(NAME)`` expanded as make would (an undefined variable is empty). A line that calls one of make's functions
(``$(shell …)``) is left out: only make could say what it runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from .task_runners import names_a_test

_FILES = ("GNUmakefile", "makefile", "Makefile")  # the order GNU make looks for them
_ASSIGNMENT = re.compile(r"^(?:export[ \t]+|override[ \t]+)?([A-Za-z_][\w.-]*)[ \t]*(:::=|::=|:=|\?=|\+=|=)[ \t]*(.*)$")
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)[ \t]*::?(?!=)[ \t]*([^;#]*)(?:;(.*))?$")
_EXPORT = re.compile(r"^export[ \t]+([A-Za-z_]\w*)[ \t]*(?::::=|::=|:=|\?=|\+=|=)")
_REFERENCE = re.compile(r"\$[({]([^(){}]*)[)}]")
_PREFIX = re.compile(r"^[@+-]+")  # make's silent, always-run and ignore-errors marks
_COMMAND_SEPARATOR = re.compile(r"[ \t]*(?:&&|\|\||;)[ \t]*")
_DEPTH = 5  # a variable or target that names itself stops here


def commands_for_tests(root: Path) -> list[str]:
    """The commands of the targets named for tests (``test``, ``tests`` first), each prerequisite named for tests
    followed: one command a line, a ``cd x && pytest`` line split at its ``&&``."""
    path = next((root / name for name in _FILES if (root / name).is_file()), None)
    if path is None:
        return []
    variables, rules = _read(path.read_text(encoding="utf-8", errors="replace"))
    targets = sorted((t for t in rules if names_a_test(t)), key=lambda t: t not in ("test", "tests"))
    lines = dict.fromkeys(line for target in targets for line in _recipe(target, rules, 0))  # a prerequisite once
    expanded = [_expand(line, variables, 0) for line in lines]
    return [part for line in expanded if line for part in _COMMAND_SEPARATOR.split(line) if part]


def exported(root: Path) -> dict[str, str]:
    """The variables the Makefile exports to its recipes' environment (django-formtools 2.7's ``export
    DJANGO_SETTINGS_MODULE = tests.settings``), expanded; one that calls a function of make's is left out."""
    path = next((root / name for name in _FILES if (root / name).is_file()), None)
    if path is None:
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    variables, _rules = _read(text)
    names = [m[1] for line in text.splitlines() if (m := _EXPORT.match(line))]
    found = {name: _expand(variables.get(name, ""), variables, 0) for name in names}
    return {name: value for name, value in found.items() if value is not None}


def _read(text: str) -> tuple[dict[str, str], dict[str, tuple[list[str], list[str]]]]:
    """The variables, and each target's prerequisites and recipe lines (a backslash continues a line)."""
    variables: dict[str, str] = {}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[list[str]] = []  # the recipes of the rule being read (several targets may share one)
    for line in re.sub(r"\\\n[ \t]*", " ", text).splitlines():
        if line.startswith("\t"):
            for recipe in current:
                recipe.append(_PREFIX.sub("", line.strip()))
            continue
        if not line.strip() or line.startswith("#"):
            continue  # a blank or comment line goes on with the rule before it, as make reads it
        current = []
        if (assigned := _ASSIGNMENT.match(line)) is not None:
            _assign(variables, assigned[1], assigned[2], assigned[3].split("#")[0].strip())
        elif (rule := _RULE.match(line)) is not None and not line.startswith(".") and "%" not in rule[1]:
            recipe = [rule[3].strip()] if rule[3] and rule[3].strip() else []
            for target in rule[1].split():
                rules[target] = (rule[2].split(), recipe)
            current = [recipe]
    return variables, rules


def _assign(variables: dict[str, str], name: str, operator: str, value: str) -> None:
    if operator == "+=" and name in variables:
        variables[name] = f"{variables[name]} {value}"
    elif operator != "?=" or name not in variables:
        variables[name] = value


def _recipe(target: str, rules: dict[str, tuple[list[str], list[str]]], depth: int) -> list[str]:
    prerequisites, recipe = rules[target]
    if depth >= _DEPTH:
        return recipe
    followed = [p for p in prerequisites if p in rules and names_a_test(p) and p != target]
    return [line for p in followed for line in _recipe(p, rules, depth + 1)] + recipe


def _expand(text: str, variables: dict[str, str], depth: int) -> str | None:
    """``text`` with its ``$(NAME)`` and ``${NAME}`` replaced; None where it calls a function of make's."""
    text = text.replace("$$", "\0")  # the shell's own $, kept
    for reference in _REFERENCE.finditer(text):
        if " " in reference[1] or "," in reference[1]:
            return None  # $(shell …), $(wildcard …), $(VAR:a=b): only make can say
    if depth < _DEPTH and _REFERENCE.search(text):
        replaced = _REFERENCE.sub(lambda m: variables.get(m[1], ""), text)
        return _expand(replaced.replace("\0", "$$"), variables, depth + 1)
    if re.search(r"\$[@<^*?]", text):
        return None  # an automatic variable: what make binds there depends on the rule
    return re.sub(r"[ \t]+", " ", text.replace("\0", "$")).strip()
