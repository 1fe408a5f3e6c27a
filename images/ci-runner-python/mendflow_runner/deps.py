"""Install the repository's dependencies as it declares them into a fresh venv with uv.

What is installed: the project with the extras and dependency groups its tests need (never docs, release or
publish ones: ``repo_config.for_tests``), frozen to its lockfile when it has one (``uv.lock`` synced; a
``poetry.lock``, ``pdm.lock`` or ``Pipfile.lock`` as exact pins), its requirement files for tests, tox's and
nox's test deps, Pipfile's packages when it has no lock, the plugins its pytest configuration requires; then
the linters its CI runs, at the versions it pins (``precommit``); then, when the tests can build the project,
its build requirements for pip offline.
A failure says whether trying again can help: a resolution conflict, a missing package or a build error
cannot (deterministic), a network error or a server's 5xx can (transient).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import interpreter, lockfiles, poetry, precommit, repo_config
from .asked_plugins import ALTERNATIVES, OLD_SETUPTOOLS, asked_plugins, imported_unconditionally
from .proc import Log, StepResult, confined, run

# Tools the runner itself drives inside the repo's venv; installed only when the repo did not bring them.
RUNNER_TOOLS = {"pytest": "pytest", "coverage": "coverage[toml]>=7.5"}
# meson-python asks for ninja at build time, only where none is on the PATH (its get_requires_for_build_wheel).
MESON_BUILD_TOOLS = ["ninja"]
# uv's words for a failure that may pass when tried again: the index or the network, not the repository.
# A word or an HTTP status alone is not enough: a build backend's traceback says "line 504", and a resolution
# names "pytest-timeout" (nameko 2.14.1's wrapt build failure was taken for a network error), and a traceback
# quotes code: ``timeout=timeout`` (pyspnego 0.12.4's gssapi build, which found no krb5-config, was tried again).
_TRANSIENT = re.compile(
    r"error sending request|connection (?:refused|reset|closed)|(?<![\w.=-])timed? ?out(?![\w.=(-])|dns error"
    r"|failed to lookup address|tcp connect error|temporary failure|(?:status|error|code)\W{1,3}(?:429|50[0234])\b"
    r"|too many requests|service unavailable|bad gateway|gateway timeout|internal server error",
    re.IGNORECASE,
)
# Lines of uv's output that say what went wrong (its hints and context lines come after).
# uv draws its error tree with U+00D7 and U+2570 U+2500 U+25B6.
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b")
_TREE = "\u00d7\u2570\u2500\u25b6"
_CAUSE = re.compile(rf"^(?:error:|\s*[{_TREE}]|\s*Because\b|\s*Caused by:)", re.MULTILINE)


# uv's words where the project pins another uv (``[tool.uv] required-version``)
_REQUIRED_UV = re.compile(r"Required uv version `([^`]+)` does not match the running version")
# A build backend's words where setup.py imports what setuptools 82 dropped, and the setuptools that still has it
NEEDS_PKG_RESOURCES = "No module named 'pkg_resources'"


class DependencyError(Exception):
    def __init__(self, step: StepResult, message: str | None = None, transient: bool | None = None) -> None:
        self.step = step
        self.transient = (step.timed_out or bool(_TRANSIENT.search(step.stderr))) if transient is None else transient
        super().__init__(message or f"`{' '.join(step.argv[:3])}` {cause(step)}")


def cause(step: StepResult) -> str:
    """uv's own words for the failure: its error and cause lines (``No solution found …``, ``Because …``), the
    build backend's error line when one failed, and which requirement brought the package in; not its other
    hints."""
    if step.timed_out:
        return "timed out"
    lines = step.stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if _CAUSE.match(line)), None)
    if start is None:
        return step.last_stderr_line()[:600]
    said: list[str] = []
    backend: list[tuple[str, str]] = []  # a build backend's own output, which uv quotes under "[stdout]"/"[stderr]"
    stream, brought_in = "", ""
    for line in lines[start:]:
        text = line.strip().strip(_TREE).strip()
        if text.startswith("hint:"):  # the first hint; when it says so, why (keyring[type] → … → pycairo)
            brought_in = text.removeprefix("hint:").strip() if _BROUGHT_IN in text else ""
            break
        if text in ("[stdout]", "[stderr]"):
            stream = text
        elif stream and text:
            backend.append((stream, text))
        elif text:
            said.append(text)
    if backend:  # one line for the backend, not its output that would fill the line first (pycairo's meson setup)
        said.append(" ".join(_backend_error(backend)))
    return " ".join([*said, brought_in]).strip()[:600]


_BROUGHT_IN = "was included because"
_BACKEND_ERROR = re.compile(r"(?:^|\s)(?:ERROR|error|Error):")  # meson's, a compiler's, setuptools'


def _backend_error(backend: list[tuple[str, str]]) -> tuple[str, str]:
    """The backend's last exception (html5lib 1.1's ModuleNotFoundError), else its last error line (pycairo
    1.29.2's meson: ``ERROR: Dependency "cairo" not found``), else its last line."""
    raised = [b for b in backend if _RAISED.match(b[1])]
    errors = [b for b in backend if _BACKEND_ERROR.search(b[1])]
    return (raised or errors or backend)[-1]


REFUSALS = "mendflow-egress-refused"  # in the job's temp dir: where relay.py notes a host the proxy refused


def refused_host_names(refusals: Path) -> list[str]:
    """The hosts (``host:port``) the egress proxy refused the step, as relay.py noted them."""
    try:
        return sorted(set(refusals.read_text(encoding="utf-8", errors="replace").split()))
    except OSError:
        return []


def refused_hosts(refusals: Path) -> str | None:
    """Why a failed step failed when it asked the egress proxy for a host outside the package index allowlist."""
    hosts = refused_host_names(refusals)
    if not hosts:
        return None
    # The same words in every language's job: the setting's hosts are allowed beside the job's own index (npm's,
    # the Go proxy...), and its default is PyPI's, which a Python job needs kept.
    return (
        f"the dependency phase may reach only the package index over HTTPS, and {', '.join(hosts)[:300]} is not "
        "on its allowlist; if this repository needs it, add it to MENDFLOW_SANDBOX__EGRESS_HOSTS (a JSON list of "
        "hosts allowed beside each language's own index, which replaces the default "
        '["pypi.org", "files.pythonhosted.org"]: keep those in it for Python jobs)'
    )


# Options pip reads after a requirement on its line and uv does not (`--hash` it reads).
_PER_REQUIREMENT_OPTION = re.compile(r"[ \t]+--(?:config-settings|global-option|install-option)(?:=|[ \t]+)\S+")
# A short option with its value attached, as pip reads it and uv does not (astunparse 1.6.3's ``-rrequirements.txt``).
_ATTACHED_VALUE = re.compile(r"^([ \t]*-[rce])(?=[^\s=])", re.MULTILINE)
# uv's words for a package whose build failed: "Failed to build `mysqlclient==2.3.2`".
_UNBUILT = re.compile(r"Failed to build `([A-Za-z0-9][A-Za-z0-9._-]*)")
# A line that includes another requirement or constraint file, by its path.
_INCLUDE = re.compile(r"^[ \t]*(?:-r|-c|--requirement|--constraint)(?:[ \t]*=[ \t]*|[ \t]+)(\S+)[ \t]*$", re.MULTILINE)


def _without_missing_includes(text: str, here: Path) -> tuple[str, list[str]]:
    """``text`` without its ``-r``/``-c`` lines whose file the tree lacks, and their paths: an sdist may leave
    out the file a shipped one includes (aiohttp-jinja2 1.6's ``requirements-dev.txt`` includes
    ``requirements.txt``, whose runtime requirements the project's own metadata names too)."""
    missing: list[str] = []

    def kept(line: re.Match[str]) -> str:
        path = line[1]
        if "://" in path or (here / path).exists():
            return line[0]
        missing.append(path)
        return ""

    return _INCLUDE.sub(kept, text), missing


class Installer:
    def __init__(self, root: Path, venv: Path, python: str, env: dict[str, str], log: Log) -> None:
        self.root, self.venv, self.python, self.log = root, venv, python, log
        self.outside = repo_config.uv_sources_outside(root)
        self.build_constraints: list[str] = []  # uv's --build-constraints, once a build asked for them
        self.unisolated: list[str] = []  # uv's --no-build-isolation-package for the project (_add_build_tools)
        self.uv = "uv"  # the image's, or the one the repository's required-version asks for (_use_uv)
        # pip's cache (the wheelhouse's downloads) is kept with the repository's other dependency caches
        self.pip_cache = Path(env.get("PIP_CACHE_DIR") or f"{env.get('MENDFLOW_JOB_CACHE') or venv.parent}/pip")
        self.env = {
            **env,
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_PROJECT_ENVIRONMENT": str(venv),
            "VIRTUAL_ENV": str(venv),
            "UV_NO_PROGRESS": "1",
        }
        self.env.pop("UV_SYSTEM_PYTHON", None)
        # The repository's build backends run here, with the network: they may write only the job's own
        # directories and its own dependency cache (the launcher's, for this repository alone).
        venv.parent.mkdir(parents=True, exist_ok=True)  # bound writable, so it must exist before uv makes the venv
        own = [
            root.parent,
            venv.parent,
            self.pip_cache,
            *(Path(env[k]) for k in ("UV_CACHE_DIR", "HOME") if env.get(k)),
        ]
        for path in own:  # only what exists can be bound writable (a pod's cache volume starts empty)
            path.mkdir(parents=True, exist_ok=True)
        tmp = Path(env.get("TMPDIR") or tempfile.gettempdir())
        self.refusals = tmp / REFUSALS
        # A repository's earlier job left index pages in its uv cache: its next jobs resolve from them first, as
        # the requirements resolved then, so a release upstream cannot fail a commit that changed nothing (Node's
        # kept tree, too), and no page is asked of the index again (everett 3.5.0's install: 5.4 s → 2.6 s).
        cache = env.get("UV_CACHE_DIR")
        self.from_cache = any(Path(cache).glob("simple-v*/*/*")) if cache else False
        self.wrap = confined((*own, tmp), self.refusals)

    @property
    def venv_python(self) -> str:
        return str(self.venv / "bin" / "python")

    def _run(self, argv: list[str], timeout: float, indexed: bool = False) -> StepResult:
        """``argv`` in the phase's confinement, raising DependencyError when it fails; ``indexed``: a uv command
        that may ask the index (``_from_cache_first``)."""
        self.refusals.unlink(missing_ok=True)  # what an earlier step was refused does not explain this one
        r = self._from_cache_first(argv, timeout) if indexed else self._confined(argv, timeout)
        if not r.ok and argv[0] == "uv" and self.uv == "uv" and (pinned := _REQUIRED_UV.search(r.stderr)):
            self._use_uv(pinned[1], timeout)
            return self._run(argv, timeout, indexed)
        if not r.ok:
            named = dataclasses.replace(r, argv=argv)  # as the repo's CI would run it
            if refused := refused_hosts(self.refusals):
                raise DependencyError(named, refused, transient=False)
            raise DependencyError(named)
        return r

    def _confined(self, argv: list[str], timeout: float, env: dict[str, str] | None = None) -> StepResult:
        argv = [self.uv, *argv[1:]] if argv[0] == "uv" else argv
        return run(self.wrap(argv), cwd=self.root, env=env or self.env, timeout=timeout, log=self.log)

    def _use_uv(self, spec: str, timeout: float) -> None:
        """The uv the repository pins (``[tool.uv] required-version``, hijridate 2.6.0's ``>=0.9.0, <0.10.0``, which
        the image's uv refused to run for), from the index into the job's own venv of it, for every uv command
        after. It is fetched with the project's configuration out of sight (``UV_NO_CONFIG``), which would refuse
        the image's uv again."""
        tool = self.venv.parent / "uv-pinned"
        unconfigured = {**self.env, "UV_NO_CONFIG": "1"}
        for argv in (
            ["uv", "venv", "--clear", str(tool)],
            ["uv", "pip", "install", "--python", str(tool / "bin/python"), f"uv{spec}"],
        ):
            step = self._confined(argv, timeout, unconfigured)
            if not step.ok:
                raise DependencyError(
                    step, f"the repository's uv {spec} (required-version) did not install: {cause(step)}"
                )
        self.uv = str(tool / "bin/uv")
        self.log.write(f"dependencies: uv {spec}, as the repository's required-version asks\n")

    def _from_cache_first(self, argv: list[str], timeout: float) -> StepResult:
        """A uv command that may ask the index: from the cache alone first where it holds index pages
        (``from_cache``), else, or where that fails, with the index."""
        if self.from_cache:
            offline = self._confined([*argv, "--offline"], timeout)
            if offline.ok:
                return offline
            self.log.write("dependencies: from the cache alone it did not install: again with the index\n")
        return self._confined(argv, timeout)

    def _pip(self, args: list[str], timeout: float) -> None:
        # a uv source the tree lacks is taken from the index, by the name and version the requirement gives
        outside = [a for name in self.outside for a in ("--no-sources-package", name)]
        options = [*outside, *self.build_constraints, *self.unisolated]
        argv = ["uv", "pip", "install", "--python", self.venv_python, *options, *args]
        try:
            self._run(argv, timeout, indexed=True)
        except DependencyError as exc:
            if self.build_constraints or NEEDS_PKG_RESOURCES not in exc.step.stderr:
                raise
            self._build_with_old_setuptools()
            self._pip(args, timeout)

    def _build_with_old_setuptools(self) -> None:
        """setuptools 82 left out ``pkg_resources``, which an older setup.py imports (jproperties 2.1.2's): its
        builds get the setuptools of their day, as its CI had."""
        constraints = self.venv.parent / "build-constraints.txt"
        constraints.write_text(f"{OLD_SETUPTOOLS}\n", encoding="utf-8")
        self.build_constraints = ["--build-constraints", str(constraints)]
        self.log.write(f"dependencies: a build needs pkg_resources, which setuptools 82 dropped: {OLD_SETUPTOOLS}\n")

    def install(self, remaining: Callable[[], float]) -> None:
        """Each command gets what is left of the job's budget; raises DependencyError on the first failure."""
        self._check_rust()
        if self.outside:
            named = ", ".join(f"{name} ({path})" for name, path in self.outside.items())
            self.log.write(f"pyproject.toml: uv sources outside the tree: {named}; from the index instead\n")
        self._create_venv(remaining())
        python = self._venv_version(remaining())
        self._add_build_tools(remaining())
        fitting = [g for g in repo_config.wanted_groups(self.root, python) if self._group_fits(g, python)]
        default = repo_config.uv_default_groups(self.root)
        defaults = [g for g in default if g not in fitting and self._group_fits(g, python)]
        installed = self._install_groups(remaining, python, fitting, defaults)
        self._add_imported_options(remaining, python, installed)
        self._add_pixi_features(remaining)
        self._add_runner_tools(remaining())
        self._add_linters(remaining())
        self._add_build_wheelhouse(remaining())

    def _add_build_tools(self, timeout: float) -> None:
        """The project's build requirements in the venv, and the project built without isolation from them, where
        its editable install builds again on import with the tools it was built with (``rebuilt_on_import``)."""
        if name := repo_config.rebuilt_on_import(self.root):
            self._pip([*repo_config.build_requires(self.root), *MESON_BUILD_TOOLS], timeout)
            self.unisolated = ["--no-build-isolation-package", name]
            self.log.write(f"dependencies: {name} rebuilds on import (meson-python): built from the venv's tools\n")

    def _check_rust(self) -> None:
        """A project that builds a Rust extension (fastwarc 2.0.0: maturin) where the job has no cargo fails at
        once, saying so, rather than after its build backend asked for a toolchain to download (rustup, which no
        job may reach)."""
        rust = repo_config.rust_build_backend(self.root)
        if rust and not shutil.which("cargo", path=self.env.get("PATH")):
            said = f"the project builds a Rust extension ({rust}), and this job has no Rust toolchain (cargo)"
            raise DependencyError(StepResult([rust], None, "", said, 0.0), said, transient=False)

    def _install_groups(
        self, remaining: Callable[[], float], python: tuple[int, int], wanted: list[str], defaults: list[str]
    ) -> list[str]:
        """What the repository declares, with the ``wanted`` dependency groups and uv's ``defaults``. Where a group
        names a package that does not build here, that group is left out (django-guardian 3.5.2's ``ci`` group
        adds mysqlclient, which needs MySQL's client library, to its ``dev`` group); then uv's default groups.
        Returns the groups installed."""
        try:
            self._install_declared(remaining, python, [*wanted, *defaults])
            return [*wanted, *defaults]
        except DependencyError as exc:
            if exc.transient:
                raise
            unbuilt = found[1] if (found := _UNBUILT.search(str(exc))) else ""
            if naming := repo_config.groups_naming(self.root, unbuilt, wanted + defaults) if unbuilt else []:
                self.log.write(f"dependencies: {unbuilt} does not build here: groups {naming} left out\n")
                kept = [g for g in wanted if g not in naming], [g for g in defaults if g not in naming]
                return self._install_groups(remaining, python, *kept)
            if not defaults:
                raise
            self.log.write(f"dependencies: uv's default groups {defaults} failed ({exc}); without them\n")
            self._install_declared(remaining, python, wanted)
            return wanted

    def _add_imported_options(self, remaining: Callable[[], float], python: tuple[int, int], groups: list[str]) -> None:
        """The dependency groups and extras that bring what a conftest or a test file imports unconditionally and
        the venv still lacks (obspec-utils 0.9.0: its conftest imports xarray, which only its ``xarray`` group
        names; its CI syncs every group). Of several that name it, the smallest; one that does not install here is
        left out, with a line, and the tests say what they miss."""
        declared = repo_config.optional_projects(self.root)
        extras = repo_config.wanted_extras(self.root, python)
        chosen = {("group", g) for g in groups} | {("extra", e) for e in extras}
        offered: dict[str, tuple[str, str]] = {}
        for key in sorted(declared, key=lambda k: (len(declared[k]), k)):
            for project in declared[key] if key not in chosen else ():
                offered.setdefault(project.replace("-", "_"), key)
        missing = self._missing_modules(sorted(imported_unconditionally(self.root, set(offered))), remaining())
        if not (needed := sorted({offered[m] for m in missing})):
            return
        self.log.write(f"dependencies: the tests import {', '.join(missing)}: adding {needed}\n")
        more_groups = [name for kind, name in needed if kind == "group"]
        more_extras = tuple(name for kind, name in needed if kind == "extra")
        try:
            self._install_declared(remaining, python, [*groups, *more_groups], more_extras)
        except DependencyError as exc:
            if exc.transient:
                raise
            self.log.write(f"dependencies: {needed} left out: {exc}\n")

    def _install_declared(
        self, remaining: Callable[[], float], python: tuple[int, int], names: list[str], extra: tuple[str, ...] = ()
    ) -> None:
        """What the repository declares for its tests, with the dependency groups ``names`` (and extras ``extra``)."""
        root = self.root
        groups = [f"--group={g}" for g in names]
        extras = [*repo_config.wanted_extras(root, python), *extra]
        if repo_config.syncs_uv_lock(root) and not self.outside:  # a lock of those sources cannot be synced
            if repo_config.uv_dev_dependencies(root) and "--group=dev" not in groups:
                groups.append("--group=dev")
            chosen = [*groups, *(f"--extra={e}" for e in extras)]
            kept = [*self.unisolated, "--inexact"] if self.unisolated else []  # the build tools stay
            sync = ["uv", "sync", "--frozen", "--no-default-groups", *chosen, *kept, "--python", self.venv_python]
            self._run(sync, remaining(), indexed=True)
            return
        requirements = repo_config.requirement_files(root)
        for req in requirements:
            self._requirements(req, remaining())
        locked = self._locked()
        declared = [
            *([] if locked else repo_config.pipfile_deps(root)),
            *poetry.test_requirements(root),
            *repo_config.pdm_dev_deps(root),
            *repo_config.uv_dev_dependencies(root),
            *repo_config.hatch_deps(root),
            *repo_config.tox_deps(root, python),
            *repo_config.nox_deps(root),
            *repo_config.setuptools_tests_require(root),
            *repo_config.pytest_required_plugins(root),
        ]
        if not (requirements or locked or declared or extras or groups):
            self._install_featured(remaining)
        elif project := self._project(extras, groups):
            self._pip([*project, *locked], remaining())
        elif locked[:1] == ["-r"]:  # a pipenv application has a lock and no project to install
            self._pip(locked, remaining())
        if more := sorted(set(declared)):
            only_constrains = locked[:1] == ["-c"]  # such a lock's pins hold for these too
            self._pip([*more, *(locked if only_constrains else [])], remaining())

    def _install_featured(self, remaining: Callable[[], float]) -> None:
        """The project with every feature it declares as an extra, where nothing says what its tests need
        (httpcore 1.0.9's sdist ships none of its requirements, and its tests import h2's hpack, anyio's pytest
        plugin, trio and socksio, each an extra): the tests cover every optional feature. When that install fails
        for good (an extra no index serves, or that does not build here), the project alone."""
        if not repo_config.is_installable(self.root):
            return
        if features := repo_config.feature_extras(self.root):
            try:
                self._pip(self._project(features, []), remaining())
                return
            except DependencyError as exc:
                if exc.transient:
                    raise
                self.log.write(f"dependencies: the project with its extras failed ({exc}); the project alone\n")
        self._pip(self._project([], []), remaining())

    def _requirements(self, requirements: Path, timeout: float) -> None:
        """``-r`` a requirement file as pip reads it, where uv reads it otherwise: without the per-requirement
        options uv refuses (frozenlist's ``-e . --config-settings=pure-python=false``), and with a space between
        a short option and its value (``-rrequirements.txt``). From a copy beside it, so its relative ``-r`` and
        ``-c`` paths still hold, removed after."""
        text = requirements.read_text(encoding="utf-8", errors="replace")
        dropped = " ".join(option.strip() for option in _PER_REQUIREMENT_OPTION.findall(text))
        as_uv_reads = _ATTACHED_VALUE.sub(r"\1 ", _PER_REQUIREMENT_OPTION.sub("", text))
        as_uv_reads, missing = _without_missing_includes(as_uv_reads, requirements.parent)
        if as_uv_reads == text:
            self._pip(["-r", str(requirements)], timeout)
            return
        if dropped:
            self.log.write(f"{requirements.name}: uv reads no per-requirement options; left out: {dropped}")
        if missing:
            self.log.write(f"{requirements.name}: includes {', '.join(missing)}, which the tree lacks; left out")
        copy = requirements.with_name(f".{requirements.stem}.uv{requirements.suffix}")
        copy.write_text(as_uv_reads, encoding="utf-8")
        try:
            self._pip(["-r", str(copy)], timeout)
        finally:
            copy.unlink(missing_ok=True)

    def _create_venv(self, timeout: float) -> None:
        """The venv on the runner's interpreter when it fits what the repository asks for, else on one uv finds
        for its ``.python-version`` pin or ``requires-python``; when none fits ``requires-python``, say so."""
        pin, spec = interpreter.requests(self.root)
        probe = self._run([self.python, "-c", "import sys; print(*sys.version_info[:3])"], timeout)
        own = tuple(int(n) for n in probe.stdout.split())
        have = ".".join(map(str, own))
        if pin and not interpreter.fits(own, pin):
            if self._venv_for(pin, timeout).ok:
                return
            self.log.write(f"no Python {pin} here (.python-version); trying {have} against requires-python")
        if spec and not interpreter.fits(own, spec):
            tried = self._venv_for(spec, timeout)
            if not tried.ok:
                raise DependencyError(tried, f"no Python here fits requires-python {spec!r} (this one is {have})")
            return
        self._run([*UV_VENV, "--python", self.python, str(self.venv)], timeout, indexed=True)

    def _group_fits(self, group: str, python: tuple[int, int]) -> bool:
        """Whether uv installs ``group`` for this interpreter; one it would refuse is left out, with a line."""
        refused = [r for r in repo_config.uv_group_pythons(self.root, group) if not interpreter.fits(python, r)]
        if refused:
            self.log.write(f"dependencies: group {group!r} left out: uv installs it for Python {refused[0]} only\n")
        return not refused

    def _venv_version(self, timeout: float) -> tuple[int, int]:
        """(major, minor) of the venv's interpreter: which of tox's environments the build stands for."""
        probe = self._run([self.venv_python, "-c", "import sys; print(*sys.version_info[:2])"], timeout)
        major, minor = (int(n) for n in probe.stdout.split())
        return major, minor

    def _venv_for(self, request: str, timeout: float) -> StepResult:
        return self._from_cache_first([*UV_VENV, "--python", request, str(self.venv)], timeout)

    def _project(self, extras: list[str], groups: list[str]) -> list[str]:
        """``uv pip install``'s arguments for the project, its test extras and groups ([] when there is nothing
        to install)."""
        args = list(groups)
        if repo_config.is_installable(self.root):
            args += ["-e", f".[{','.join(extras)}]" if extras else "."]
        return args

    def _locked(self) -> list[str]:
        """``-r FILE`` with a poetry or pdm lock's pins, or ``-c FILE`` when the lock does not say which groups
        need them (see ``lockfiles``); [] without a lock."""
        lock = lockfiles.lockfile(self.root)
        if lock is None:
            return []
        locked = lockfiles.read(lock)
        pinned = self.venv.parent / "locked-requirements.txt"
        pinned.write_text("\n".join(locked.pins) + "\n", encoding="utf-8")
        return [locked.option, str(pinned)]

    def _add_linters(self, timeout: float) -> None:
        """The linters the repository's CI runs, at the versions it pins, when its dependencies did not bring
        them: ruff as its pre-commit hook pins it (else the image's), mypy when it configures mypy (its hook's
        version and stubs, else the newest). Installed now, with the network; lint runs offline."""
        wanted = []
        if not (self.venv / "bin" / "ruff").exists():
            wanted += precommit.pinned(self.root, "ruff")
        if repo_config.mypy_config(self.root) is not None and not self._site_has("mypy"):
            wanted += precommit.pinned(self.root, "mypy") or ["mypy"]
        if wanted:
            # A hook's pin of a package the tests already have (iniconfig's mypy hook pins pytest 7.2.0 against
            # the pytest>=8.4.2 its lock installs) must not change what the tests run on: that one is kept.
            installed = self._installed(timeout)
            self._pip([w for w in wanted if repo_config.project_name(w) not in installed], timeout)

    def _add_build_wheelhouse(self, timeout: float) -> None:
        """The project's build requirements as files pip installs offline (``wheelhouse``), when the tests build
        the project in an isolated environment: jaraco.packaging's ``metadata.load`` does, for pytest-checkdocs on
        every jaraco/skeleton project (inflect 7.6.0, zipp), and on the repository's CI its pip fetches them then;
        a job's tests have no network. Not for any venv with PyPA ``build``: the tests' pip then ignores every
        index (``offline_pip_env``), and pip-tools' tests, for one, point pip at indexes of their own."""
        if not self._site_has("jaraco/packaging", "pip"):  # a look at the venv, not one more process a job
            return
        requires = [*repo_config.build_requires(self.root), "wheel"]  # setuptools < 70.1 asks for wheel too
        dest = ["--cache-dir", str(self.pip_cache), "--dest", str(wheelhouse(self.venv))]
        self._run([self.venv_python, "-m", "pip", "download", *PIP_QUIET, *dest, *requires], timeout)

    def _installed(self, timeout: float) -> set[str]:
        """The normalised names of the distributions in the venv."""
        probe = "import importlib.metadata as m; print(*{d.metadata['Name'] for d in m.distributions()}, sep='\\n')"
        return {
            repo_config.normalised_name(n) for n in self._run([self.venv_python, "-c", probe], timeout).stdout.split()
        }

    def _site_has(self, *packages: str) -> bool:
        """Whether the venv's site-packages holds every one of these package directories."""
        return all(any(self.venv.glob(f"lib/python*/site-packages/{p}")) for p in packages)

    def _add_pixi_features(self, remaining: Callable[[], float]) -> None:
        """What the features of pixi's test environment add (``repo_config.pixi_deps``), but a package the venv
        already has: what the project declares decides its version. A feature's conda names are a guess, and its
        matrix may pin what PyPI lacks (skops 0.16.0's ``scikit-learn==1.10.dev0``), so a feature that does not
        install is tried a package at a time, and what still does not is left out, with a line."""
        features = repo_config.pixi_deps(self.root)
        installed = self._installed(remaining()) if features else set()
        for name, requirements in features.items():
            wanted = [r for r in requirements if repo_config.project_name(r) not in installed]
            failed = bool(wanted) and self._failure(wanted, remaining()) is not None
            if failed and (left_out := [r for r in wanted if self._failure([r], remaining())]):
                said = f"{', '.join(left_out)} (pixi feature {name!r})"
                self.log.write(f"dependencies: {said} do not install here: left out\n")
            installed |= {repo_config.project_name(r) for r in wanted}

    def _failure(self, requirements: list[str], timeout: float) -> DependencyError | None:
        """Why ``requirements`` did not install, where it is deterministic (a transient failure is raised)."""
        try:
            self._pip(requirements, timeout)
        except DependencyError as exc:
            if exc.transient:
                raise
            return exc
        return None

    def _add_runner_tools(self, timeout: float) -> None:
        """pytest and coverage.py when the repository lacks them, the coverage plugins its configuration loads
        (by their module's top package: ``covdefaults``), the pytest plugins its pytest options belong to and
        the plugins and libraries its tests ask for by a fixture, a mark or an import (``asked_plugins``: a guess,
        so one that does not install beside what the repository declares is left out, with a line)."""
        tools = {**RUNNER_TOOLS, **{p: p.split(".")[0] for p in repo_config.coverage_plugins(self.root)}}
        tools |= repo_config.configured_pytest_plugins(self.root)
        asked = {module: plugin for module, plugin in asked_plugins(self.root).items() if module not in tools}
        others = [other for module in asked for other in ALTERNATIVES.get(module, ())]
        missing = self._missing_modules([*tools, *asked, *others], timeout)
        if needed := [tools[n] for n in missing if n in tools]:
            self._pip(needed, timeout)
        unserved = [n for n in missing if n in asked and set(ALTERNATIVES.get(n, ())) <= set(missing)]
        if (guessed := [asked[n] for n in unserved]) and (exc := self._failure(guessed, timeout)):
            self.log.write(f"dependencies: {', '.join(guessed)}, which the tests ask for, left out: {exc}\n")

    def _missing_modules(self, modules: list[str], timeout: float) -> list[str]:
        """Those of ``modules`` the venv's interpreter cannot find."""
        if not modules:
            return []
        probe = "import importlib.util as u; print(' '.join(n for n in %r if u.find_spec(n) is None))"
        return self._run([self.venv_python, "-c", probe % (tuple(modules),)], timeout).stdout.split()


PIP_QUIET = ["--quiet", "--no-input", "--disable-pip-version-check"]  # no prompt, no call home for pip's own news


def wheelhouse(venv: Path) -> Path:
    """Where the dependency phase leaves the build requirements the tests' pip installs from, beside the venv."""
    return venv.parent / "wheelhouse"


def offline_pip_env(venv: Path) -> dict[str, str]:
    """The tests' pip settings: install from the wheelhouse alone when there is one (the tests have no index)."""
    found = wheelhouse(venv)
    return {"PIP_FIND_LINKS": str(found), "PIP_NO_INDEX": "1"} if found.is_dir() else {}


# Seeded with pip (and setuptools below Python 3.12), as tox's and ``python -m venv``'s environments are: tests
# may run ``python -m pip`` (jsonschema 4.23.0's test_license runs ``pip show jsonschema``). ``--clear``: made again
# over what an attempt from the cache alone left.
UV_VENV = ["uv", "venv", "--seed", "--clear"]
