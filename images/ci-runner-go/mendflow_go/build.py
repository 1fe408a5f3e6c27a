"""A Go repository's build, the way its own CI runs one: per module (each ``go.mod``, or a ``go.work``'s), the
module cache filled with the network, then everything else without it.

The toolchain is the image's (``GOTOOLCHAIN=local``: a ``go.mod`` asking for a newer Go fails clearly instead of
downloading one); the module cache is the repository's dependency cache, writable by the job
(``-modcacherw``, so eviction can remove it); offline steps get ``GOPROXY=off``, so a module the dependency phase
did not fetch is an error, never a download. A ``vendor/`` directory is used as it is, with nothing fetched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mendflow_runner import coverage_formats, handoff, proc
from mendflow_runner.config import JobConfig
from mendflow_runner.language_build import LanguageBuild
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.report import Report

from . import fmtcache, golangci, gotest, warm
from .warm import TEST_FLAGS

PROFILE, COVERAGE = "cover.out", "coverage.json"
# `go` and `gofmt` print "file.go:12:3: message" (vet may prefix "./" or "vet: ").
_POSITION = re.compile(r"^(?:vet: )?(?P<path>[^\s:]+\.go):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<message>.+)$")
_PACKAGE_MAIN = re.compile(r"^package\s+main\b", re.M)
_CONSTRAINT = re.compile(r"^//(?:go:build| \+build) ", re.M)
_HEAD_BYTES = 16384  # a Go file's package clause comes after its licence comment and build constraints
NO_COMMANDS = "no main packages to build"  # what `go build -o DIR/` says of a module with none
_SKIP_DIRS = ("vendor", "testdata")
_FMT_BATCH = 200  # files per gofmt command line
# go.work's ``use`` directives: a block ``use ( ./a ./b )`` or a line ``use ./a``, comments aside.
_WORK_USE = re.compile(r"^use[ \t]*\(([^)]*)\)|^use[ \t]+(\S+)", re.MULTILINE)
JOBCACHE = Path(__file__).resolve().parent / "jobcache.py"
# jobcache.py's interpreter: this one's real file (a launcher's toolchain links it from under /tmp, which a
# sandbox hides), run isolated and without site-packages, as the script needs the standard library only.
PYTHON = Path(sys.executable).resolve()
# An offline go command's own build cache in bubblewrap: in the sandbox's own /tmp, a tmpfs (``jobcache``).
SANDBOX_GOCACHE = "/tmp/mendflow-gocache"
# The test binaries run without the offline steps' GOPROXY=off and GOSUMDB=off, which are for mendflow's own go
# commands: a test that asks `go env` sees the go command's defaults, as in the repository's own CI (go-internal
# v1.16.0's cmd/testscript expects GOPROXY=https://proxy.golang.org,direct). Unset, not the runner's own values:
# those are the image's or the launcher's, not the repository's. The sandbox still has no network. Only running
# is changed: the compile, and so the warm-up's build cache keys, are the same.
TEST_EXEC = "-exec=env -u GOPROXY -u GOSUMDB"


def go_files(module: Path) -> list[Path]:
    """The module's Go files as the go command sees them: not under vendor/, testdata/ or a ``.``/``_`` dir."""
    found = []
    for dirpath, dirnames, filenames in os.walk(module):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIP_DIRS and not d.startswith((".", "_")) and d != "node_modules"
        )
        if Path(dirpath) != module and (Path(dirpath) / "go.mod").exists():
            dirnames[:] = []  # a nested module is its own
            continue
        found += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".go")]
    return found


def has_commands(module: Path) -> bool:
    """Whether the module builds a command everywhere: a file, not a test, that declares ``package main`` under no
    build constraint (a generator's ``//go:build ignore`` has one). A GOOS or GOARCH in a file's name may still
    leave none to build here: the go command then says ``NO_COMMANDS``."""
    for path in go_files(module):
        if path.name.endswith("_test.go"):
            continue
        with path.open(encoding="utf-8", errors="replace") as source:
            head = source.read(_HEAD_BYTES)
        if _PACKAGE_MAIN.search(head) and not _CONSTRAINT.search(head):
            return True
    return False


# What the linker says of a ``package main`` with no ``func main``: expr-lang/expr 1.17.8's test/examples is one,
# its code all in tests, which `go test` links and `go build` cannot.
NO_MAIN = "function main is undeclared in the main package"
_FUNC_MAIN = re.compile(r"^func\s+main\s*\(\s*\)", re.M)


def _block_file(line: str) -> str:
    """The file a coverprofile's block is in (``example.com/m/a.go`` of ``example.com/m/a.go:3.2,5.3 2 1``)."""
    return line.rpartition(":")[0]


# A replacement by a directory: the go command reads one that starts with ./, ../ or / as a path
_LOCAL_REPLACEMENT = re.compile(r"=>[ \t]*(?:\.\.?/|/|\.\.?[ \t]*$)", re.MULTILINE)


def lacking_replacements(module: Path, src: Path, gomod: dict[str, Any]) -> list[tuple[str, str]]:
    """``(old, directory)`` of each ``replace`` in ``gomod`` (``go mod edit -json``) by a directory that is not a
    module of the tree: outside ``src``, or with no go.mod. ``old`` is ``path`` or ``path@version``, as
    ``-dropreplace`` takes it."""
    found = []
    for replace in gomod.get("Replace") or []:
        old, new = replace["Old"], replace["New"]
        if new.get("Version"):
            continue  # another module's version, which the proxy serves
        target = (module / new["Path"]).resolve()
        if not target.is_relative_to(src.resolve()) or not (target / "go.mod").is_file():
            found.append((f"{old['Path']}@{old['Version']}" if old.get("Version") else old["Path"], new["Path"]))
    return found


def missing_workspace_modules(src: Path) -> list[str]:
    """The directories ``src/go.work`` uses that hold no ``go.mod``: a module's zip from the proxy leaves its nested
    modules out and may keep the workspace file (zombiezen.com/go/sqlite 1.4.2's ``./cmd/zombiezen-sqlite-migrate``),
    and every go command then stops on it; the go command ignores a dependency's go.work alike."""
    try:
        text = (src / "go.work").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    uncommented = re.sub(r"//[^\n]*", "", text)
    used = [d for block in _WORK_USE.findall(uncommented) for d in (block[0] or block[1]).split()]
    return [d for d in used if not (src / d.strip('"`') / "go.mod").is_file()]


def only_test_mains_failed(stderr: str, modules: dict[str, str], src: Path) -> bool:
    """Whether each package ``go build ./...`` failed on (a ``# import/path`` line, then its errors) is a
    ``package main`` its tests alone use: the linker's ``NO_MAIN`` and nothing else, in a directory with test files
    and no ``func main`` outside them. The go command builds every other package all the same, and vet and the
    tests compile these; a command whose ``func main`` went away has no tests of its own and still fails."""
    blocks = re.split(r"^# (\S+)\n", stderr, flags=re.M)
    if blocks[0].strip() or len(blocks) < 3:
        return False
    for package, said in zip(blocks[1::2], blocks[2::2], strict=True):
        lines = [line for line in said.splitlines() if line.strip()]
        directory = coverage_formats.go_path(package, modules)
        if not lines or any(NO_MAIN not in line for line in lines) or directory is None:
            return False
        if not _test_only_package(src / directory):
            return False
    return True


def _test_only_package(directory: Path) -> bool:
    files = sorted(directory.glob("*.go")) if directory.is_dir() else []
    tests = [f for f in files if f.name.endswith("_test.go")]
    code = [f.read_text(encoding="utf-8", errors="replace") for f in files if f not in tests]
    return bool(tests) and not any(_FUNC_MAIN.search(text) for text in code)


class GoBuild(LanguageBuild[tuple[gotest.GoTestRun, list[StepResult]]]):
    one_path_for_every_job = True  # Go keys its build cache by a package's directory

    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        self.modules: dict[str, str] = {}  # module path → directory relative to src
        self.profiles: list[tuple[Path, Path]] = []  # (coverprofile, its module's directory)
        self.shared_gocache: Path | None = None  # the repository's, read by the offline steps' cache program
        self.warmed: dict[tuple[Path, str], StepResult] = {}  # (module, build|vet): the warm-up's run of it
        self.lint_tree: Path | None = None  # the sources as committed, for golangci-lint beside the tests
        self.golangci_configs: dict[Path, Path] | None = None  # module → its golangci-lint configuration
        self.golangci_sharing: set[Path] = set()  # the configurations linting from the repository's caches
        self.fmt_verdicts: fmtcache.Verdicts | None = None  # gofmt's, kept in the repository's cache
        self.fmt_tree: Path | None = None  # the private copy of the files gofmt has not judged before
        self.fmt_sorted: dict[Path, tuple[list[str], fmtcache.Unseen]] = {}  # module → known unformatted, unseen
        super().__init__(cfg, rep, log)

    # -- the environment ------------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            GOTOOLCHAIN="local",
            GOPATH=str(self.cfg.workspace / "gopath"),
            GOMODCACHE=str(self.cache / "go" / "mod"),
            GOCACHE=str(self.cache / "go" / "build"),
            GOTELEMETRY="off",
            GOFLAGS=" ".join(f for f in (env.get("GOFLAGS", ""), "-modcacherw") if f),
        )
        return env

    def _use_job_caches(self) -> None:
        self.env["GOMODCACHE"] = str(self.cfg.workspace / "gomod")
        self.env["GOCACHE"] = str(self.job_gocache)

    @property
    def job_gocache(self) -> Path:
        return self.cfg.workspace / "gocache"

    @property
    def handoff_dirs(self) -> list[Path]:
        return [self.src, Path(self.env["GOMODCACHE"]), self.job_gocache]

    @property
    def dependency_dirs(self) -> list[Path]:
        commands = [self.commands] if self.phase == handoff.WHOLE else []
        return [Path(self.env["GOMODCACHE"]), Path(self.env["GOCACHE"]), *commands]

    @property
    def commands(self) -> Path:
        """Where a whole job's build leaves each module's commands: in the repository's cache, where the next job's
        go command finds them and links again only a command whose inputs changed, as ``go build ./...`` links
        each one every time and throws it away (gorilla/websocket 1.5.3's four examples: 2.1 s of a 6 s job)."""
        return self.cache / "go" / "bin"

    @property
    def offline_env(self) -> dict[str, str]:
        return {**self.env, "GOPROXY": "off", "GOSUMDB": "off", "TMPDIR": str(self.tmp)}

    @property
    def module_dirs(self) -> list[Path]:
        return [self.src / d for d in dict.fromkeys(self.modules.values())]

    # -- the steps -------------------------------------------------------------------------------------------

    def _read_project(self) -> bool:
        self.modules = coverage_formats.go_modules(self.src)
        if not self.modules:
            self.rep.errored("bad_input", "no go.mod in the repository: this is not a Go module (run `go mod init`)")
            return False
        if missing := missing_workspace_modules(self.src):
            self.env["GOWORK"] = "off"
            said = f"go.work uses {', '.join(missing)}, which the tree lacks: built without the workspace (GOWORK=off)"
            self.rep.lint_advisory.append(f"go.work:0:0 build {said}")
        return self._selection_ok(gotest.selection)

    def _download(self) -> bool:
        """``go mod download`` per module that does not vendor: confined, with the module proxy as the only way out.
        A new repository's build cache starts as the image's standard library seed (``warm``)."""
        if warm.seed(Path(self.env["GOCACHE"]), self.env):
            self.log.write("build cache: a new repository's, seeded with the image's standard library build\n")
        return all(
            self._download_module(module)
            for module in self.module_dirs
            if not (module / "vendor" / "modules.txt").is_file()
        )

    def _download_module(self, module: Path) -> bool:
        """``go mod download``. A ``replace`` by a directory the tree lacks is dropped first (a monorepo module's
        zip: go.opentelemetry.io/otel/trace 1.47.0's ``go.opentelemetry.io/otel => ../``, where every go command
        stopped), so that the module comes from the proxy at the version go.mod requires, with the checksums the
        offline steps need (``go mod download PATH``: the bare command records only its go.mod's)."""
        dropped = self._drop_lacking_replacements(module)
        if dropped is None or not self._fetch(["go", "mod", "download"], module):
            return False
        return not dropped or self._fetch(["go", "mod", "download", *dropped], module)

    def _drop_lacking_replacements(self, module: Path) -> list[str] | None:
        """Drops the module's replacements by a directory the tree lacks, with an advisory; the replaced modules
        go.mod requires, or None where the go command failed (ERRORED)."""
        if not _LOCAL_REPLACEMENT.search((module / "go.mod").read_text(encoding="utf-8", errors="replace")):
            return []  # the go command's reading of go.mod is needed only where a replacement names a directory
        step = self._run(self._confined(), ["go", "mod", "edit", "-json"], module, self.env)
        if not step.ok:
            self._fetch_failed(step, ["go", "mod", "edit", "-json"], module)
            return None
        gomod = json.loads(step.stdout)
        lacking = lacking_replacements(module, self.src, gomod)
        drop = ["go", "mod", "edit", *(f"-dropreplace={old}" for old, _new in lacking)]
        if lacking and not self._fetch(drop, module):
            return None
        for old, new in lacking:
            said = f"replace {old} => {new}, a directory the tree lacks: {old} from the module proxy instead"
            self.rep.lint_advisory.append(f"{self.where(module / 'go.mod')}:0:0 build {said}")
        required = {r["Path"] for r in gomod.get("Require") or []}
        return [old.partition("@")[0] for old, _new in lacking if old.partition("@")[0] in required]

    def _after_download(self) -> None:
        self._warm()
        if self.phase == handoff.WHOLE:
            self._private_build_cache()
            # decided before any repository code runs: a test could rewrite a configuration
            configs = self._golangci_configs().values()
            self.golangci_sharing = {config for config in configs if self._golangci_shares_caches(config)}
            if self.golangci_sharing:
                self.lint_tree = self._copy_for_lint()
                self.lint_beside_tests = self.lint_tree is not None
            self._sort_for_gofmt()

    def _private_place(self) -> Path | None:
        """Where the runner may copy the sources as committed (no repository code has run yet) for a linter that
        writes the repository's caches from what it reads: no test can write there (the runner's temp dir, outside
        the workspace and the job's home, the paths a test may write). None without bubblewrap (a pod), where a
        test could write anything the job can."""
        place = self.refusals.parent
        if not self.stable_root.active or place.resolve().is_relative_to(self.cfg.workspace.resolve()):
            return None
        return place

    def _copy_for_lint(self) -> Path | None:
        """A copy of the sources for golangci-lint (``_private_place``): beside the tests, which may rewrite the
        tree, it reads this copy, or the repository's next jobs would lint from what a test wrote. golangci-lint
        sees it at the sources' own path, which its caches' keys name (``_lint_tree_over``). With no private place,
        no copy, and golangci-lint runs before the tests."""
        if (place := self._private_place()) is None:
            return None
        tree = Path(tempfile.mkdtemp(prefix="mendflow-lint-tree-", dir=place))
        shutil.copytree(self.src, tree, symlinks=True, dirs_exist_ok=True)
        return tree

    def _sort_for_gofmt(self) -> None:
        """Each module's files gofmt has judged before (``fmtcache``), and a private copy of the rest, which gofmt
        reads beside the tests at the sources' own path; with no private place gofmt reads the tree as before."""
        tool = fmtcache.tool_identity(shutil.which("gofmt", path=self.env.get("PATH")))
        if tool is None or (place := self._private_place()) is None:
            return
        self.fmt_verdicts = fmtcache.Verdicts.load(self.cache / "go", tool)
        self.fmt_tree = Path(tempfile.mkdtemp(prefix="mendflow-gofmt-", dir=place))
        for module in self.module_dirs:
            self.fmt_sorted[module] = self.fmt_verdicts.sort(self.src, module, go_files(module), self.fmt_tree)

    def _warm(self) -> None:
        """Compile, without running, what the offline steps will (the build, vet's facts, the instrumented test
        packages: ``warm.stages``), so the build cache they start from is warm.
        The go command runs no repository code while compiling, so this may write the repository's shared cache;
        it compiles in the build modes the repository's tests run the go command in, too (``warm``).
        In a whole job its ``go build`` and ``go vet`` are the build and lint steps' (the same commands in the same
        environment, and compiling is all they do); the tests' results are the offline steps' to judge."""
        wrap = self._confined()
        for module in self.module_dirs:
            modes = warm.modes_tests_build_in([f for f in go_files(module) if f.name.endswith("_test.go")])
            profile, plugin_main = self.refusals.parent / "mendflow-warm.out", self._plugin_main(modes)
            for stage in warm.stages(profile, modes, plugin_main, self._commands_of(module)):
                for argv, step in zip(stage, self._side_by_side(wrap, stage, module), strict=True):
                    if self.phase == handoff.WHOLE and self._is_check(argv, step):
                        self.warmed[(module, argv[1])] = step

    @staticmethod
    def _is_check(argv: list[str], step: StepResult) -> bool:
        """Whether the warm-up's ``step`` is the build's or vet's own check of the module (not the plugin's build),
        with its verdict: not timed out, and not a command directory asked of a module with none."""
        return (
            argv[1] in ("build", "vet")
            and argv[-1] == "./..."
            and not step.timed_out
            and NO_COMMANDS not in step.stderr
        )

    def _commands_of(self, module: Path) -> Path | None:
        """Where the warm-up builds ``module``'s commands (``commands``), in a whole job and where it has any."""
        if self.phase != handoff.WHOLE or not has_commands(module):
            return None
        return self.commands / hashlib.sha256(module.relative_to(self.src).as_posix().encode()).hexdigest()[:16]

    def _plugin_main(self, modes: frozenset[str]) -> Path | None:
        """The warm-up's plugin of the standard library (``warm.write_plugin_main``), where the tests build one."""
        if warm.PLUGIN not in modes:
            return None
        try:
            packages = warm.std_packages(self.offline_env, cwd=self.refusals.parent)
        except (OSError, subprocess.SubprocessError) as exc:  # the tests' own build compiles it, as before
            self.log.write(f"warm-up: no plugin of the standard library: {exc}\n")
            return None
        return warm.write_plugin_main(self.refusals.parent / warm.PLUGIN_MAIN, packages)

    def _side_by_side(self, wrap: proc.Wrap, commands: list[list[str]], module: Path) -> list[StepResult]:
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            running = [pool.submit(self._run, wrap, argv, module, self.offline_env) for argv in commands]
            return [future.result() for future in running]

    def _private_build_cache(self) -> None:
        """The offline steps run the repository's tests, which could write the build cache: each of their go
        commands reads the shared one through links and writes its own (``jobcache``), so nothing they do reaches
        the next job. The go command keeps its fuzzing corpus there too."""
        self.shared_gocache = Path(self.env["GOCACHE"])
        own = SANDBOX_GOCACHE if self.stable_root.active else str(self.job_gocache)
        self.env["GOCACHE"] = own

    def _offline(self, shared: tuple[Path, ...] = ()) -> proc.Wrap:
        """The offline steps' sandbox, where they see the module cache, the shared build cache (read-only) and
        ``jobcache``, wherever the launcher placed them (a sandbox's ``/tmp`` is a fresh one); ``shared``: what of
        the repository's cache a step that runs no repository code may write too."""
        readable = [Path(self.env["GOMODCACHE"]), JOBCACHE.parent, PYTHON.parents[1]]
        if self.shared_gocache is not None and self.shared_gocache.is_dir():
            readable.append(self.shared_gocache)
        return proc.sandbox(self.cfg.workspace, readable=tuple(readable), shared=shared)

    def _offline_go(self, argv: list[str], module: Path, env: dict[str, str]) -> StepResult:
        """A command that runs the go command offline: with its own build cache made first in a whole job."""
        if self.shared_gocache is not None:
            argv = [str(PYTHON), "-I", "-S", str(JOBCACHE), str(self.shared_gocache), env["GOCACHE"], *argv]
        return self._run(self._offline(), argv, module, env)

    def _go(self, args: list[str], module: Path) -> StepResult:
        return self._offline_go(["go", *args], module, self.offline_env)

    def _compiling(self, verb: str, module: Path) -> StepResult:
        """``go build ./...`` or ``go vet ./...``: the warm-up's run of it, else offline."""
        return self.warmed.pop((module, verb), None) or self._go([verb, "./..."], module)

    def _compile(self) -> bool:
        """``go build ./...``: code that does not compile fails the build with the compiler's words."""
        for module in self.module_dirs:
            step = self._compiling("build", module)
            if step.timed_out:
                self.rep.errored("timeout", "`go build ./...` ran out of the job's time budget")
                return False
            if not (step.ok or only_test_mains_failed(self.stable_root.real_text(step.stderr), self.modules, self.src)):
                said = "; ".join(self._positions(step, module)[:3]) or step.last_stderr_line()
                self.rep.failed("build", f"`go build ./...` in {self.where(module)} failed: {said}")
                return False
        return True

    def _lint(self) -> list[str]:
        found: list[str] = []
        try:
            for module in self.module_dirs:
                vet = self._compiling("vet", module)
                if not vet.ok:
                    found += self._positions(vet, module, code="vet")
                found += self._gofmt(module)
                if (config := self._golangci_configs().get(module)) is not None:
                    found += self._golangci(module, config)
            if self.fmt_verdicts is not None:
                self.fmt_verdicts.save()
        finally:
            for tree in (self.lint_tree, self.fmt_tree):
                if tree is not None:
                    shutil.rmtree(tree, ignore_errors=True)
            self.lint_tree = self.fmt_tree = None
        return found

    def _golangci_configs(self) -> dict[Path, Path]:
        """Each module's golangci-lint configuration, where it has one; found once, in a whole job before any
        repository code runs."""
        if self.golangci_configs is None:
            found = {module: golangci.config_file(module, self.src) for module in self.module_dirs}
            self.golangci_configs = {module: config for module, config in found.items() if config is not None}
        return self.golangci_configs

    def _golangci(self, module: Path, config: Path) -> list[str]:
        """The repository's golangci-lint configuration, run by the image's golangci-lint."""
        if shutil.which("golangci-lint", path=self.env.get("PATH")) is None:
            self.rep.lint_advisory.append(f"{self.where(module)}:0:0 golangci-lint {golangci.ABSENT}")
            return []
        caches = self._golangci_caches(config)
        env = {**self.offline_env, **caches}
        kept = self._kept_migration(config, env)
        if kept is not None and kept.is_file():  # a v1 configuration converted before
            step = self._golangci_v1(module, config, env, kept) or self._golangci_run(golangci.argv(), module, env)
        else:
            step = self._golangci_run(golangci.argv(), module, env)
            if golangci.refuses_v1(step):
                step = self._golangci_v1(module, config, env, kept) or step
        try:
            return golangci.findings(step, module, self.src)
        except golangci.GolangciError as exc:
            return [f"{self.where(module)}:0:0 golangci-lint-error {exc}"]

    def _golangci_caches(self, config: Path) -> dict[str, str]:
        """golangci-lint's caches: the repository's own for it, which its next job lints from (8.7 s of lint
        becomes 1.1 s on shopspring/decimal), where this job has the shared build cache (a whole job) and the
        configuration loads no plugin; else its analysis cache is the job's, beside the offline steps' build cache.
        Its loader compiles every package's export data and test variants, and re-writes an entry of the build
        cache on each run (a generated test main's): that build cache is its own, never the one the tests read
        through links (``jobcache``), and starts as a copy of the image's standard library seed. golangci-lint runs
        none of the repository's code (like the warm-up's compile, which writes the build cache), but a plugin is
        code the repository could bring."""
        if config not in self.golangci_sharing:
            return {"GOLANGCI_LINT_CACHE": str(self.cfg.workspace / "golangci-cache")}
        lint = self.cache / "go" / "lint"
        analyses, build = lint / "analyses", lint / "build"
        analyses.mkdir(parents=True, exist_ok=True)
        warm.seed(build, self.env)
        build.mkdir(exist_ok=True)
        return {"GOLANGCI_LINT_CACHE": str(analyses), "GOCACHE": str(build)}

    def _golangci_shares_caches(self, config: Path) -> bool:
        """Whether golangci-lint may lint with ``config`` from the repository's caches for it (``_golangci_caches``)."""
        return self.shared_gocache is not None and not golangci.loads_plugins(config)

    def _golangci_run(self, argv: list[str], module: Path, env: dict[str, str]) -> StepResult:
        """golangci-lint offline, writing the repository's golangci-lint caches where ``env`` names them."""
        if not self._writes_shared(env):
            return self._offline_go(argv, module, env)
        shared = (Path(env["GOLANGCI_LINT_CACHE"]), Path(env["GOCACHE"]))
        return self._run(self._offline(shared), argv, module, env, over=self._lint_tree_over())

    def _writes_shared(self, env: dict[str, str]) -> bool:
        """Whether golangci-lint run with ``env`` writes the repository's caches (``_golangci_caches``)."""
        return env["GOCACHE"] != self.offline_env["GOCACHE"]

    def _lint_tree_over(self) -> proc.Mounts:
        """The sources golangci-lint reads where it writes the repository's caches: ``lint_tree``, where there is one,
        over the tree the tests run in."""
        return ((self.lint_tree, self.src),) if self.lint_tree is not None else ()

    def _seen_by_golangci(self, path: Path, env: dict[str, str]) -> Path:
        """Where ``path`` of the sources is for golangci-lint run with ``env`` (``_lint_tree_over``)."""
        if self.lint_tree is None or not self._writes_shared(env):
            return path
        return self.lint_tree / path.relative_to(self.src)

    def _kept_migration(self, config: Path, env: dict[str, str]) -> Path | None:
        """Where the conversion of ``config`` is kept for the repository's next jobs; None where no test can be kept
        from writing the converted copy before it is kept: golangci-lint runs beside the tests, in their tree."""
        tool = fmtcache.tool_identity(shutil.which("golangci-lint", path=self.env.get("PATH")))
        in_private_tree = self.lint_tree is not None and self._writes_shared(env)
        if tool is None or (self.lint_beside_tests and not in_private_tree):
            return None
        return golangci.kept_migration(self.cache / "go", self._seen_by_golangci(config, env), tool)

    def _golangci_v1(self, module: Path, config: Path, env: dict[str, str], kept: Path | None) -> StepResult | None:
        """A v1 configuration run as ``golangci-lint migrate`` converts it (or converted it for an earlier job:
        ``kept``); None where it cannot be converted."""
        copy, command, leftovers = golangci.migration(config)
        seen_copy = self._seen_by_golangci(copy, env)
        try:
            if kept is None or not golangci.use_migration(kept, seen_copy):
                shutil.copyfile(self._seen_by_golangci(config, env), seen_copy)
                if not self._golangci_run(command, module, env).ok:
                    return None
                if kept is not None:
                    golangci.keep_migration(seen_copy, kept)
            step = self._golangci_run(golangci.argv(copy), module, env)
        finally:
            for path in leftovers:
                self._seen_by_golangci(path, env).unlink(missing_ok=True)
        said = config.relative_to(self.src).as_posix()
        self.rep.lint_advisory.append(
            f"{self.where(module)}:0:0 golangci-lint {said} is a golangci-lint v1 configuration: it ran as "
            "`golangci-lint migrate` converts it for the image's v2"
        )
        return step

    def _positions(self, step: StepResult, module: Path, code: str = "compile") -> list[str]:
        """``path:line:col CODE message`` of each position the go command printed, repository-relative."""
        out = []
        # a file outside the command's directory is named as it saw it, at the one path all jobs share
        for line in self.stable_root.real_text(step.stderr + step.stdout).splitlines():
            match = _POSITION.match(line.strip())
            if match is None:
                continue
            path = (module / match["path"]).resolve()
            rel = path.relative_to(self.src.resolve()).as_posix() if path.is_relative_to(self.src.resolve()) else None
            if rel:
                out.append(f"{rel}:{match['line']}:{match['col'] or 0} {code} {match['message'].strip()}")
        return out

    def _gofmt(self, module: Path) -> list[str]:
        """``gofmt -l`` of the module's files, but those it has judged before (``_sort_for_gofmt``)."""
        if module in self.fmt_sorted:
            unformatted, unseen = self.fmt_sorted[module]
            unformatted = unformatted + self._gofmt_listed(list(unseen.files), module, unseen)
        else:
            unformatted = self._gofmt_listed([str(p.relative_to(module)) for p in go_files(module)], module)
        rel = module.relative_to(self.src)
        return [f"{(rel / name).as_posix()}:1:1 gofmt not formatted as gofmt would" for name in unformatted]

    def _gofmt_listed(self, files: list[str], module: Path, unseen: fmtcache.Unseen | None = None) -> list[str]:
        """What ``gofmt -l`` lists of ``files``: read from ``unseen``'s copy, where given, whose verdicts are kept."""
        over = ((unseen.tree, self.src),) if unseen else ()
        listed = []
        for i in range(0, len(files), _FMT_BATCH):
            batch = files[i : i + _FMT_BATCH]
            step = self._run(proc.sandbox(self.cfg.workspace), ["gofmt", "-l", *batch], module, self.offline_env, over)
            found = [line.strip() for line in step.stdout.splitlines() if line.strip()]
            if unseen is not None and self.fmt_verdicts is not None and step.ok:
                self.fmt_verdicts.judge(unseen, batch, set(found))
            listed += found
        return listed

    def _tests(self) -> tuple[gotest.GoTestRun, list[StepResult]]:
        """``go test -short -json`` per module, a coverprofile each; their events read together."""
        events, steps = [], []
        profiles = self.cfg.workspace / "profiles"
        profiles.mkdir(parents=True, exist_ok=True)
        packages, pattern = gotest.selection(self.cfg.select) if self.cfg.select else (["./..."], "")
        for i, module in enumerate(self.module_dirs):
            profile = profiles / f"{i}.out"
            args = ["test", *TEST_FLAGS, "-json", f"-coverprofile={profile}", TEST_EXEC]
            args += [f"-timeout={max(1, int(self.remaining()))}s", *(["-run", pattern] if pattern else []), *packages]
            self.rep.test_command = ["go", *args]
            step = self._go(args, module)
            events.append(step.stdout)
            steps.append(step)
            if profile.is_file():
                self.profiles.append((profile, module))
        run_ = gotest.read_events("\n".join(events), self.modules)
        self.rep.counts, self.rep.failed_tests, self.rep.failures = run_.counts, run_.failed, run_.failures
        return run_, steps

    def _coverage(self) -> None:
        """The modules' coverprofiles merged (``cover.out``) and read, with each function's first line from
        ``go tool cover -func``, into the Coverage contract (``coverage.json`` and the report)."""
        if not self.profiles:
            return
        blocks = [ln for p, _ in self.profiles for ln in p.read_text(encoding="utf-8").splitlines()[1:] if ln.strip()]
        if not blocks:  # no package's tests built or ran: nothing was measured, which is not 100 % of nothing
            self.log.write("coverage: the coverprofiles hold no block; no coverage measured")
            return
        merged = self.cfg.out / PROFILE
        merged.write_text("mode: atomic\n" + "".join(f"{b}\n" for b in blocks), encoding="utf-8")
        funcs = "".join(self._cover_func(profile, module) for profile, module in self.profiles)
        try:
            self.rep.coverage = coverage_formats.from_go(merged.read_text(), funcs, self.modules, self.src)
        except coverage_formats.CoverageFormatError as exc:
            self.log.write(f"coverage: {exc}")
        else:
            (self.cfg.out / COVERAGE).write_text(json.dumps(self.rep.coverage), encoding="utf-8")

    def _cover_func(self, profile: Path, module: Path) -> str:
        """``go tool cover -func`` on the profile's Go files: it lists packages and compiles nothing, so its go
        command starts from an empty build cache of its own instead of links to the shared one (``jobcache``:
        0.05-0.1 s). A file a ``//line`` directive names is left out where it is not Go (hcl 2.25.0's Ragel
        ``scan_tokens.rl``): cover cannot parse it, and stops there, naming no function of the files after it."""
        lines = profile.read_text(encoding="utf-8").splitlines(keepends=True)
        go_files = profile.with_name(f"{profile.stem}-go{profile.suffix}")
        go_files.write_text("".join(lines[:1] + [ln for ln in lines[1:] if _block_file(ln).endswith(".go")]), "utf-8")
        return self._run(self._offline(), ["go", "tool", "cover", f"-func={go_files}"], module, self.offline_env).stdout

    def _judge(self, outcome: tuple[gotest.GoTestRun, list[StepResult]]) -> None:
        tests, steps = outcome
        rep = self.rep
        where = f" while running {tests.running}" if tests.running else ""
        if any(s.timed_out for s in steps) or any("panic: test timed out" in s.stdout for s in steps):
            rep.errored("timeout", f"the test suite ran out of the job's time budget{where}")
        elif tests.failed:
            rep.failed("tests")
        elif tests.no_tests:
            what = "of the selected ids" if self.cfg.select else "at all"
            rep.failed("no_tests", f"`go test` found no tests {what}; add *_test.go files")
        elif bad := next((s for s in steps if not s.ok), None):
            rep.errored("runner_crash", f"`go test` exited {bad.returncode}: {bad.last_stderr_line()}")
        elif rep.lint_errors:
            rep.failed("lint")
