"""Benchmark: B1 of real projects in each language mendflow builds, as their maintainers publish them.

For each subject — the shipped example and real modules from the language's registry — one run measures, side
by side: the B1 status mendflow gives (target: PASSED where the project's own test command passes), its line
coverage, and mendflow's build job (the local launcher's sandboxed job: unpack, dependency phase, build, lint,
tests, coverage) ÷ the project's own test-with-coverage command run directly, both warm (target ≤ 1.2): on the
commit both sides have built already, and on a new one (a comment appended to one source file and committed, as
a push brings), which is what a CI run builds and what the own side then compiles again.

    uv run python bench/languages.py [--repeat 3] [--json] [--language go|typescript|rust|java ...] [--subject NAME ...]

Subjects: Go modules as the module proxy serves them (``go mod download``), npm packages as their tarballs ship
(``npm pack``: the few popular packages that still publish their tests), crates as crates.io serves them, Maven
projects as their maintainers deploy them to Maven Central (fetched by Maven into the bench's own local repository):
a source-release zip where the project deploys one, else its pom with its sources and test-sources jars.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.repos import commit_files  # noqa: E402

# (subject, module@version or None for the example); the real modules have tests and a go.sum as published.
GO_SUBJECTS = [
    ("go-ratelimit (example)", None),
    ("github.com/google/uuid", "github.com/google/uuid@v1.6.0"),
    ("github.com/cespare/xxhash/v2", "github.com/cespare/xxhash/v2@v2.3.0"),
    ("github.com/google/go-cmp", "github.com/google/go-cmp@v0.6.0"),
    # errgroup, semaphore and singleflight: a suite whose tests wait on real time.
    ("golang.org/x/sync", "golang.org/x/sync@v0.8.0"),
    # two small dependencies (tidwall/match, tidwall/pretty); a suite of seconds, mostly its own package's
    ("github.com/tidwall/gjson", "github.com/tidwall/gjson@v1.17.1"),
    # a golangci-lint configuration of its own (19 linters: the repository's golangci-lint caches) and a suite of
    # seconds
    ("github.com/shopspring/decimal", "github.com/shopspring/decimal@v1.6.0"),
    # no dependencies; a suite of seconds, its scheduler's tests waiting on real time
    ("github.com/robfig/cron/v3", "github.com/robfig/cron/v3@v3.0.1"),
    # four example commands, which `go build ./...` links: the repository's cache keeps them linked
    ("github.com/gorilla/websocket", "github.com/gorilla/websocket@v1.5.3"),
    # With dependencies from the module proxy; two of its tests fail as published here (TestDirExists and
    # TestNoDirExists), and its suite package takes half a minute.
    ("github.com/stretchr/testify", "github.com/stretchr/testify@v1.9.0"),
]
# (subject, name@version or None, the project's own test-with-coverage command). npm tarballs carry no lockfile:
# both sides install what the manifest's ranges resolve to today. A package's own command is its ``npm test``, the
# whole test script mendflow runs too (its linters aside, which mendflow runs as its lint step), where that script
# measures coverage or the package configures none, and it can run as published.
TS_SUBJECTS = [
    ("ts-invoice (example)", None, ["npx", "vitest", "run", "--coverage.enabled"]),
    # eslint, then c8 --100 node --test, then tstyche
    ("light-my-request", "light-my-request@6.8.1", ["npm", "test"]),
    ("exponential-backoff", "exponential-backoff@3.1.3", ["npx", "jest", "--coverage"]),  # jest 24, ts-jest
    # vitest, no coverage provider in its manifest. Not its npm test: that runs tsc --noEmit after the tests, and
    # the tarball ships no tsconfig.json, so tsc prints its help and fails the script (mendflow skips the gate).
    ("css-what", "css-what@8.0.0", ["npm", "run", "test:vi"]),
    # c8 --100 node --test, then jest on one file, then tstyche: two test runners in one script
    ("process-warning", "process-warning@5.1.1", ["npm", "test"]),
    # c8 --100 node --test behind its own lint script, as in light-my-request
    ("@fastify/merge-json-schemas", "@fastify/merge-json-schemas@0.2.1", ["npm", "test"]),
    # a prepublish script of its own (the root package's install scripts run on each job's kept install); its npm
    # test lints (eslint), runs nyc tape, then audits (aud: the registry's audit API)
    ("minimist", "minimist@1.2.8", ["npm", "test"]),
    # standard, then tape piped to tap-dot in child processes, then tsd: no c8 or nyc, so V8's data is mendflow's
    ("close-with-grace", "close-with-grace@2.1.0", ["npm", "test"]),
    # borp -C --check-coverage with @jsumners/line-reporter, then tstyche: mendflow runs the borp itself
    ("@fastify/sensible", "@fastify/sensible@6.0.6", ["npm", "test"]),
]
RUST_SUBJECTS = [
    ("rust-duration (example)", None),
    ("itoa", "itoa@1.0.11"),
    ("semver", "semver@1.0.23"),
    ("heck", "heck@0.5.0"),  # no dependencies; a #[cfg(test)] module in each case convention's file
    # serde and serde_json for its tests: the dependencies' build a job keeps for the next (mendflow_rust.cooked).
    ("either", "either@1.13.0"),
    # large generated tables: its own crate's compile is most of a cold build (quickcheck for its tests)
    ("unicode-segmentation", "unicode-segmentation@1.11.0"),
    # serde and serde_test for its tests, and a suite of seconds with loom's cfg left off
    ("bytes", "bytes@1.7.1"),
    # an optional dependency (no-panic) left off; rand and num_cpus for its tests; a suite of seconds
    ("ryu", "ryu@1.0.18"),
]
# (subject, groupId:artifactId:version:how it is published, or None for the example). ``source-release``: the
# project's whole tree as Apache's release profile zips it; ``sources``: its pom, and its sources and test-sources
# jars laid out as Maven's standard directories (what the jars hold: code and resources, main and test).
JAVA_SUBJECTS = [
    ("java-isbn (example)", None),
    # JUnit 5, no runtime dependencies; commons-parent 72 binds apache-rat, build-plan and bundle checks before test.
    ("commons-cli", "commons-cli:commons-cli:1.9.0:sources"),
    # JUnit 5, no runtime dependencies; about 850 tests in seconds
    ("commons-csv", "org.apache.commons:commons-csv:1.14.1:sources"),
    # JUnit 4 with hamcrest, five dependencies; maven-parent 39 binds spotless, checkstyle and apache-rat before test,
    # and one test class (StreamPollFeederTest) sleeps for seconds.
    ("maven-shared-utils", "org.apache.maven.shared:maven-shared-utils:3.4.2:source-release"),
]
# Who fetches a subject's published files, and who runs its own command, when its pom names no JaCoCo itself.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
JACOCO = "org.jacoco:jacoco-maven-plugin:0.8.14"
TIME_TARGET = 1.2  # mendflow's warm job ÷ the own command, at most
Subject = TypeVar("Subject", bound=tuple[object, ...])  # (name, how it is fetched, ...)


@dataclass
class Row:
    language: str
    subject: str
    own_status: str
    b1_status: str
    line_pct: float | None
    own_sec: float
    mendflow_sec: float
    cold_mendflow_sec: float
    files: int
    own_new_sec: float  # the same on a new commit (one source file edited)
    mendflow_new_sec: float

    @property
    def ratio(self) -> float:
        return self.mendflow_sec / self.own_sec if self.own_sec else float("nan")

    @property
    def ratio_new(self) -> float:
        return self.mendflow_new_sec / self.own_new_sec if self.own_new_sec else float("nan")

    @property
    def meets_status(self) -> bool:
        """The status target: B1 PASSED where the own command passes; where it does not, B1 agreeing is all the
        row can say."""
        return self.b1_status == self.own_status

    @property
    def status_met(self) -> str:
        """The status target in words. B1 passing where the own command fails names the bench's command as the
        suspect (css-what's ``npm test`` as published cannot run its tsc gate), not mendflow."""
        if self.meets_status:
            return "met" if self.own_status == "PASSED" else f"both {self.own_status}"
        if self.own_status == "PASSED":
            return "NOT MET"
        return f"own {self.own_status}, B1 {self.b1_status}: check the own command"

    @property
    def time_met(self) -> bool:
        return self.ratio <= TIME_TARGET


def go_env(work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GOMODCACHE": str(work / "own-mod"),
        "GOCACHE": str(work / "own-build"),
        "GOFLAGS": "-modcacherw",
        "GOTOOLCHAIN": "local",
    }


def go_files(module: str, target: Path, work: Path) -> None:
    out = subprocess.run(
        ["go", "mod", "download", "-json", module], env=go_env(work), capture_output=True, text=True, check=True
    )
    shutil.copytree(json.loads(out.stdout)["Dir"], target)


def npm_files(package: str, target: Path, work: Path) -> None:
    packs = work / "packs"
    packs.mkdir(exist_ok=True)
    out = subprocess.run(
        ["npm", "pack", "--silent", package, "--pack-destination", str(packs)],
        capture_output=True,
        text=True,
        check=True,
    )
    unpacked = work / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir()
    subprocess.run(
        ["tar", "--no-same-owner", "-xzf", str(packs / out.stdout.strip().splitlines()[-1])], cwd=unpacked, check=True
    )
    shutil.copytree(unpacked / "package", target)


def crate_files(spec: str, target: Path, work: Path) -> None:
    name, version = spec.split("@")
    url = f"https://static.crates.io/crates/{name}/{name}-{version}.crate"
    archive = work / f"{name}-{version}.crate"
    with urllib.request.urlopen(url, timeout=60) as response:
        archive.write_bytes(response.read())
    subprocess.run(["tar", "--no-same-owner", "-xzf", str(archive)], cwd=work, check=True)
    shutil.copytree(work / f"{name}-{version}", target)


def maven_artifact(coordinates: str, work: Path) -> Path:
    """``groupId:artifactId:version:type[:classifier]`` fetched by Maven into the bench's local repository."""
    repo_local = work / "own-m2"
    get = [f"{DEPENDENCY_PLUGIN}:get", f"-Dartifact={coordinates}", "-Dtransitive=false"]
    subprocess.run(
        ["mvn", "-B", "-q", f"-Dmaven.repo.local={repo_local}", *get],
        cwd=work,
        capture_output=True,
        check=True,
    )
    group, artifact, version, kind, *classifier = coordinates.split(":")
    name = "-".join([artifact, version, *classifier])
    return repo_local.joinpath(*group.split("."), artifact, version, f"{name}.{kind}")


def maven_files(spec: str, target: Path, work: Path) -> None:
    group, artifact, version, published = spec.split(":")
    gav = f"{group}:{artifact}:{version}"
    if published == "source-release":
        with zipfile.ZipFile(maven_artifact(f"{gav}:zip:source-release", work)) as archive:
            archive.extractall(work / "unpacked-java")
        shutil.copytree(work / "unpacked-java" / f"{artifact}-{version}", target)
        return
    target.mkdir(parents=True)
    shutil.copyfile(maven_artifact(f"{gav}:pom", work), target / "pom.xml")
    for classifier, side in (("sources", "main"), ("test-sources", "test")):
        with zipfile.ZipFile(maven_artifact(f"{gav}:jar:{classifier}", work)) as archive:
            for entry in archive.namelist():
                if entry.endswith("/") or entry.startswith("META-INF/"):  # the jar's manifest, pom and notices
                    continue
                kind = "java" if entry.endswith(".java") else "resources"
                path = target / "src" / side / kind / entry
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(archive.read(entry))


def subject_repo(
    name: str, spec: str | None, example: str, fetch: Callable[[str, Path, Path], None], work: Path
) -> Path:
    """A git repository of the subject's files as its registry serves them (or the shipped example)."""
    target = work / "repos" / name.replace("/", "_").split(" ")[0]
    if spec is None:
        shutil.copytree(ROOT / "examples" / example, target)
    else:
        fetch(spec, target, work)
        for path in target.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    files: dict[str, str | bytes | None] = {
        str(p.relative_to(target)): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()
    }
    shutil.rmtree(target)
    target.mkdir(parents=True)
    import pygit2

    pygit2.init_repository(str(target), initial_head="main")
    commit_files(target, files, "as published", ignored_too=True)
    return target


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    return time.perf_counter() - start, "PASSED" if proc.returncode == 0 else "FAILED"


def own_go(repo: Path, work: Path) -> tuple[float, str]:
    """The project's tests with coverage as its CI runs them, directly: the command mendflow runs, with
    ``-count=1`` so Go's test result cache (which a new commit's CI does not hit) answers nothing."""
    argv = ["go", "test", "-short", "-count=1", "-covermode=atomic", f"-coverprofile={work / 'own.out'}", "./..."]
    return _timed(argv, own_checkout(repo, work), go_env(work))


def own_checkout(repo: Path, work: Path) -> Path:
    """The project's own working copy beside mendflow's: its installs and build output stay out of the repo."""
    own = work / "own" / repo.name
    if not own.exists():
        shutil.copytree(repo, own, ignore=shutil.ignore_patterns(".git"))
    return own


def own_node(command: list[str]) -> Callable[[Path, Path], tuple[float, str]]:
    """The package's own test command, after its install (untimed: mendflow's side is timed warm too)."""

    def run(repo: Path, work: Path) -> tuple[float, str]:
        own = own_checkout(repo, work)
        if not (own / "node_modules").exists():
            install = ["npm", "ci"] if (own / "package-lock.json").exists() else ["npm", "install", "--no-package-lock"]
            subprocess.run([*install, "--no-audit", "--no-fund"], cwd=own, capture_output=True, check=True)
        return _timed(command, own, {**os.environ, "CI": "true"})

    return run


def own_rust(repo: Path, work: Path) -> tuple[float, str]:
    """``cargo test`` with source-based coverage and its LCOV export, as a crate's CI gets coverage by hand (warm
    target directory: the project's own CI cache)."""
    own = own_checkout(repo, work)
    profiles = work / "own-profiles"
    shutil.rmtree(profiles, ignore_errors=True)
    env = {
        **os.environ,
        "RUSTFLAGS": "-C instrument-coverage",
        "LLVM_PROFILE_FILE": f"{profiles}/%p-%m.profraw",
        "CARGO_TARGET_DIR": str(work / "own-target"),
    }
    env.pop("RUST_BACKTRACE", None)  # as a crate's CI has it (anyhow's tests expect no backtrace)
    start = time.perf_counter()
    tests = subprocess.run(["cargo", "test", "-q"], cwd=own, env=env, capture_output=True, check=False)
    built = subprocess.run(
        ["cargo", "test", "--no-run", "--message-format=json"],
        cwd=own,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    binaries = [e["executable"] for e in map(json.loads, built.stdout.splitlines()) if e.get("executable")]
    merged = profiles / "merged.profdata"
    subprocess.run(
        ["llvm-profdata-22", "merge", "-sparse", *map(str, profiles.glob("*.profraw")), "-o", str(merged)],
        capture_output=True,
        check=False,
    )
    objects = [arg for b in binaries for arg in ("--object", b)][1:]
    subprocess.run(
        ["llvm-cov-22", "export", "--format=lcov", f"--instr-profile={merged}", *objects],
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start, "PASSED" if tests.returncode == 0 else "FAILED"


def own_maven(repo: Path, work: Path) -> tuple[float, str]:
    """``mvn test`` as the project's pom runs it (its checks bound before ``test`` included) with JaCoCo's agent
    and XML report, unless the pom brings JaCoCo itself; a fresh checkout's ``target/`` (a new commit's CI compiles
    again), the local repository warm (the project's own CI cache)."""
    own = own_checkout(repo, work)
    shutil.rmtree(own / "target", ignore_errors=True)
    agent = [] if b"jacoco-maven-plugin" in (own / "pom.xml").read_bytes() else [f"{JACOCO}:prepare-agent"]
    argv = ["mvn", "-B", f"-Dmaven.repo.local={work / 'own-m2'}", *agent, "test", f"{JACOCO}:report"]
    return _timed(argv, own, dict(os.environ))


def mendflow_b1(repo: Path) -> tuple[float, str, float | None]:
    """mendflow's B1 build job of ``repo`` (resolve, the sandboxed job, the report collected and published)."""
    from mendflow import source as sources
    from mendflow.settings import get_settings
    from mendflow.store import open_store
    from tasks.ci import run_build_job

    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    source = sources.resolve(str(repo), None, "main", store, settings)
    store.delete_prefix(source.artefacts.builds(source.commit_sha, "B1"))  # every repeat builds again
    start = time.perf_counter()
    report = run_build_job(source, "B1", 1, store, settings)
    wall = time.perf_counter() - start
    if report.error_reason:
        print(f"{repo.name}: B1 {report.status.value}: {report.error_reason}", file=sys.stderr)
    return wall, report.status.value, report.coverage.line_pct if report.coverage else None


SOURCE_SUFFIXES = {
    "go": (".go",),
    "typescript": (".ts", ".js", ".mjs", ".cjs", ".mts"),
    "rust": (".rs",),
    "java": (".java",),
}
LANGUAGES = list(SOURCE_SUFFIXES)


def edited_source(language: str, repo: Path) -> Path:
    """The source file a new commit edits: the shallowest non-test one where the project keeps its code (a Go
    module's packages, ``src/``, ``lib/``, ``src/main/java``), else the package's entry point."""
    places = {"go": [""], "rust": ["src"], "typescript": ["src", "lib"], "java": ["src/main/java"]}[language]
    for place in places:
        found = sorted((repo / place).rglob("*"), key=lambda p: (len(p.parts), p))
        for path in found:
            if path.suffix in SOURCE_SUFFIXES[language] and not _is_test(path.relative_to(repo)):
                return path
    return repo / json.loads((repo / "package.json").read_text()).get("main", "index.js")


def _is_test(path: Path) -> bool:
    name = path.name
    return (
        name.endswith(("_test.go", ".d.ts"))
        or any(mark in name for mark in (".test.", ".spec."))
        or bool({"test", "tests", "__tests__", "node_modules", "testdata", "vendor", ".git"} & set(path.parts))
    )


def new_commit(repo: Path, own: Path, edited: Path, n: int) -> None:
    """A commit the project has not built: a comment appended to ``edited`` (after a blank line, as gofmt and
    rustfmt keep it), in mendflow's repository and the own side's working copy alike."""
    text = (repo / edited).read_text() + f"\n// bench: commit {n}\n"
    commit_files(repo, {str(edited): text}, f"bench commit {n}")
    (own / edited).write_text(text)


def measure(
    language: str, name: str, repo: Path, work: Path, repeat: int, own_run: Callable[[Path, Path], tuple[float, str]]
) -> Row:
    """Cold once, then per repeat, interleaved so both sides see the same machine: the commit both have built,
    then a new commit (what a CI run on a push builds)."""
    cold, status, line_pct = mendflow_b1(repo)
    own_status = own_run(repo, work)[1]  # warms the project's own caches
    own_dir = own_checkout(repo, work)
    edited = edited_source(language, repo).relative_to(repo)
    own, ours, own_new, ours_new = [], [], [], []
    for n in range(repeat):
        own.append(own_run(repo, work)[0])
        ours.append(mendflow_b1(repo)[0])
        new_commit(repo, own_dir, edited, n)
        own_new.append(own_run(repo, work)[0])
        wall, status, line_pct = mendflow_b1(repo)
        ours_new.append(wall)
    files = sum(1 for p in repo.rglob("*") if p.suffix in SOURCE_SUFFIXES[language] and ".git" not in p.parts)
    median = statistics.median
    return Row(
        language,
        name,
        own_status,
        status,
        line_pct,
        own_sec=median(own),
        mendflow_sec=median(ours),
        cold_mendflow_sec=cold,
        files=files,
        own_new_sec=median(own_new),
        mendflow_new_sec=median(ours_new),
    )


def table(rows: list[Row]) -> str:
    head = (
        "| language | subject | source files | own test | B1 | status target | line % | own s | mendflow s "
        "| ratio (warm) | own s (new commit) | mendflow s (new commit) | ratio (new commit) | cold s |"
    )
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        pct = f"{r.line_pct:.1f}" if r.line_pct is not None else "—"
        ratio = f"**{r.ratio:.2f}**" if r.time_met else f"{r.ratio:.2f}"
        lines.append(
            f"| {r.language} | {r.subject} | {r.files} | {r.own_status} | {r.b1_status} | {r.status_met} | {pct} "
            f"| {r.own_sec:.2f} | {r.mendflow_sec:.2f} | {ratio} | {r.own_new_sec:.2f} | {r.mendflow_new_sec:.2f} "
            f"| {r.ratio_new:.2f} | {r.cold_mendflow_sec:.2f} |"
        )
    return "\n".join([*lines, "", *summary(rows)])


def summary(rows: list[Row]) -> list[str]:
    """Per language, how many subjects meet each target (bold ratios above meet the time one)."""
    said = []
    for language in dict.fromkeys(r.language for r in rows):
        mine = [r for r in rows if r.language == language]
        status = sum(r.meets_status for r in mine)
        timed = sum(r.time_met for r in mine)
        said.append(
            f"- {language}: status target on {status} of {len(mine)}; ratio ≤ {TIME_TARGET} warm on {timed} of "
            f"{len(mine)}"
        )
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--language", action="append", choices=LANGUAGES)
    parser.add_argument("--subject", action="append", help="only the subjects so named (repeatable)")
    args = parser.parse_args(argv)
    chosen = args.language or LANGUAGES

    def picked(subjects: list[Subject], language: str) -> list[Subject]:
        """The subjects of ``language`` the run measures (``--language``, ``--subject``)."""
        return [s for s in subjects if language in chosen and (not args.subject or s[0] in args.subject)]

    with tempfile.TemporaryDirectory(prefix="mendflow-languages-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # jobs drop to their own uids: the launcher's base must be reachable
        os.environ["MENDFLOW_STATE_DIR"] = str(work / "state")
        os.environ["MENDFLOW_SANDBOX__LOCAL_BASE_DIR"] = str(work / "launcher")
        rows: list[Row] = []
        # the image's standard library seed, as its build makes it: cold is a repository's first
        if picked(GO_SUBJECTS, "go"):
            from mendflow.launcher.local import LocalLauncher
            from mendflow.settings import get_settings

            LocalLauncher(get_settings()).prepare_image("ci-runner-go")
        for name, spec in picked(GO_SUBJECTS, "go"):
            repo = subject_repo(name, spec, "go-ratelimit", go_files, work)
            rows.append(measure("go", name, repo, work, args.repeat, own_go))
        for name, spec, command in picked(TS_SUBJECTS, "typescript"):
            repo = subject_repo(name, spec, "ts-invoice", npm_files, work)
            rows.append(measure("typescript", name, repo, work, args.repeat, own_node(command)))
        for name, spec in picked(RUST_SUBJECTS, "rust"):
            repo = subject_repo(name, spec, "rust-duration", crate_files, work)
            rows.append(measure("rust", name, repo, work, args.repeat, own_rust))
        for name, spec in picked(JAVA_SUBJECTS, "java"):
            repo = subject_repo(name, spec, "java-isbn", maven_files, work)
            rows.append(measure("java", name, repo, work, args.repeat, own_maven))
    if args.json:
        print(json.dumps([{**asdict(r), "ratio": r.ratio, "ratio_new": r.ratio_new} for r in rows], indent=2))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
