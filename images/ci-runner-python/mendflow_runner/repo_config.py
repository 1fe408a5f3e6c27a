"""Read what a repository declares: pyproject tables, pytest markers, mypy and coverage configuration."""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from mendflow_runner import makefile, precommit, task_runners, workflows

_INI_PYTEST = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
_TOML_PYTEST = ("pytest.toml", ".pytest.toml")  # pytest 9's, read before any other


class RepoConfigError(Exception):
    """The repository's own configuration cannot be read: the build cannot honour it, so it must not guess."""


def pyproject(root: Path) -> dict[str, Any]:
    return _toml(root / "pyproject.toml")


def tools(root: Path) -> dict[str, Any]:
    """pyproject.toml's ``[tool]`` table, with a ``pixi.toml`` manifest as its ``pixi`` table (the same keys)."""
    found = dict(pyproject(root).get("tool", {}))
    if (root / "pixi.toml").is_file():
        found["pixi"] = _toml(root / "pixi.toml")
    return found


def _toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RepoConfigError(f"{path.name} is not valid TOML: {exc}") from exc


def syncs_uv_lock(root: Path) -> bool:
    """Whether the repository's ``uv.lock`` is what its environment is synced from: it has one, and it describes
    its project (a ``[project]`` table) or some package. eval_type_backport 0.4.0 ships a lock of nothing beside a
    setup.cfg project, which uv does not manage: ``uv sync --extra tests`` (its tox's ``extras``) was refused,
    "Extra `tests` is not defined"; its tox installs the project with that extra."""
    lock = root / "uv.lock"
    if not lock.is_file():
        return False
    if "project" in pyproject(root):  # the usual case: no need to read a lock that may be large
        return True
    return _LOCKED_PACKAGE.search(lock.read_text(encoding="utf-8", errors="replace")) is not None


_LOCKED_PACKAGE = re.compile(r"^\[\[package\]\]", re.MULTILINE)


def _ini(path: Path) -> configparser.ConfigParser | None:
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    except OSError:  # as ConfigParser.read does: a file it cannot open is passed over, an empty configuration
        text = ""
    return _ini_text(text)


def _ini_text(text: str) -> configparser.ConfigParser | None:
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string(text)
    except configparser.Error:
        return None
    return cp


def _marker_names(entries: list[str]) -> set[str]:
    # "fast: quick tests" or "fast(arg): ..." → "fast"
    return {e.split(":")[0].split("(")[0].strip() for e in entries if e.strip()}


def declared_markers(root: Path) -> set[str]:
    tool = pyproject(root).get("tool", {})
    names: set[str] = set()
    for table in (tool.get("pytest", {}).get("ini_options", {}), tool.get("pytest", {})):
        markers = table.get("markers") if isinstance(table, dict) else None
        if isinstance(markers, list):
            names |= _marker_names([str(m) for m in markers])
    for filename, section in _INI_PYTEST:
        cp = _ini(root / filename)
        if cp is not None and cp.has_option(section, "markers"):
            names |= _marker_names(cp.get(section, "markers").splitlines())
    return names


def pytest_ini(root: Path) -> dict[str, object]:
    """The options of the file pytest takes its configuration from, in pytest's own order of precedence. pytest 9
    reads TOML of its own too, whose values are native (``addopts`` a list): ``pytest.toml``'s ``[pytest]`` and
    pyproject.toml's ``[tool.pytest]`` (pydyf 0.13.0's ``addopts = ['--cov', '--cov-fail-under=100']`` was not
    read, and pytest stopped at the blocked pytest-cov's options)."""
    for name in _TOML_PYTEST:
        if (root / name).is_file():
            own = _toml(root / name).get("pytest")
            return own if isinstance(own, dict) else {}
    for name in ("pytest.ini", ".pytest.ini"):
        cp = _ini(root / name)
        if cp is not None:
            return dict(cp.items("pytest")) if cp.has_section("pytest") else {}
    tool = pyproject(root).get("tool", {}).get("pytest")
    if isinstance(tool, dict) and isinstance(tool.get("ini_options"), dict):
        return dict(tool["ini_options"])
    if isinstance(tool, dict) and tool:
        return tool
    for filename, section in _INI_PYTEST[1:]:
        cp = _ini(root / filename)
        if cp is not None and cp.has_section(section):
            return dict(cp.items(section))
    return {}


def pytest_addopts(root: Path) -> list[str]:
    value = pytest_ini(root).get("addopts", "")
    return [str(v) for v in value] if isinstance(value, list) else shlex.split(str(value))


def pytest_required_plugins(root: Path) -> list[str]:
    """The pytest configuration's ``required_plugins``: distributions, each with its version specifier if any
    (pycountry 26.2.16's ``pytest-cov>=4.0.0``); pytest stops before collecting when one is not loaded."""
    value = pytest_ini(root).get("required_plugins", "")
    return [str(v) for v in value] if isinstance(value, list) else str(value).split()


# Options only a plugin defines, as (its module, its distribution): a configuration that sets one says its tests
# need that plugin, which an sdist may not declare (aiosignal 1.3.2's `asyncio_mode`, with `filterwarnings =
# error`: without pytest-asyncio, pytest stops at the unknown option).
_DJANGO = ("pytest_django", "pytest-django")
_RERUNS = ("pytest_rerunfailures", "pytest-rerunfailures")
_PLUGIN_OPTIONS = {
    "asyncio_mode": ("pytest_asyncio", "pytest-asyncio"),
    "asyncio_default_fixture_loop_scope": ("pytest_asyncio", "pytest-asyncio"),
    "timeout": ("pytest_timeout", "pytest-timeout"),
    "mock_use_standalone_module": ("pytest_mock", "pytest-mock"),
    **dict.fromkeys(("django_settings_module", "django_configuration", "django_find_project"), _DJANGO),
    **dict.fromkeys(("reruns", "reruns_delay"), _RERUNS),
}
# Command-line options only a plugin defines, in ``addopts`` (django-extensions 4.1's ``--nomigrations``, with
# ``DJANGO_SETTINGS_MODULE`` in its ini options: pytest stopped at the unknown option; ssh-python 1.2.0.post1's
# ``addopts = -v --durations=10 --reruns=5``, which no file it ships declares pytest-rerunfailures for).
_PLUGIN_FLAGS = {
    **dict.fromkeys(("--ds", "--dc", "--nomigrations", "--migrations", "--reuse-db", "--create-db"), _DJANGO),
    "--timeout": ("pytest_timeout", "pytest-timeout"),
    "--asyncio-mode": ("pytest_asyncio", "pytest-asyncio"),
    **dict.fromkeys(("--reruns", "--reruns-delay", "--only-rerun"), _RERUNS),
}


def configured_pytest_plugins(root: Path) -> dict[str, str]:
    """The plugins the pytest configuration's options (ini files' names in any case, as pytest-django's
    ``DJANGO_SETTINGS_MODULE``) and its ``addopts``' options belong to: module -> distribution."""
    options = [_PLUGIN_OPTIONS.get(option.lower()) for option in pytest_ini(root)]
    flags = [_PLUGIN_FLAGS.get(word.partition("=")[0]) for word in pytest_addopts(root)]
    return dict(found for found in [*options, *flags] if found is not None)


def configures_pytest(root: Path) -> bool:
    """Whether the repository configures pytest: an ini section pytest reads, or a conftest.py near the top."""
    tool = pyproject(root).get("tool", {}).get("pytest")
    if isinstance(tool, dict) or any((root / name).is_file() for name in (".pytest.ini", *_TOML_PYTEST)):
        return True
    for filename, section in _INI_PYTEST:
        cp = _ini(root / filename)
        if cp is not None and (filename == "pytest.ini" or cp.has_section(section)):
            return True
    return any(any(root.glob(pattern)) for pattern in ("conftest.py", "*/conftest.py", "*/*/conftest.py"))


def test_commands(root: Path) -> list[list[str]]:
    """The commands tox's ``[testenv]`` (see ``tox_config``) and noxfile.py's test sessions run, then those of the
    task runner's tasks named for tests (``task_runners``), then those of the Makefile's test targets
    (``makefile``), as words: tox's ``{toxinidir}`` becomes ``.``, ``{env:NAME}`` its ``setenv`` value,
    ``{envsitepackagesdir}/PACKAGE`` the package's source, and other substitutions (``{posargs}``,
    ``{envpython}``) and lines with a factor condition (``py38: …``) are left out, but those of an environment
    named for tests (``_tox_command_lines``), as are a noxfile's computed arguments but its names of paths
    (``_nox_runs``)."""
    setenv = tox_setenv(root)
    lines = [_installed_package(_env_values(line, setenv), root) for line in _tox_command_lines(root)]
    tasks = task_runners.commands_for_tests(tools(root), task_runners.names_a_test)
    made = [words for words in map(_tox_words, makefile.commands_for_tests(root)) if words]
    return [words for words in map(_tox_words, [*lines, *tasks]) if words] + _nox_runs(root) + made


def _tox_command_lines(root: Path) -> list[str]:
    """``[testenv] commands``' lines without a factor condition, then those whose condition holds for an environment
    of the envlist named for tests (clize 5.0.2's ``test: {posargs:python -m unittest}`` of ``test-{py39,py310}``)."""
    cp = tox_config(root)
    if cp is None or not cp.has_option("testenv", "commands"):
        return []
    text = re.sub(r"\\\n\s*", " ", _tox_value(cp, "testenv", "commands"))  # a line continued with a backslash
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    plain = [line for line in lines if not _FACTORED_COMMAND.match(line)]
    envs = _test_envs(cp)
    factored = [m for line in lines if _FACTORED_COMMAND.match(line) and (m := _FACTOR_LINE.match(line))]
    held = [m["value"].strip() for m in factored if any(tox_env_holds(m["condition"], env) for env in envs)]
    return plain + [line for line in held if line]


# A condition with braces (``py{38,39}: pytest``) has always been read as part of the command.
_FACTORED_COMMAND = re.compile(r"^[\w,.!-]+:\s")
_TEST_FACTORS = {"test", "tests", "unit", "pytest"}


def _test_envs(cp: configparser.ConfigParser) -> list[str]:
    """The environments of ``[tox] envlist`` (braces expanded) with a factor that names tests (``test-py310``)."""
    listed = _tox_value(cp, "tox", "envlist") if cp.has_option("tox", "envlist") else ""
    names = [e.strip() for part in listed.splitlines() for item in _top_level_split(part) for e in _expand_braces(item)]
    return [name for name in names if _TEST_FACTORS & set(name.split("-"))]


_ENV_REF = re.compile(r"\{env:(?P<name>[^{}:]+)(?::(?P<default>[^{}]*))?\}")


def tox_setenv(root: Path) -> dict[str, str]:
    """``[testenv] setenv``'s ``NAME=VALUE`` lines, ``{[section]key}`` substituted (hyperlink's ``PY_MODULE``)."""
    pairs = (line.partition("=") for line in _testenv_lines(root, "setenv"))
    return {name.strip(): value.strip() for name, eq, value in pairs if eq and re.fullmatch(r"\w+", name.strip())}


# The variables the job's own machinery sets, which a repository's ``setenv`` must not move: its venv, home, temp
# dir, bytecode, coverage data and installers.
_JOB_VARIABLES = {
    "PATH",
    "HOME",
    "TMPDIR",
    "VIRTUAL_ENV",
    "PYTHONHOME",
    "PYTHONPYCACHEPREFIX",
    "PYTHONDONTWRITEBYTECODE",
}
_JOB_VARIABLES |= {"COVERAGE_FILE", "COVERAGE_PROCESS_START", "COVERAGE_RCFILE", "LD_PRELOAD", "LD_LIBRARY_PATH"}
_JOB_PREFIXES = ("MENDFLOW_", "PIP_", "UV_")


def test_setenv(root: Path) -> dict[str, str]:
    """The environment the repository gives its test commands, as the tests' environment: its Makefile's
    exports, hatch's test environments' ``env-vars`` and, over them, tox's ``[testenv] setenv`` (javaproperties
    0.8.2's ``TZ=EST5EDT,M3.2.0,M11.1.0``: 52 of its tests expected that zone's times); tox's ``{toxinidir}`` is
    the repository's root, ``{env:NAME:DEFAULT}`` read as ``test_commands`` reads it. A value with another
    substitution (tox's ``{envtmpdir}``, hatch's ``{root}``) and the variables the job's machinery sets are
    left out."""
    setenv = tox_setenv(root)
    declared = {**makefile.exported(root), **task_runners.hatch_env_vars(pyproject(root).get("tool", {}))}
    for name, value in setenv.items():
        others = {k: v for k, v in setenv.items() if k != name}  # its own {env:NAME:DEFAULT} is the CI's: unset
        declared[name] = _env_values(value.replace("{toxinidir}", str(root)).replace("{tox_root}", str(root)), others)
    return {
        name: value
        for name, value in declared.items()
        if "{" not in value and name not in _JOB_VARIABLES and not name.startswith(_JOB_PREFIXES)
    }


def _env_values(line: str, setenv: dict[str, str]) -> str:
    """``{env:NAME}`` and ``{env:NAME:DEFAULT}`` as tox gives them in a CI that sets neither: ``setenv``'s value,
    else the default (hyperlink's ``{posargs:src/{env:PY_MODULE}}`` is ``src/hyperlink``)."""

    def value(found: re.Match[str]) -> str:
        return setenv.get(found["name"], found["default"] if found["default"] is not None else found[0])

    return _ENV_REF.sub(value, line)


_SITE_PACKAGES = re.compile(r"\{env_?site_?packages_?dir\}/([\w.-]+)")


def _installed_package(line: str, root: Path) -> str:
    """A package as tox installed it (glom's ``pytest --doctest-modules {envsitepackagesdir}/glom``) is the
    repository's own source of it, ``glom`` or ``src/glom``: its tests, not the whole tree's modules."""

    def source(found: re.Match[str]) -> str:
        return next((p for p in (found[1], f"src/{found[1]}") if (root / p).exists()), found[0])

    return _SITE_PACKAGES.sub(source, line)


def _tox_words(line: str) -> list[str]:
    try:
        # {posargs:DEFAULT} is DEFAULT when tox is given no arguments, as a CI runs it (ecdsa's src/ecdsa); hatch's
        # {args:DEFAULT} the same
        line = re.sub(r"\{(?:pos)?args:([^{}]*)\}", r"\1", line.replace("{toxinidir}", "."))
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    return [w for w in words if not (w.startswith("{") and w.endswith("}"))]


def _nox_runs(root: Path) -> list[list[str]]:
    """The words of each ``session.run``: its string literals and the noxfile's names of paths in the repository
    (``_noxfile_paths``)."""
    noxfile = _noxfile(root)
    paths = _noxfile_paths(noxfile)
    words = ((_word(arg, paths) for arg in args) for args in _nox_calls(noxfile, "run"))
    return [[w for w in run if w is not None] for run in words]


def _word(arg: ast.expr, paths: dict[str, str]) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return paths.get(arg.id) if isinstance(arg, ast.Name) else None


def _noxfile_paths(noxfile: ast.Module) -> dict[str, str]:
    """The noxfile's module-level names of paths in the repository, relative to it as nox runs there:
    ``ROOT = Path(__file__).parent`` is ``.``, ``REFERENCING = ROOT / "referencing"`` is ``referencing`` (the path
    referencing 0.37.0's test session runs pytest on, leaving out its ``suite/`` checkout's own tests)."""
    paths: dict[str, str] = {}
    for node in noxfile.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if (path := _repo_path(node.value, paths)) is not None:
            paths[node.targets[0].id] = path
    return paths


def _repo_path(node: ast.expr, paths: dict[str, str]) -> str | None:
    """What a path expression of the noxfile is, relative to it: a known name, ``Path(__file__).parent``, or
    either joined to a string with ``/``; None for anything else."""
    if isinstance(node, ast.Name):
        return paths.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "parent" and _is_this_file(node.value):
        return "."
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant):
        base = _repo_path(node.left, paths)
        if base is not None and isinstance(node.right.value, str):
            return posixpath.normpath(posixpath.join(base, node.right.value))
    return None


def _is_this_file(node: ast.expr) -> bool:
    """``Path(__file__)``, ``pathlib.Path(__file__)``, either ``.resolve()``-d or ``.absolute()``-d."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not node.args:
        return _is_this_file(node.func.value)
    named = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
    return (
        named == "Path" and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id == "__file__"
    )


def _nox_calls(noxfile: ast.Module, *methods: str) -> list[list[ast.expr]]:
    """The arguments of each ``session.<method>(...)`` call in the noxfile's test sessions."""
    return [
        call.args
        for session in _nox_test_sessions(noxfile)
        for call in ast.walk(session)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in methods
    ]


def _strings(args: list[ast.expr]) -> list[str]:
    """The string literals among ``args``: what a computed argument would be is not guessed."""
    return [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def _nox_test_sessions(noxfile: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """noxfile.py's sessions named for tests, or all when none is."""
    sessions = [n for n in noxfile.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return [n for n in sessions if for_tests(n.name) or n.name in ("tests", "unit")] or sessions


def _noxfile(root: Path) -> ast.Module:
    """noxfile.py read with ``ast`` (the noxfile is never run); an empty module where there is none to read."""
    path = root / "noxfile.py"
    try:
        return ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else ast.Module(body=[], type_ignores=[])
    except (SyntaxError, UnicodeDecodeError):
        return ast.Module(body=[], type_ignores=[])


def mypy_config(root: Path) -> dict[str, str] | None:
    """The repo's mypy options (only ``files`` matters to us), or None when it does not configure mypy."""
    tool = pyproject(root).get("tool", {})
    if "mypy" in tool:
        files = tool["mypy"].get("files", "")
        return {"files": ",".join(files) if isinstance(files, list) else str(files)}
    for filename in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        cp = _ini(root / filename)
        if cp is not None and cp.has_section("mypy"):
            return {"files": cp.get("mypy", "files", fallback="")}
    return None


def has_coverage_config(root: Path) -> bool:
    if "coverage" in pyproject(root).get("tool", {}) or (root / ".coveragerc").is_file():
        return True
    for filename in ("setup.cfg", "tox.ini"):
        cp = _ini(root / filename)
        if cp is not None and any(s.startswith("coverage:") for s in cp.sections()):
            return True
    return False


def coverage_run_section(root: Path) -> dict[str, Any]:
    """coverage.py's ``[run]`` section, from the file it takes its configuration from (its own order:
    ``.coveragerc``, ``setup.cfg``, ``tox.ini``, ``pyproject.toml``)."""
    rc = _ini(root / ".coveragerc")
    if rc is not None:  # coverage.py reads an existing .coveragerc and nothing else
        return dict(rc.items("run", raw=True)) if rc.has_section("run") else {}
    for filename in ("setup.cfg", "tox.ini"):
        cp = _ini(root / filename)
        if cp is not None and any(s.startswith("coverage:") for s in cp.sections()):
            return dict(cp.items("coverage:run", raw=True)) if cp.has_section("coverage:run") else {}
    run = pyproject(root).get("tool", {}).get("coverage", {}).get("run", {})
    return run if isinstance(run, dict) else {}


def coverage_plugins(root: Path) -> list[str]:
    """The plugin modules coverage.py's configuration loads (pycodestyle's ``covdefaults``): a run without
    them fails, and a repository declares them only in its CI's own requirements, which its sdist may lack."""
    names = _coverage_list(coverage_run_section(root).get("plugins", []))
    return [n for n in names if re.fullmatch(r"[A-Za-z_][\w.]*", n)]


def _coverage_list(value: Any) -> list[str]:
    """A coverage.py option that holds several values, as its INI files write one (comma- or line-separated) or
    its pyproject.toml (a list)."""
    words = re.split(r"[,\s]+", value) if isinstance(value, str) else [str(v).strip() for v in value or []]
    return [w for w in words if w]


def coverage_chooses_files(root: Path) -> bool:
    """Whether the repo's coverage configuration says which files are measured: ``include`` or ``source_pkgs``,
    or a ``source`` naming something the tree has. A ``source`` naming only what it has not measures nothing
    (orderly-set 5.5.0's ``orderly_set.py``, a module since made a package, which its CI's ``--cov`` overrides)."""
    run = coverage_run_section(root)
    if run.keys() & {"include", "source_pkgs"}:
        return True
    return any(_in_tree(root, source) for source in _coverage_list(run.get("source", [])))


def _in_tree(root: Path, source: str) -> bool:
    """Whether a coverage ``source`` (a directory, or an importable name) is in the tree, flat or under ``src``."""
    if (root / source).exists():
        return True
    module = Path(*source.split("."))
    return any(
        (base / module).is_dir() or (base / module).with_suffix(".py").is_file() for base in (root, root / "src")
    )


def build_backend_dirs(root: Path) -> list[str]:
    """The in-tree build backend's directories (``[build-system] backend-path``, charset-normalizer's
    ``_build_hook``), as relative paths. The repository's root and ``src`` are left out: a backend that builds
    itself from there (flit-core's ``.``, hatchling's ``src``) is the project's own code."""
    paths = pyproject(root).get("build-system", {}).get("backend-path", [])
    found = [Path(p).as_posix() for p in paths if isinstance(p, str)] if isinstance(paths, list) else []
    return [p for p in found if p not in (".", "src") and not Path(p).is_absolute() and ".." not in Path(p).parts]


# What a PEP 517 frontend builds with when pyproject.toml names no build system (pip's and build's default).
_DEFAULT_BUILD_REQUIRES = ["setuptools>=40.8.0"]


def build_requires(root: Path) -> list[str]:
    """The project's ``[build-system] requires``, or the frontends' default when it declares none."""
    requires = pyproject(root).get("build-system", {}).get("requires")
    if not isinstance(requires, list):
        return list(_DEFAULT_BUILD_REQUIRES)
    return [r for r in requires if isinstance(r, str)]


def rebuilt_on_import(root: Path) -> str | None:
    """The project's name where its editable install builds its extensions again when it is imported, with the
    build tools it was installed with: meson-python's (dwave-samplers 1.8.0: built in uv's isolated environment,
    which was gone when the tests imported it, each of its 18 test files stopped at "No such file or directory:
    '…/builds-v0/.tmpZPaOep/bin/ninja'"). Such a project is built without isolation, as meson-python's guide
    says, from build tools installed in the venv itself."""
    data = pyproject(root)
    if data.get("build-system", {}).get("build-backend") != "mesonpy":
        return None
    name = data.get("project", {}).get("name")
    return normalised_name(name) if isinstance(name, str) else None


RUST_BACKENDS = ("maturin", "setuptools-rust")


def rust_build_backend(root: Path) -> str | None:
    """The Rust extension builder the project's ``[build-system] requires`` names (fastwarc 2.0.0's maturin), if
    any: building the project then takes cargo and crates.io."""
    return next((name for r in build_requires(root) if (name := project_name(r)) in RUST_BACKENDS), None)


def is_installable(root: Path) -> bool:
    """Whether the repository is a project pip can install: PEP 621, poetry, setup.py, or setup.cfg with a
    build system."""
    data = pyproject(root)
    if "project" in data or "poetry" in data.get("tool", {}) or (root / "setup.py").is_file():
        return True
    cfg = _ini(root / "setup.cfg")
    return "build-system" in data and cfg is not None and cfg.has_section("metadata")


# Groups and extras a repo's test run needs: its tests', its development and type-checking tools (mypy needs the
# stubs the repo pins), and what its CI installs (the ``ci`` group of copier-uv's projects, mkdocstrings-python
# 2.0.11's among them, holds pytest and what the tests import). Never docs, release, publish or benchmark ones:
# the tests do not need them, and their pins are the ones that fail to install.
_FOR_TESTS = re.compile(
    r"^(?:.*test.*|dev|devel|develop|development|lint|linting|typing|types|mypy|check|checks|qa|ci)$"
)


# Extras that are no feature of the project's: its documentation's, release's and benchmarks' tools.
_NOT_A_FEATURE = re.compile(r"^(?:.*docs?|documentation|sphinx|release|publish|deploy|dist|build|bench\w*)$")


def for_tests(name: str) -> bool:
    """Whether a dependency group or extra of this name is one a test run installs: not the documentation's
    tests' (parver 1.0.1's ``docstest``: doc8, and sphinx for its docs)."""
    name = normalised_name(name)
    return bool(_FOR_TESTS.match(name)) and not name.startswith("doc")


def wanted_extras(root: Path, python: tuple[int, int]) -> list[str]:
    """The project's extras a test run installs (PEP 621's, poetry's, or setup.cfg's ``extras_require``): those
    named for tests, and those tox.ini's test environment (pyparsing's ``diagrams``) or hatch's install, by its
    ``extras``/``features`` or by its own commands."""
    tool = pyproject(root).get("tool", {})
    tox = {*_tox_names(root, "extras", python), *commanded_extras(root, python), *task_runners.hatch_features(tool)}
    return sorted(e for e in _extras(root) if for_tests(e) or e in tox or ALL_EXTRAS in tox)


def feature_extras(root: Path) -> list[str]:
    """The extras that are features of the project (not its docs', release's or benchmarks' tools)."""
    return sorted(e for e in _extras(root) if not _NOT_A_FEATURE.match(normalised_name(e)))


def normalised_name(name: str) -> str:
    """A project's, group's or extra's name as PEP 503 and 685 compare them: lower case, each run of ``-_.`` one
    ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_name(requirement: str) -> str:
    """The normalised project name a requirement string starts with (``mypy==1.10`` → ``mypy``)."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return normalised_name(m[1]) if m else requirement


def _extras(root: Path) -> set[str]:
    """Every extra the project declares."""
    data = pyproject(root)
    names = set(data.get("project", {}).get("optional-dependencies", {}) or {})
    names |= set(data.get("tool", {}).get("poetry", {}).get("extras", {}) or {})
    cfg = _ini(root / "setup.cfg")
    if cfg is not None and cfg.has_section("options.extras_require"):
        names |= set(cfg.options("options.extras_require"))
    return names | _setup_py_extras(root) | _pkg_info_extras(root)


def _setup_py_keywords(root: Path) -> dict[str, ast.expr]:
    """The keywords of setup.py's ``setup(...)`` call, a keyword given by a module-level name as what that name
    is assigned. Read with ``ast``: setup.py is never run."""
    try:
        tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for call in ast.walk(tree):
        name = getattr(call.func, "id", getattr(call.func, "attr", "")) if isinstance(call, ast.Call) else ""
        if name == "setup" and isinstance(call, ast.Call):
            return {
                k.arg: assigned.get(k.value.id, k.value) if isinstance(k.value, ast.Name) else k.value
                for k in call.keywords
                if k.arg
            }
    return {}


def _setup_py_extras(root: Path) -> set[str]:
    """The extras setup.py's ``extras_require`` names (zope.interface's ``test``), when it is a dict literal. A key
    may add a marker to an extra's conditional part, ``name:marker`` (jupyter-contrib-core 0.4.2's
    ``'testing_utils:python_version == "2.7"'``): the extra is ``name``."""
    extras = _setup_py_keywords(root).get("extras_require")
    keys = extras.keys if isinstance(extras, ast.Dict) else []
    return {k.value.split(":", 1)[0].strip() for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _pkg_info_extras(root: Path) -> set[str]:
    """The extras an sdist's PKG-INFO declares (``Provides-Extra``), whatever computed them."""
    try:
        text = (root / "PKG-INFO").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    header = text.split("\n\n", 1)[0]
    return {line.split(":", 1)[1].strip() for line in header.splitlines() if line.startswith("Provides-Extra:")}


def setuptools_tests_require(root: Path) -> list[str]:
    """setuptools' ``tests_require`` (its old place for test dependencies): setup.py's, when it is a list of plain
    requirement strings (pyrsistent's hypothesis), and setup.cfg's ``[options]`` one (makefun 1.16.0 declares
    pytest-asyncio there alone)."""
    listed = _setup_py_keywords(root).get("tests_require")
    found = _plain_requirements(listed.elts) if isinstance(listed, ast.List | ast.Tuple) else []
    cfg = _ini(root / "setup.cfg")
    if cfg is not None and cfg.has_option("options", "tests_require"):
        found += [line.split(" #")[0].strip() for line in cfg.get("options", "tests_require").splitlines()]
    return sorted({requirement for requirement in found if requirement and "/" not in requirement})


def setuptools_test_suite(root: Path) -> str | None:
    """The dotted name setuptools' ``test_suite`` gives ``python setup.py test`` (setup.py's, read with ``ast``, or
    setup.cfg's ``[options]``); None where there is none, or where setup.cfg's ``[aliases]`` makes ``test`` run
    pytest instead (pytest-runner's ``test = pytest``)."""
    cfg = _ini(root / "setup.cfg")
    if cfg is not None and "pytest" in cfg.get("aliases", "test", fallback=""):
        return None
    named = _setup_py_keywords(root).get("test_suite")
    if isinstance(named, ast.Constant) and isinstance(named.value, str):
        return named.value.strip() or None
    return (cfg.get("options", "test_suite", fallback="").strip() or None) if cfg is not None else None


def wanted_groups(root: Path, python: tuple[int, int]) -> list[str]:
    """The PEP 735 dependency groups a test run needs (see ``for_tests``), and those tox's test environment
    installs (tox 4.22's ``dependency_groups``: lazy-object-proxy 1.13.0's ``benchmark``, whose pytest-benchmark
    its tests use) or its test commands name (``uv run --group``: ``commanded_extras``)."""
    groups = pyproject(root).get("dependency-groups", {})
    tox = {*_tox_names(root, "dependency_groups", python), *commanded_extras(root, python)}
    return sorted(g for g in groups if for_tests(g) or g in tox) if isinstance(groups, dict) else []


def uv_default_groups(root: Path) -> list[str]:
    """uv's ``[tool.uv] default-groups``, which ``uv sync`` and ``uv run`` install, so the repository's own test
    run has them (mkdocstrings-python 2.0.11's ``docs``: its tests configure mkdocs-material's theme); ``"all"``:
    every group."""
    named = pyproject(root).get("tool", {}).get("uv", {}).get("default-groups")
    groups = pyproject(root).get("dependency-groups", {})
    if named == "all" and isinstance(groups, dict):
        return sorted(groups)
    return [str(g) for g in named] if isinstance(named, list) else []


def uv_sources_outside(root: Path) -> dict[str, str]:
    """uv's ``[tool.uv.sources]`` whose ``path`` the tree lacks: package -> path. A monorepo's sdist names its
    siblings so (langchain-ollama 1.1.0's ``langchain-core = { path = "../../core", editable = true }``,
    azure-keyvault-certificates 4.12.0's ``path = "../../core/azure-core"``), which its own CI has beside it."""
    sources = pyproject(root).get("tool", {}).get("uv", {}).get("sources")
    if not isinstance(sources, dict):
        return {}
    found = {}
    for name, source in sources.items():
        for each in source if isinstance(source, list) else [source]:  # a list: one source per marker
            path = each.get("path") if isinstance(each, dict) else None
            if isinstance(path, str) and not (root / path).exists():
                found[str(name)] = path
    return found


def uv_dev_dependencies(root: Path) -> list[str]:
    """uv's ``[tool.uv] dev-dependencies``, the ``dev`` group of before PEP 735, which ``uv sync`` installs by
    default (litestar-htmx 0.5.0's tests import litestar from it)."""
    dev = pyproject(root).get("tool", {}).get("uv", {}).get("dev-dependencies")
    return [str(r) for r in dev] if isinstance(dev, list) else []


def optional_projects(root: Path) -> dict[tuple[str, str], list[str]]:
    """The projects each dependency group and each PEP 621 extra names itself: ("group" or "extra", its name) ->
    normalised project names. Not the documentation's, release's or benchmarks' (``_NOT_A_FEATURE``)."""
    data = pyproject(root)
    found: dict[tuple[str, str], list[str]] = {}
    for kind, table in (
        ("group", data.get("dependency-groups")),
        ("extra", data.get("project", {}).get("optional-dependencies")),
    ):
        for name, entries in table.items() if isinstance(table, dict) else ():
            if not _NOT_A_FEATURE.match(normalised_name(name)) and isinstance(entries, list):
                found[kind, name] = [project_name(e) for e in entries if isinstance(e, str)]
    return found


def groups_naming(root: Path, project: str, groups: list[str]) -> list[str]:
    """Those of ``groups`` whose own requirements name ``project`` (not through a group they include)."""
    declared = pyproject(root).get("dependency-groups", {})
    wanted = normalised_name(project)

    def names(entry: object) -> bool:
        return isinstance(entry, str) and project_name(entry) == wanted

    return [g for g in groups if isinstance(declared, dict) and any(map(names, declared.get(g) or []))]


def uv_group_pythons(root: Path, group: str) -> list[str]:
    """The ``requires-python`` uv's ``[tool.uv.dependency-groups]`` gives ``group`` and each group it includes
    (``{include-group = ...}``): uv refuses a group one of them excludes the interpreter from (parver 1.0.1's
    ``docstest`` includes ``docs``, for Python 3.12 and later)."""
    data = pyproject(root)
    groups, settings = data.get("dependency-groups", {}), data.get("tool", {}).get("uv", {}).get("dependency-groups")
    if not isinstance(groups, dict) or not isinstance(settings, dict):
        return []
    seen, todo = set(), [group]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        entries = groups.get(name)
        todo += [e["include-group"] for e in entries or [] if isinstance(e, dict) and "include-group" in e]
    found = [settings.get(name, {}).get("requires-python") for name in sorted(seen)]
    return [spec for spec in found if isinstance(spec, str)]


_REQUIREMENTS = re.compile(
    r"^(?:requirements(?:[-_.]?(?:test|tests|testing|dev|develop|ci))?|(?:test|tests|dev)[-_]requirements)\.(?:txt|in)$"
)


def requirement_files(root: Path) -> list[Path]:
    """``requirements.txt`` and its test and development siblings (``requirements-test.txt``,
    ``requirements/dev.txt``, ``test-requirements.txt``, and the test folder's own ``tests/requirements.txt``,
    as packaging and pyparsing ship it), never docs or release ones; a ``.txt`` wins over the ``.in`` it was
    compiled from."""
    found = [p for where in (root, root / "tests", root / "test") for p in where.glob("*requirements*.*")]
    found = [p for p in found if _REQUIREMENTS.match(p.name)]
    folder = root / "requirements"
    if folder.is_dir():
        found += [p for p in folder.glob("*.*") if re.match(r"^(?:base|main|test\w*|dev\w*|ci)\.(?:txt|in)$", p.name)]
    txt = {p.with_suffix("") for p in found if p.suffix == ".txt"}
    return sorted(p for p in found if p.suffix == ".txt" or p.with_suffix("") not in txt)


def nox_deps(root: Path) -> list[str]:
    """What ``noxfile.py``'s test sessions ``session.install`` by name (sessions named for tests, or any when
    none is): plain requirements only; ``.``, ``-e``/``-r`` and computed arguments are left out (the project and
    its requirement files are installed on their own). Read with ``ast``: the noxfile is never run."""
    return sorted({req for args in _nox_calls(_noxfile(root), "install") for req in _plain_requirements(args)})


# pip's install options whose value is the next argument: never a requirement (stamina 26.1.0's noxfile installs
# "--group", "tests"; "tests" was installed as a package).
_VALUED_OPTIONS = frozenset((
    "-r", "-c", "-e", "-i", "-f", "-t", "-C", "--requirement", "--constraint", "--editable", "--group", "--index-url",
    "--extra-index-url", "--find-links", "--target", "--prefix", "--root", "--platform", "--python-version",
    "--implementation", "--abi", "--only-binary", "--no-binary", "--upgrade-strategy", "--config-settings",
))  # fmt: skip


def _plain_requirements(args: list[ast.expr]) -> list[str]:
    out, skip = [], False
    for arg in args:
        value = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
        if skip or value is None:
            skip = False
            continue
        if value in _VALUED_OPTIONS:
            skip = True
        elif not value.startswith(("-", ".")) and "/" not in value:
            out.append(value)
    return out


def hatch_deps(root: Path) -> list[str]:
    """What hatch's test environments add to the project (``task_runners.hatch_dependencies``)."""
    return task_runners.hatch_dependencies(pyproject(root).get("tool", {}))


def pixi_deps(root: Path) -> dict[str, list[str]]:
    """What the features of pixi's test environment add, per feature (``task_runners.pixi_requirements``)."""
    return task_runners.pixi_requirements(tools(root))


def pdm_dev_deps(root: Path) -> list[str]:
    """``[tool.pdm.dev-dependencies]`` of the groups a test run needs (pdm's own dev groups, PEP 508 strings); an
    editable path entry (``-e file:///…``) is left out."""
    groups = pyproject(root).get("tool", {}).get("pdm", {}).get("dev-dependencies", {})
    if not isinstance(groups, dict):
        return []
    found = [str(r) for name, reqs in groups.items() if for_tests(name) and isinstance(reqs, list) for r in reqs]
    return sorted({r for r in found if not r.startswith("-")})


def pipfile_deps(root: Path) -> list[str]:
    """Pipfile's ``[packages]`` and ``[dev-packages]``, as ``pipenv install --dev`` installs them for the tests, as
    PEP 508 strings; a git, path or file entry is left out (the project itself is installed on its own)."""
    path = root / "Pipfile"
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RepoConfigError(f"Pipfile is not valid TOML: {exc}") from exc
    found = []
    for section in ("packages", "dev-packages"):
        entries = data.get(section)
        for name, spec in entries.items() if isinstance(entries, dict) else ():
            if requirement := pipfile_requirement(str(name), spec):
                found.append(requirement)
    return sorted(set(found))


def pipfile_requirement(name: str, spec: object) -> str | None:
    """``name = "*"``, ``name = ">=1.2"`` or ``name = {version = "...", extras = [...], markers = "..."}`` (a
    Pipfile's entry, or Pipfile.lock's) as ``name[extras]version ; marker``; None for a git, path or file one."""
    if isinstance(spec, str):
        spec = {"version": spec}
    if not isinstance(spec, dict) or spec.keys() & {"git", "hg", "svn", "path", "file", "editable"}:
        return None
    version = str(spec.get("version", "*")).strip()
    extras, marker = spec.get("extras"), spec.get("markers")
    wanted = f"[{','.join(map(str, extras))}]" if isinstance(extras, list) and extras else ""
    when = f" ; {marker}" if isinstance(marker, str) and marker.strip() else ""
    return f"{name}{wanted}{'' if version == '*' else version}{when}"


def tox_deps(root: Path, python: tuple[int, int]) -> list[str]:
    """The ``deps`` of tox's ``[testenv]`` (see ``tox_config``) for this interpreter's environment (what tox
    installs for the tests), ``{[section]key}`` substitutions made: plain requirements only; a ``-r`` file or
    another ``{...}`` substitution is left out (the requirement files are read on their own). A line with a
    factor condition counts when it holds there (``tox_env_holds``)."""
    lines = [line.split("#", 1)[0].strip() for line in _testenv_lines(root, "deps")]
    found = [_for_env(line, python) for line in lines]
    return [v for v in found if v and not v.startswith("-") and "{" not in v and "://" not in v]


def _tox_names(root: Path, key: str, python: tuple[int, int]) -> list[str]:
    """The names tox's ``[testenv]`` lists under ``key`` (``extras``, ``dependency_groups``) for this
    interpreter's environment; a ``{...}`` substitution is left out."""
    lines = [_for_env(line.split("#", 1)[0], python) for line in _testenv_lines(root, key)]
    return [e for line in lines if "{" not in line for e in re.split(r"[,\s]+", line) if e]


ALL_EXTRAS = ":all"  # pdm's name for every group; what ``--all-extras`` says too
_EXTRA_OPTIONS = {"-G", "--group", "-E", "--extras", "--extra"}  # pdm's, poetry's, uv's
_PIP_EXTRAS = re.compile(r"^\.?/?\[(?P<names>[^\]]+)\]$")  # pip install -e .[yaml,test]


def commanded_extras(root: Path, python: tuple[int, int]) -> set[str]:
    """The extras and groups the test environment's own install commands name (cattrs' ``commands_pre = pdm
    sync -G :all,test``; poetry's ``-E``/``--all-extras``, uv's ``--extra``, pip's ``.[a,b]``), and those a
    noxfile's test sessions install (deepdiff 9.1.0's ``session.install(".[cli,dev,static,test]")``), the test
    tasks of its task runner (``task_runners``) run, and the test jobs of its GitHub workflows (``workflows``)."""
    lines = [_for_env(line, python) for key in ("commands_pre", "commands") for line in _testenv_lines(root, key)]
    lines += task_runners.commands_for_tests(tools(root), for_tests)
    lines += workflows.installs_for_tests(root)
    found: set[str] = set()
    for line in lines:
        try:
            found |= _extras_named(shlex.split(line, comments=True))
        except ValueError:
            continue
    for args in _nox_calls(_noxfile(root), "install", "run"):
        found |= _extras_named(_strings(args))
    return found


def _extras_named(words: list[str]) -> set[str]:
    found: set[str] = set()
    args = iter(words)
    for word in args:
        name, eq, value = word.partition("=")
        if name in _EXTRA_OPTIONS:
            found |= {v for v in re.split(r"[,\s]+", value if eq else next(args, "")) if v}
        elif word == "--all-extras":
            found.add(ALL_EXTRAS)
        elif pip := _PIP_EXTRAS.match(word):
            found |= {v.strip() for v in pip["names"].split(",") if v.strip()}
    return found


def _testenv_lines(root: Path, key: str) -> list[str]:
    cp = tox_config(root)
    return _tox_value(cp, "testenv", key).splitlines() if cp is not None and cp.has_option("testenv", key) else []


def tox_config(root: Path) -> configparser.ConfigParser | None:
    """tox's configuration, from the first place tox 4 looks for it: ``tox.ini``, ``setup.cfg`` when it has a
    ``[tox:tox]`` section, then ``pyproject.toml``'s ``[tool.tox] legacy_tox_ini`` string (tqdm's). The test
    environment is ``[testenv]`` in each; tox 4's native TOML tables (``[tool.tox.env_run_base]``) are not read."""
    cp = _ini(root / "tox.ini")
    if cp is not None:
        return cp
    cfg = _ini(root / "setup.cfg")
    if cfg is not None and cfg.has_section("tox:tox"):
        return cfg
    tox = pyproject(root).get("tool", {}).get("tox", {})
    legacy = tox.get("legacy_tox_ini") if isinstance(tox, dict) else None
    return _ini_text(legacy) if isinstance(legacy, str) else None


# tox's section substitution: ``{[core]deps}`` is the ``deps`` of section ``[core]`` (tqdm's test deps).
_SECTION_REF = re.compile(r"\{\[(?P<section>[^\[\]{}]+)\](?P<key>[^{}\s:]+)\}")
_SUBSTITUTION_DEPTH = 10  # a reference that refers back to itself stops here, left as written


def _tox_value(cp: configparser.ConfigParser, section: str, key: str, depth: int = 0) -> str:
    """``key`` of ``section`` with its ``{[section]key}`` substitutions made as tox makes them: the referenced
    value, itself substituted; one that names no value is left as written (and so left out by the callers)."""
    value = cp.get(section, key)
    if depth >= _SUBSTITUTION_DEPTH:
        return value

    def referenced(m: re.Match[str]) -> str:
        if not cp.has_option(m["section"], m["key"]):
            return m[0]
        return _tox_value(cp, m["section"], m["key"], depth + 1)

    return _SECTION_REF.sub(referenced, value)


_FACTOR_LINE = re.compile(r"^\s*(?P<condition>[\w{},.!-]+):\s*(?P<value>.*)$")


def _for_env(line: str, python: tuple[int, int]) -> str:
    """The line's value when it applies to this interpreter's tox environment, else ''."""
    m = _FACTOR_LINE.match(line)
    if m is None:
        return line.strip()
    major, minor = python
    envs = (f"py{major}{minor}", f"py{major}", "py")  # `tox -e py311`, and the generic names tox runs by default
    return m["value"].strip() if any(tox_env_holds(m["condition"], env) for env in envs) else ""


def tox_env_holds(condition: str, env: str) -> bool:
    """Whether tox's factor condition holds for environment ``env``: ``a,b`` any of, ``a-b`` all of, ``!a`` not
    ``a``, and ``py{38,311}`` the choices in braces (tox 4's rules, so that ``py{27,311}: hypothesis`` is a
    dependency of ``py311``)."""
    factors = set(env.split("-"))
    for alternative in _top_level_split(condition):
        for expanded in _expand_braces(alternative):
            parts = [p for p in expanded.split("-") if p]
            if parts and all((p[1:] not in factors) if p.startswith("!") else (p in factors) for p in parts):
                return True
    return False


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside braces."""
    parts, depth, current = [], 0, list[str]()
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    return [*parts, "".join(current)]


def _expand_braces(text: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", text)
    if m is None:
        return [text]
    return [
        x for choice in m[1].split(",") for x in _expand_braces(text[: m.start()] + choice.strip() + text[m.end() :])
    ]


def configures_ruff(root: Path) -> bool:
    """Whether the repository's own CI runs ruff: a ruff config, or a pre-commit hook (with ruff's defaults)."""
    return has_ruff_config(root) or bool(precommit.pinned(root, "ruff"))


def formats_with_ruff(root: Path) -> bool:
    """Whether the repository's own CI checks its format with ``ruff format``: its pre-commit runs ruff's format
    hook, or it configures ruff and no other formatter. A repo formatted by black (its pre-commit hook or
    ``[tool.black]``) is never held to ruff's format."""
    ids = precommit.hook_ids(root)
    if "ruff-format" in ids:
        return True
    if {"black", "black-jupyter"} & ids or "black" in pyproject(root).get("tool", {}):
        return False
    return has_ruff_config(root)


def has_ruff_config(root: Path) -> bool:
    """Whether the team chose its ruff rules and format (else the runner holds it to bug-level rules only)."""
    if (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        return True
    return "ruff" in pyproject(root).get("tool", {})


def inside(path: str, root: Path) -> str | None:
    """``path`` normalised (``./tests/`` → ``tests``) when it names a file or folder inside the repository."""
    normal = posixpath.normpath(path.replace("\\", "/"))
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        return None
    return normal if (root / normal).exists() else None
