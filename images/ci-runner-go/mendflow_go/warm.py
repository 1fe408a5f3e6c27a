"""What the dependency phase compiles without running anything, and the standard library's share of it, built
once per toolchain ahead of every repository.

A repository's build cache starts empty, so its first job compiled the standard library (and vet's facts of it)
into it: 20 s to a minute and more on two cores, for a module of four files. The go command keys each package's
compile by its inputs, so the standard library's entries are the same for every repository: a *seed* cache built
from a module that imports all of it, with the same commands and flags the warm-up runs, serves them all. It is
built by the trusted side (the image's build, the local launcher) with the toolchain alone: no repository's code
or files. A new repository's cache starts as a copy of it; a seed that does not match (another toolchain, other
flags) only costs the compile it would have cost anyway.

A repository's tests may run the go command themselves in another build mode (testify 1.9.0's suite tests run
``go test -race``; xxhash 2.3.0's build a plugin). That compile, the standard library's included, lands in the
tests' own cache (``jobcache``), which no next job reads: 26 s and 9 s of those jobs, every job. Where a test file
names the mode in its strings (``modes_tests_build_in``), the warm-up compiles in it too, into the repository's cache:
``go test -race`` of every package, and a plugin importing the whole standard library. A test file that only
mentions a mode costs that compile once and its cache hits in each job.

``python -m mendflow_go.warm TARGET`` builds a seed at TARGET.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The flags of the suite's run, so the dependency phase's compile-only run leaves exactly what it will need. Each
# package's coverage counts what any test of its module ran (-coverpkg): olekukonko/tablewriter 1.1.5 tests its
# packages from a package of tests (tests/), and measured each by its own tests alone it was 19.3 % covered, not 65.2.
TEST_FLAGS = ("-short", "-covermode=atomic", "-coverpkg=./...")
# Where an image keeps its seed (a directory with COMPLETE in it); unset or absent: no seed.
SEED_ENV = "MENDFLOW_GO_STD_CACHE"
COMPLETE = ".complete"
_SEED_TIMEOUT_SEC = 1800
# The warm-up's ``go test -toolexec``: every tool runs as asked but the linker, which leaves an empty file where
# the test binary would be (``-exec /bin/true`` runs none). Linking was most of a warm job's warm-up (0.6 s of
# go-cmp 0.7.0's 0.9 s), and the go command keeps no test binary in its cache. A tool's ``-V=full``, which the go
# command keys its cache by, is the real tool's answer, so what the warm-up compiles serves the offline run.
# ``go tool covdata``, which reports a package without tests as 0.0 % covered, runs as nothing too: no test ran
# (gorilla/websocket 1.5.3's four examples: eight of them, 0.8 s of a warm job).
_LINK_NOTHING = (
    'case ${1##*/} in link) ;; go) [ "$2 $3" = "tool covdata" ] && exit 0; exec "$@" ;; *) exec "$@" ;; esac; '
    "o=; p=; "
    'for a do [ "$a" = -V=full ] && exec "$@"; [ "$p" = -o ] && o=$a; p=$a; done; '
    '[ -n "$o" ] || exec "$@"; : > "$o"'
)
NO_LINK = f"/bin/sh -c '{_LINK_NOTHING}' mendflow-no-link"
RACE, PLUGIN = "race", "plugin"  # the build modes a repository's tests may run the go command in
PLUGIN_MAIN = "mendflow-plugin-std.go"
# A Go string literal: interpreted ("…", escapes kept) or raw (`…`).
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')


def stages(
    profile: Path, modes: frozenset[str] = frozenset(), plugin_main: Path | None = None, commands: Path | None = None
) -> list[list[list[str]]]:
    """The warm-up: ``go build``, then ``go vet`` beside the instrumented test binaries, compiled and not linked
    (``NO_LINK``), and beside them the ``modes`` the repository's tests build in (``plugin_main``: a plugin's
    ``package main`` that imports the standard library). The build compiles what vet and the tests need first (vet
    reads its export data, the tests compile against it), so the two that follow share it instead of compiling it
    twice at once; each stage's commands run side by side. ``commands``: the directory the build writes the
    module's commands to (``go build -o DIR/``), where the go command links one again only when its inputs
    changed; without it, ``go build ./...`` links each and throws it away."""
    unlinked = [f"-toolexec={NO_LINK}"]
    test = ["test", *TEST_FLAGS, f"-coverprofile={profile}", *unlinked, "-exec=/bin/true", "./..."]
    beside = [["go", "vet", "./..."], ["go", *test]]
    if RACE in modes:
        beside.append(["go", "test", "-race", *unlinked, "-exec=/bin/true", "./..."])
    if PLUGIN in modes and plugin_main is not None:
        beside.append(["go", "build", "-buildmode=plugin", *unlinked, "-o", os.devnull, str(plugin_main)])
    build = ["go", "build", *(["-o", f"{commands}{os.sep}"] if commands is not None else []), "./..."]
    return [[build], beside]


def modes_tests_build_in(test_files: list[Path]) -> frozenset[str]:
    """The build modes ``test_files`` (a module's ``*_test.go``) name in their strings, as the arguments of a go
    command they run: ``-race``, ``-buildmode=plugin`` (or ``-buildmode`` then ``plugin``). A comment naming one
    outside quotes does not count."""
    words: list[str] = []
    for path in test_files:
        text = path.read_text(encoding="utf-8", errors="replace")
        words += [w for m in _STRING.finditer(text) for w in (m[1] if m[1] is not None else m[2]).split()]
    modes = {RACE} if {"-race", "--race"} & set(words) else set()
    pairs = set(itertools.pairwise(words))
    if "-buildmode=plugin" in words or ("-buildmode", "plugin") in pairs:
        modes.add(PLUGIN)
    return frozenset(modes)


def write_plugin_main(path: Path, packages: list[str]) -> Path:
    """A plugin's ``package main`` at ``path`` that imports ``packages``: built in plugin mode, it compiles them
    as any plugin would (``-dynlink``), whatever else the repository's own plugin imports."""
    path.write_text(_importing("main", packages), encoding="utf-8")
    return path


def _importing(name: str, packages: list[str]) -> str:
    """A Go file of package ``name`` that imports each of ``packages`` for its side effects."""
    imports = "".join(f'\t_ "{p}"\n' for p in packages)
    return f"package {name}\n\nimport (\n{imports})\n"


def seed(gocache: Path, env: dict[str, str]) -> bool:
    """Start a repository's new build cache as a copy of the image's seed; an existing cache is left as it is.
    True when it was seeded."""
    source = Path(env.get(SEED_ENV) or "/nonexistent")
    if gocache.exists() or not (source / COMPLETE).is_file():
        return False
    gocache.parent.mkdir(parents=True, exist_ok=True)
    tmp = gocache.parent / f".seeding-{os.getpid()}-{time.monotonic_ns()}"
    _copy_contents(source, tmp)
    (tmp / COMPLETE).unlink()
    try:
        tmp.rename(gocache)
    except OSError:  # another job of the repository seeded it first
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    return True


def _copy_contents(source: Path, target: Path) -> None:
    """The seed's files, made as the go command makes its own: directories and files with this job's umask and
    the repository cache's group (its setgid directory's), so the next job of the repository, another uid in
    that group, reads and adds to them. Copying modes (copytree) would drop the group: the next job could not
    read what this one's go command adds."""
    for directory, _, names in os.walk(source):
        here = target / Path(directory).relative_to(source)
        here.mkdir()
        for name in names:
            shutil.copyfile(Path(directory) / name, here / name)


def std_packages(env: dict[str, str], cwd: Path | None = None) -> list[str]:
    """Every standard library package a module may import (``go list std`` without internal, vendored or cmd)."""
    argv = ["go", "list", "std"]
    listed = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=300)
    hidden = ("internal", "vendor")
    return [p for p in listed.stdout.split() if not p.startswith("cmd/") and not any(h in p.split("/") for h in hidden)]


def write_module(root: Path, packages: list[str]) -> None:
    """A module whose one package imports every package of ``packages``, with one test (the test binary's own
    imports: testing, the coverage runtime)."""
    (root / "go.mod").write_text("module mendflow.invalid/stdseed\n")
    (root / "seed.go").write_text(_importing("stdseed", packages))
    (root / "seed_test.go").write_text('package stdseed\n\nimport "testing"\n\nfunc TestSeed(t *testing.T) {}\n')


def build_seed(target: Path, env: dict[str, str]) -> None:
    """Build a seed at ``target`` (made whole, then renamed into place: a crash leaves no half seed behind)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".seed-", dir=target.parent))
    try:
        module, cache = work / "module", work / "cache"
        module.mkdir()
        run_env = {**env, "GOCACHE": str(cache), "GOPATH": str(work / "gopath"), "GOPROXY": "off"}
        write_module(module, std_packages(run_env))
        for argv in itertools.chain.from_iterable(stages(work / "cover.out")):  # in turn: built once, before any job
            subprocess.run(argv, cwd=module, env=run_env, capture_output=True, check=True, timeout=_SEED_TIMEOUT_SEC)
        for path in [cache, *cache.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # every job's uid copies it
        (cache / COMPLETE).touch()
        cache.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m mendflow_go.warm TARGET", file=sys.stderr)
        return 2
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOTELEMETRY": "off", "GOFLAGS": "-modcacherw"}
    try:
        build_seed(Path(argv[0]), env)
    except (OSError, subprocess.SubprocessError) as exc:
        said = getattr(exc, "stderr", b"") or b""
        last = said.decode(errors="replace").strip().splitlines()[-1:] if isinstance(said, bytes) else []
        print(f"mendflow_go.warm: the standard library's seed was not built: {exc} {' '.join(last)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
