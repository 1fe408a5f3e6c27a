"""A Django project's own test runner, read so that pytest runs the suite as that runner does.

Django's runner (``python -m django test``, ``manage.py test``, or a ``runtests.py`` calling ``get_runner``) sets
Django up from a settings module and makes test databases before its unittest discovery runs the ``TestCase``
classes. pytest alone does neither: django-debug-toolbar 8.0.0's tox runs ``python -m django test tests`` with
``DJANGO_SETTINGS_MODULE = tests.settings`` in its ``setenv``, and under plain pytest 47 of its test modules failed
at import ("settings are not configured"). pytest-django does what Django's runner does, given the settings module:
the job installs it as a guess (``asked_plugins``), and the collection names the settings module and the
directories the command puts on ``sys.path`` (``discovery.rules``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from . import repo_config

SETTINGS = "DJANGO_SETTINGS_MODULE"
PLUGIN = ("pytest_django", "pytest-django")  # its module, its distribution
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# ``os.environ["DJANGO_SETTINGS_MODULE"] = "x"``, ``os.environ.setdefault("DJANGO_SETTINGS_MODULE", "x")``
_SETS_SETTINGS = re.compile(rf"""["']{SETTINGS}["']\s*\]?\s*[=,]\s*["']([\w.]+)["']""")
_RUNS_DJANGO_TESTS = re.compile(r"\bget_runner\s*\(|\bcall_command\s*\(\s*[\"']test[\"']|execute_from_command_line")
_RUN_TESTS_LABELS = re.compile(r"\brun_tests\s*\(\s*\[([^\]]*)\]")
_SYS_PATH_ADDED = re.compile(r"""\bsys\.path\.(?:append|insert)\s*\(\s*(?:0\s*,\s*)?["']([^"']+)["']\s*\)""")
# ``django test``'s options that take a value as the next word
_TAKES_VALUE = {"--settings", "--pythonpath", "--tag", "--exclude-tag", "-k", "-p", "--pattern", "-t"}
_TAKES_VALUE |= {"--top-level-directory", "--testrunner", "--verbosity", "-v"}


@dataclass(frozen=True)
class DjangoSuite:
    settings: str  # the settings module
    labels: tuple[str, ...]  # the directories its discovery starts from (none: the root)
    python_path: tuple[str, ...]  # directories the command puts on sys.path, relative to the root


def django_suite(root: Path, commands: list[list[str]]) -> DjangoSuite | None:
    """The suite of the first of ``commands`` that runs Django's test runner, where its settings module is a file of
    the repository's; else None."""
    environment = repo_config.test_setenv(root)
    setenv = environment.get(SETTINGS)
    path = _python_path(environment.get("PYTHONPATH", ""), root)
    for words in commands:
        found = _django_test(words, root, setenv, path) or _runner_script(words, root, setenv)
        if found is not None and _settings_file(root, found):
            return found
    return None


# Where a Django app's sdist keeps the settings its tests run with, when nothing it ships names them: a tests
# folder at the root or in the app's package (django-modeltranslation 0.20.6's ``modeltranslation/tests/``).
_SETTINGS_FILES = (
    *("test_settings.py", "test/settings.py", "tests/settings.py", "tests/test_settings.py"),
    *("*/tests/settings.py", "*/tests/test_settings.py"),
)
_SETTING = re.compile(r"^(?:INSTALLED_APPS|DATABASES|SECRET_KEY)\s*=", re.MULTILINE)
_USES_DJANGO_TESTS = re.compile(r"^\s*(?:from|import)\s+django\.test\b", re.MULTILINE)


def guessed(root: Path) -> DjangoSuite | None:
    """A guess, where no command or configuration says how the tests run: the one settings module of the usual
    places, when a test module beside it imports ``django.test`` (django-storages 1.14.6's sdist ships
    ``tests/settings.py`` and no tox.ini or pytest configuration: 186 errors, "settings are not configured"). It is
    imported by its name from the first folder up that is no package, which goes on ``sys.path``."""
    found = sorted({p for pattern in _SETTINGS_FILES for p in root.glob(pattern) if _is_settings(p)})
    if len(found) != 1 or not _tests_use_django(found[0].parent):
        return None
    top = found[0].parent
    while top != root and (top / "__init__.py").is_file():
        top = top.parent
    module = ".".join(found[0].relative_to(top).with_suffix("").parts)
    return DjangoSuite(module, (), () if top == root else (top.relative_to(root).as_posix(),))


def _is_settings(path: Path) -> bool:
    """Whether ``path`` is a settings module: one that sets what every project's settings set (django-appconf
    1.2.0's ``tests/settings.py`` is an app's own settings, beside its ``tests/test_settings.py``)."""
    return path.is_file() and bool(_SETTING.search(path.read_text(encoding="utf-8", errors="replace")))


def _tests_use_django(folder: Path) -> bool:
    return any(
        _USES_DJANGO_TESTS.search(p.read_text(encoding="utf-8", errors="replace")) for p in folder.glob("test*.py")
    )


def _python_path(value: str, root: Path) -> list[str]:
    """The directories of a ``PYTHONPATH`` the repository sets for its tests, relative to the root."""
    entries = [posixpath.relpath(p, root) if posixpath.isabs(p) else p for p in value.split(":") if p]
    return [found for p in entries if (found := repo_config.inside(p, root)) is not None]


def _django_test(words: list[str], root: Path, setenv: str | None, path: list[str]) -> DjangoSuite | None:
    """``python -m django test …``, ``django-admin test …`` or ``[python] manage.py test …``."""
    at = next((i for i in range(1, len(words)) if words[i] == "test" and _is_django(words[:i], root)), None)
    if at is None:
        return None
    options: dict[str, str] = {}
    labels: list[str] = []
    args = iter(words[at + 1 :])
    for word in args:
        name, equals, value = word.partition("=")
        if name in _TAKES_VALUE:
            options[name] = value if equals else next(args, "")
        elif not word.startswith("-") and (label := _label(word, root)) is not None:
            labels.append(label)
    manage = _manage_py(words[:at], root)
    settings = options.get("--settings") or setenv or (_settings_in(root / manage) if manage else None)
    python_path = [posixpath.dirname(manage)] if manage else []
    python_path += [p for p in [options.get("--pythonpath", "")] if p] + path
    return _suite(settings, labels, python_path, root)


def _is_django(words: list[str], root: Path) -> bool:
    """Whether ``words`` end in Django's command: ``-m django``, ``django-admin`` (django-formtools 2.7's Makefile
    runs ``coverage run `which django-admin` test``), or the repository's ``manage.py``."""
    script = posixpath.basename(words[-1].strip("`)"))
    return (
        words[-2:] == ["-m", "django"]
        or script in ("django-admin", "django-admin.py")
        or (_manage_py(words, root) is not None)
    )


def _manage_py(words: list[str], root: Path) -> str | None:
    """The repository's ``manage.py`` that ``words`` end in, relative to the root."""
    last = words[-1] if words else ""
    return _inside_file(last, root) if posixpath.basename(last) == "manage.py" else None


def _runner_script(words: list[str], root: Path, setenv: str | None) -> DjangoSuite | None:
    """A script of the repository's that runs Django's test runner (pwned-passwords-django 5.2.0's ``runtests.py``:
    ``os.environ["DJANGO_SETTINGS_MODULE"] = "test_settings"``, ``sys.path.append("tests")``, ``get_runner``),
    read from its source: its settings, the labels it runs and the directories it adds to ``sys.path``."""
    for word in words:
        script = _inside_file(word, root) if word.endswith(".py") else None
        if script is None:
            continue
        text = (root / script).read_text(encoding="utf-8", errors="replace")
        if not _RUNS_DJANGO_TESTS.search(text):
            continue
        here = posixpath.dirname(script)
        labels = [
            label
            for found in _RUN_TESTS_LABELS.findall(text)
            for name in re.findall(r"[\"']([^\"']+)[\"']", found)
            if (label := _label(posixpath.join(here, name), root)) is not None
        ]
        added = [posixpath.normpath(posixpath.join(here, p)) for p in _SYS_PATH_ADDED.findall(text)]
        settings = setenv or _settings_in(root / script)
        return _suite(settings, labels, [here, *added], root)
    return None


def _suite(settings: str | None, labels: list[str], python_path: list[str], root: Path) -> DjangoSuite | None:
    if not settings or not _MODULE.fullmatch(settings):
        return None
    kept = [p for p in dict.fromkeys(python_path) if p not in ("", ".") and (root / p).is_dir()]
    return DjangoSuite(settings, tuple(dict.fromkeys(labels)), tuple(kept))


def _settings_in(path: Path) -> str | None:
    try:
        found = _SETS_SETTINGS.search(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return found[1] if found else None


def _settings_file(root: Path, suite: DjangoSuite) -> bool:
    """Whether the settings module is a module of the repository's, found from the root or a directory the command
    puts on sys.path."""
    relative = suite.settings.replace(".", "/")
    bases = [root, *(root / p for p in suite.python_path)]
    return any((b / f"{relative}.py").is_file() or (b / relative / "__init__.py").is_file() for b in bases)


def _label(word: str, root: Path) -> str | None:
    """A test label as a directory of the repository's: a path (``tests``) or a dotted module (``app.tests``)."""
    for path in (word, word.replace(".", "/")):
        found = repo_config.inside(path, root)
        if found is not None and (root / found).is_dir():
            return found
    return None


def _inside_file(word: str, root: Path) -> str | None:
    found = repo_config.inside(word, root)
    return found if found is not None and (root / found).is_file() else None
