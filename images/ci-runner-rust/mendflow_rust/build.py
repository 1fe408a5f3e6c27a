"""A Rust (cargo) project's build, the way its own CI runs one: ``cargo fetch`` with the network (crates.io, or
the registry the trusted side names), then, offline, the test binaries built (``cargo test --no-run``: a
compile error is FAILED ``build``), ``cargo clippy`` and ``cargo fmt --check``, and ``cargo test`` with
source-based coverage.

Every step builds with ``-C instrument-coverage`` (beside the repository's own RUSTFLAGS), so the build, clippy's
check and the test run share one compile of the dependencies. The toolchain is the image's (a
``rust-toolchain.toml`` asking for another is not downloaded: cargo runs the one it has, and ``pin`` says so); the
registry cache is the repository's dependency cache; each job has its own target directory, which starts from the
dependencies' build an earlier job kept (``cooked``), and the crate's own units where compiling them runs none of
its code.
Every cargo command sees the workspace at one path for all jobs (``proc.StableRoot``), the path a kept unit's
coverage map names; what cargo and the coverage tools print is read back at the job's real path.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from mendflow_runner import coverage_formats, handoff, proc
from mendflow_runner.config import JobConfig
from mendflow_runner.language_build import LanguageBuild
from mendflow_runner.proc import Log, StepResult
from mendflow_runner.report import Report
from mendflow_runner.testing import RunResults

from . import cooked, coverage, libtest, messages, pin

MANIFEST, LOCKFILE = "Cargo.toml", "Cargo.lock"
CRATES_IO_INDEX = "https://index.crates.io/"
COVERAGE, LCOV = "coverage.json", "lcov.info"
# The target kinds whose doctests cargo runs (a crate's library, whatever crate types it is built as).
LIBRARY_KINDS = {"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"}
# Every cargo command: the whole workspace, JSON messages, no colour.
_WORKSPACE = ["--workspace", "--message-format=json"]


class RustBuild(LanguageBuild[tuple[RunResults, StepResult]]):
    one_path_for_every_job = True  # a kept unit's coverage map names the files where cargo saw them
    # clippy and the tests build in one target directory, which cargo locks (one would wait for the other), and
    # the build is kept between them (``_keep_compiled``), before any test runs
    lint_beside_tests = False

    def __init__(self, cfg: JobConfig, rep: Report, log: Log) -> None:
        self.binaries: list[messages.TestBinary] = []
        self.locked = False
        self.doctests = 0  # doctests the test step ran: no profile counts them
        self.kept: cooked.Kept | None = None  # the build kept for this job's key (a whole job's)
        self.compiled_from: cooked.Sources | None = None  # the files as the build found them
        self.compiled_anew = False  # whether the build or clippy compiled a unit the job did not start with
        super().__init__(cfg, rep, log)

    # -- the environment ------------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = super()._environment()
        env.update(
            CARGO_HOME=str(self.cache / "cargo"),
            CARGO_TARGET_DIR=str(self.target),
            CARGO_TERM_COLOR="never",
            CARGO_INCREMENTAL="0",  # CI builds once: incremental state is only more to write
            RUST_BACKTRACE="0",  # a panic's message and location, not its frames
            RUSTFLAGS=" ".join(f for f in (env.get("RUSTFLAGS", ""), coverage.FLAGS) if f),
            LLVM_PROFILE_FILE=str(self.profiles / "%p-%m.profraw"),
        )
        return env

    @property
    def target(self) -> Path:
        return self.cfg.workspace / "target"

    @property
    def profiles(self) -> Path:
        return self.cfg.workspace / "profiles"

    def _use_job_caches(self) -> None:
        self.env["CARGO_HOME"] = str(self.cfg.workspace / "cargo-home")

    @property
    def handoff_dirs(self) -> list[Path]:
        return [self.src, Path(self.env["CARGO_HOME"])]

    @property
    def dependency_dirs(self) -> list[Path]:
        return [Path(self.env["CARGO_HOME"])]

    @property
    def offline_env(self) -> dict[str, str]:
        return {**self.env, "CARGO_NET_OFFLINE": "true", "TMPDIR": str(self.tmp)}

    @property
    def toolchain(self) -> tuple[Path, ...]:
        """The toolchain's root (its bin's parent): a sandbox whose ``/tmp`` is fresh must see it again when the
        local launcher keeps it under the host's ``/tmp``."""
        cargo = shutil.which("cargo", path=self.env.get("PATH"))
        return (Path(cargo).resolve().parent.parent,) if cargo else ()

    # -- the steps -------------------------------------------------------------------------------------------

    def _read_project(self) -> bool:
        if not (self.src / MANIFEST).is_file():
            self.rep.errored("bad_input", "no Cargo.toml at the repository's root: this is not a cargo project")
            return False
        try:
            libtest.selection(self.cfg.select)
        except libtest.SelectionError as exc:
            self.rep.errored("bad_input", f"--select: {exc}")
            return False
        self.locked = (self.src / LOCKFILE).is_file()
        if said := pin.unmet(self.src, self.env):
            self.rep.lint_advisory.append(said)
        return True

    @property
    def _lock_flag(self) -> list[str]:
        """``--locked`` where the repository has a lockfile: it is the authority, never rewritten."""
        return ["--locked"] if self.locked else []

    def _download(self) -> bool:
        self._use_index(os.environ.get("MENDFLOW_CARGO_INDEX", CRATES_IO_INDEX))
        return self._fetch(["cargo", "fetch", *self._lock_flag], self.src)

    def _after_download(self) -> None:
        """A whole job's build starts from the one the repository's last job with the same manifests, lockfile and
        toolchain kept (its files stamped for the crate's own units in it), else from the dependencies built now
        from the workspace's stub, and kept (``cooked``)."""
        if self.phase != handoff.WHOLE:
            return
        self.kept = cooked.Kept.for_project(self.cache, self.src, self.offline_env)
        if not self.kept:
            return
        self.compiled_from = cooked.Sources.of(self.src, self._seen(self.cfg.workspace))  # before anything compiles
        if self.kept.restore(self.target, self.src, self.compiled_from):
            return
        if cooked.has_dependencies(self.src) and self._cook():
            self.kept.keep(self.target)

    def _keep_compiled(self) -> None:
        """The build kept again once the crate's own units are compiled, before any test runs, where compiling them
        ran none of the repository's code (``cooked.compiles_without_running_code``) and something new was
        compiled."""
        if self.kept and self.compiled_from and self.compiled_anew and cooked.compiles_without_running_code(self.src):
            self.kept.keep(self.target, self.compiled_from)

    def _cook(self) -> bool:
        """The dependencies built from a stub of the workspace, in the offline sandbox (no repository code runs:
        the stub has none), with the job's own commands, then the stub's packages cleaned away; False (and no
        build left) when that fails."""
        stub, local = self.cfg.workspace / "stub", cooked.local_packages(self.src)
        cooked.make_stub(self.src, stub)
        build = ["test", *_WORKSPACE, "--no-run"]
        steps = [self._cargo(args, cwd=stub) for args in (build, ["clippy", *_WORKSPACE, "--all-targets"])]
        clean = self._cargo(["clean", *(a for n, v in local for a in ("-p", f"{n}@{v}"))], cwd=stub)
        shutil.rmtree(stub, ignore_errors=True)
        if any(s.timed_out for s in steps) or not clean.ok or cooked.stubs_left(self.target, local):
            shutil.rmtree(self.target, ignore_errors=True)  # the real build starts from nothing, as without it
            return False
        return True

    def _use_index(self, index: str) -> None:
        """The trusted side's index, when it is not crates.io's, replaces crates.io for this job (cargo's source
        replacement, in the job's CARGO_HOME, which its dependency cache is)."""
        if index.rstrip("/") == CRATES_IO_INDEX.rstrip("/"):
            return
        config = Path(self.env["CARGO_HOME"]) / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        url = index if index.startswith("sparse+") else f"sparse+{index}"
        config.write_text(
            f'[source.crates-io]\nreplace-with = "mendflow"\n\n[source.mendflow]\nregistry = "{url}"\n',
            encoding="utf-8",
        )

    def _cargo(self, args: list[str], harness: list[str] | None = None, cwd: Path | None = None) -> StepResult:
        """A cargo command offline in the sandbox (in the repository, or ``cwd``), its two streams as one (libtest's
        results go to stdout, cargo's ``Running`` lines to stderr: only together do they say which target a result
        belongs to)."""
        argv = ["cargo", *args, *self._lock_flag, "--offline", *(["--", *harness] if harness else [])]
        readable = (Path(self.env["CARGO_HOME"]), *self.toolchain)
        step = self._run(
            proc.sandbox(self.cfg.workspace, readable),
            ["sh", "-c", 'exec "$0" "$@" 2>&1', *argv],
            cwd or self.src,
            self.offline_env,
        )
        out = self.stable_root.real_text(step.stdout)
        self.compiled_anew = self.compiled_anew or messages.compiled_anew(out)
        return StepResult(
            argv, step.returncode, out, self.stable_root.real_text(step.stderr), step.duration, step.timed_out
        )

    def _seen(self, path: Path) -> str:
        """``path`` (in the workspace) as cargo sees it."""
        return self.stable_root.path(str(path))

    def _compile(self) -> bool:
        """The test binaries, built as ``cargo test`` would build them: code that does not compile fails the build
        in the compiler's words."""
        step = self._cargo(["test", *_WORKSPACE, "--no-run"])
        if step.timed_out:
            self.rep.errored("timeout", "`cargo test --no-run` ran out of the job's time budget")
            return False
        self.binaries = messages.test_binaries(step.stdout, self.src)
        if not step.ok:
            self.rep.failed("build", f"`cargo test --no-run` failed: {self._compile_error(step)}")
            return False
        return True

    def _compile_error(self, step: StepResult) -> str:
        """The workspace's compile errors, else a dependency's (a dependency that does not compile fails the own
        ``cargo test`` too: paste 1.0.15's ``paste-test-suite``), else cargo's own ``error:`` line."""
        said = messages.diagnostics(step.stdout, self.src) or messages.dependency_errors(step.stdout, self.src)
        return "; ".join(said[:3]) or self.in_repo(messages.cargo_error(step.stdout))

    def _lint(self) -> list[str]:
        found: list[str] = []
        # --keep-going: a target that cannot compile here (a bench on nightly's #![feature]) stops no other's lint
        clippy = self._cargo(["clippy", *_WORKSPACE, "--all-targets", "--keep-going"])
        if "no such command" in clippy.stdout:
            self.rep.lint_advisory.append(".:0:0 clippy is not installed: nothing linted")
        else:
            found += messages.diagnostics(clippy.stdout, self.src, levels=("error", "warning"))
        self._keep_compiled()
        fmt = self._run(
            proc.sandbox(self.cfg.workspace),
            ["cargo", "fmt", "--all", "--check", "--", "-l"],
            self.src,
            self.offline_env,
        )
        if "no such command" in fmt.stderr:
            self.rep.lint_advisory.append(".:0:0 rustfmt is not installed: formatting not checked")
            return found
        for line in self.stable_root.real_text(fmt.stdout).splitlines():
            path = Path(line.strip())
            if path.is_absolute() and path.is_relative_to(self.src):
                found.append(f"{path.relative_to(self.src).as_posix()}:1:1 rustfmt not formatted as rustfmt would")
        return found

    def _tests(self) -> tuple[RunResults, StepResult]:
        targets, names = libtest.selection(self.cfg.select) if self.cfg.select else ([], [])
        filters = ["--exact", *names] if names else []
        step = self._cargo(["test", "--workspace", "--no-fail-fast", *targets], filters)
        self.rep.test_command = step.argv
        docs = {b.name: b.source for b in self.binaries if b.kind in LIBRARY_KINDS}
        run = libtest.read(step.stdout, docs)
        self.doctests = libtest.doctests_ran(step.stdout)
        self.rep.counts, self.rep.failed_tests, self.rep.failures = run.counts, run.failed, run.failures
        return run, step

    def _coverage(self) -> None:
        self._doctests_unmeasured()
        raw = sorted(self.profiles.glob("*.profraw"))
        if not raw or not self.binaries:
            return
        try:
            lcov = self._export(raw)
        except coverage.CoverageToolsMissing as exc:
            self.rep.lint_advisory.append(f".:0:0 coverage {exc}")
            return
        if lcov is None:
            return
        try:
            self.rep.coverage = coverage_formats.from_lcov(lcov, self.src)
        except coverage_formats.CoverageFormatError as exc:
            self.log.write(f"coverage: {exc}")
            return
        (self.cfg.out / LCOV).write_text(lcov, encoding="utf-8")
        (self.cfg.out / COVERAGE).write_text(json.dumps(self.rep.coverage), encoding="utf-8")

    def _doctests_unmeasured(self) -> None:
        """Instrumenting doctests takes rustdoc's -Z flags (cargo-llvm-cov's --doctests needs nightly); a crate whose
        tests are its doctests (percent-encoding 2.3.1; static_assertions 1.1.0, whose macros leave no coverage at
        all) would read as untested without this line."""
        if self.doctests:
            ran = f"{self.doctests} doctest{'s' if self.doctests > 1 else ''} ran"
            said = f"{ran} unmeasured: stable Rust cannot instrument doctests"
            self.rep.lint_advisory.append(f".:0:0 coverage {said}")

    def _proc_macro_dirs(self) -> list[str]:
        """The source directories of proc-macro crates: their code runs inside rustc while it compiles the tests,
        so no profile counts it, and 0 % would say its tests are missing. Left out, with an advisory."""
        dirs = sorted({Path(b.source).parent.as_posix() for b in self.binaries if b.kind == "proc-macro"})
        if dirs:
            said = "proc-macro code runs inside the compiler, where no test binary measures it: left out of coverage"
            self.rep.lint_advisory.append(f"{dirs[0]}:0:0 coverage {said}")
        return dirs

    def _export(self, raw: list[Path]) -> str | None:
        version = self._tool(["rustc", "-vV"])
        sysroot = self._tool(["rustc", "--print", "sysroot"]).stdout.strip()
        major = coverage.llvm_major(version)
        tools = {
            name: coverage.find_tool(name, major, Path(sysroot) if sysroot else None, self.env.get("PATH"))
            for name in ("llvm-profdata", "llvm-cov")
        }
        merged = self.cfg.workspace / "merged.profdata"
        merge = self._tool([tools["llvm-profdata"], "merge", "-sparse", *map(str, raw), "-o", str(merged)])
        objects = [arg for b in self.binaries for arg in ("--object", b.executable)][1:]
        export = self._tool(
            [
                tools["llvm-cov"],
                "export",
                "--format=lcov",
                f"--instr-profile={merged}",
                f"--ignore-filename-regex={coverage.ignored(Path(self._seen(self.src)), self._proc_macro_dirs())}",
                *objects,
            ]
        )
        if not (merge.ok and export.ok):
            failed = export if merge.ok else merge
            said = f"`{Path(failed.argv[0]).name} {failed.argv[1]}` failed: {coverage.tool_error(failed)}"
            self.rep.lint_advisory.append(f".:0:0 coverage {said}: no coverage")
            return None
        names = coverage.symbols(export.stdout)
        demangler = coverage.find_demangler(major, Path(sysroot) if sysroot else None, self.env.get("PATH"))
        demangled = self._tool([demangler, *names]).stdout.splitlines() if names and demangler else []
        return self.stable_root.real_text(
            coverage.demangle_names(export.stdout, dict(zip(names, demangled, strict=False)))
        )

    def _tool(self, argv: list[str]) -> StepResult:
        """A toolchain command on the job's own files (no repository code runs)."""
        return proc.run(argv, cwd=self.src, env=self.offline_env, timeout=self.remaining(), log=self.log)

    def _judge(self, outcome: tuple[RunResults, StepResult]) -> None:
        run, step = outcome
        rep = self.rep
        where = f" while running {run.running}" if run.running else ""
        if step.timed_out:
            rep.errored("timeout", f"the test suite ran out of the job's time budget{where}")
        elif run.failed:
            rep.failed("tests")
        elif not step.ok:
            rep.failed("tests", f"`cargo test` exited {step.returncode}: {step.last_stderr_line()}")
        elif run.counts["total"] == 0:
            what = "of the selected ids" if self.cfg.select else "at all"
            rep.failed("no_tests", f"`cargo test` ran no tests {what}; add #[test] functions or tests/*.rs")
        elif rep.lint_errors:
            rep.failed("lint")
