"""A cargo project's build kept in the repository's dependency cache for its next jobs: its dependencies', and its
own units where compiling them runs none of its code.

Every job has its own target directory (build scripts and proc macros are code: a shared one could be
poisoned), so each compiled the dependencies again: lazy_static's test build took 15 s of which its own crate
was under one. Like cargo-chef, the runner now builds them, where the lockfile has any, from a *stub* of the
workspace, in which no file of the repository's is code: every manifest at its place, the lockfile, and each
``.rs`` file replaced by an empty ``fn main() {}`` (so every target cargo finds, or a manifest names, is there and
compiles, build scripts included). The stub's build runs the same commands as the job (``cargo test --no-run``,
``cargo clippy --all-targets``, the job's RUSTFLAGS and profile), in the offline sandbox, before any code of the
repository's runs; then ``cargo clean -p`` removes the stub's own packages, the lockfile's entries without a
source (left, cargo would find their fingerprints fresh for the real sources and link the stubs), and what
remains is kept, unless a fingerprint of one of them is still there.

A kept build stands in only for the one the job would make: the key is a digest of the toolchain (``rustc -vV``,
``cargo -V``), the RUSTFLAGS and cargo settings of the environment, every ``Cargo.toml`` of the repository and
its lockfile. A repository with a ``.cargo`` directory keeps nothing: its config may set a ``rustc-wrapper``, a
linker or flags, which are its own code. Only whole jobs keep (a split job's caches are its own); the third-party
build scripts the stub's build runs see the cache read-only, like the tests, so no job changes a kept build
another key's job uses. One build is kept per repository (a newer one, of any key, drops the others), each a
directory never changed once made.

Where compiling the repository's own packages runs none of their code (no build script, no proc macro), the job
keeps its build again once it has compiled them, before any test runs, with the digest of every file it was
compiled from and the workspace's path as cargo saw it (``Sources``). cargo decides what to compile again by
comparing times: a restored build stamps each source file the kept units were compiled from, unchanged, as old
and every other file as newer than the build (``stamp``), so exactly the units whose files changed compile again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

from mendflow_runner import kept

KEPT_DIR = "cooked"  # under the repository's dependency cache
SOURCES = "sources.json"  # beside a kept build that holds the repository's own units: what they were compiled from
# The time a source file the kept units were compiled from gets (2000-01-01): older than any build's output.
OLD = 946_684_800.0
# A larger file (test data) is not read for its digest in each job: it counts as changed, so only the units that
# include it compile again.
DIGESTED_BYTES = 16 << 20
STUB_VERSION = b"mendflow stub 1"  # in the key: a change to how stubs are made keeps nothing made the old way
# A target of any kind compiles from it (a library's unused ``main`` is allowed, as are a manifest's lint levels).
STUB_SOURCE = "#![allow(warnings, missing_docs, dead_code, unused)]\nfn main() {}\n"
_SKIPPED_DIRS = {"target", ".git"}
# The environment that changes what cargo builds (not where: CARGO_HOME, CARGO_TARGET_DIR are the job's own).
_BUILD_SETTINGS = ("RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_INCREMENTAL")
_BUILD_PREFIXES = ("CARGO_PROFILE_", "CARGO_BUILD_")


@dataclasses.dataclass(frozen=True)
class Sources:
    """What a kept build's own units were compiled from: the workspace's path as cargo saw it, when it was kept (a
    file changed since is stamped later), and the digest of every file of the repository's."""

    root: str
    at: float
    digests: dict[str, str]

    @classmethod
    def of(cls, src: Path, root: str) -> Sources:
        digests = {rel: digest for rel, path in source_files(src) if (digest := _digest(path))}
        return cls(root, time.time(), digests)

    @classmethod
    def read(cls, path: Path) -> Sources | None:
        """The record at ``path`` (None when there is none or it cannot be read: nothing then counts as unchanged)."""
        try:
            said = json.loads(path.read_text(encoding="utf-8"))
            return cls(str(said["root"]), float(said["at"]), {str(k): str(v) for k, v in said["digests"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def write(self, path: Path) -> None:
        path.write_text(json.dumps({"root": self.root, "at": self.at, "digests": self.digests}), encoding="utf-8")


class Kept:
    """The kept builds of one key in ``cache`` (the repository's dependency cache). Each is a directory of its own,
    ``KEY-NANOSECONDS``, never changed once made: a job copying one while another job keeps a newer build copies
    all of one build or fails, never a mix, and a dropped build is renamed away before it is deleted."""

    def __init__(self, cache: Path, key: str) -> None:
        self.root, self.key = cache / KEPT_DIR, key

    @classmethod
    def for_project(cls, cache: Path, src: Path, env: dict[str, str]) -> Kept | None:
        key = cook_key(src, env)
        return cls(cache, key) if key else None

    def latest(self) -> Path | None:
        """The newest build kept for the key."""
        made = {int(n): h for h in self.root.glob(f"{self.key}-*") if (n := h.name.rpartition("-")[2]).isdigit()}
        return made[max(made)] if made else None

    def restore(self, target: Path, src: Path, found: Sources) -> bool:
        """Copy the newest kept build to ``target``, and stamp ``src``'s files (as the job ``found`` them) for it
        (``stamp``): unchanged only where it holds the repository's own units, compiled at the same root (the
        workspace as cargo sees it, whose paths its coverage maps name), from files of the same digests. False,
        leaving nothing, when there is none or it cannot be copied."""
        home = self.latest()
        if home is None:
            return False
        compiled = Sources.read(home / SOURCES)  # read before the copy: whatever happens next, it is this build's
        if not kept.restore(home / "target", target):
            return False
        if compiled is None or compiled.root != found.root:
            compiled = Sources(found.root, compiled.at if compiled else 0.0, {})
        try:
            stamp(src, found, compiled)
        except OSError:
            shutil.rmtree(target, ignore_errors=True)
            return False
        return True

    def keep(self, target: Path, compiled: Sources | None = None) -> None:
        """Keep a copy of ``target`` as the key's newest build, made whole beside its place and renamed into it;
        every other build is dropped. A build of the dependencies alone (no ``compiled``) is kept only where the
        key has none. A failure keeps nothing: the next job builds again."""
        if compiled is None and self.latest() is not None:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        making = self.root / f".making-{os.getpid()}-{time.monotonic_ns()}"
        home = self.root / f"{self.key}-{time.time_ns()}"
        try:
            making.mkdir()
            kept.copy_tree(target, making / "target")
            if compiled is not None:
                dataclasses.replace(compiled, at=time.time()).write(making / SOURCES)
            kept.share(making)
            making.rename(home)
        except (OSError, subprocess.SubprocessError):
            shutil.rmtree(making, ignore_errors=True)
            return
        self._drop_others(home)

    def _drop_others(self, home: Path) -> None:
        for entry in self.root.iterdir():
            if entry != home and not kept.being_made(entry) and (gone := kept.hide(entry)):
                shutil.rmtree(gone, ignore_errors=True)


def cook_key(src: Path, env: dict[str, str]) -> str | None:
    """The digest of what decides the build, or None when a kept one must not stand in for it (a ``.cargo``
    config, no lockfile, an unreadable toolchain)."""
    lockfile = src / "Cargo.lock"
    if (src / ".cargo").exists() or not lockfile.is_file():
        return None
    toolchain = _toolchain(env)
    if toolchain is None:
        return None
    digest = hashlib.sha256(STUB_VERSION + b"\0" + toolchain.encode() + b"\0")
    settings = sorted((k, v) for k, v in env.items() if k in _BUILD_SETTINGS or k.startswith(_BUILD_PREFIXES))
    digest.update(repr(settings).encode() + b"\0")
    for path in [*manifests(src), lockfile]:
        digest.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def make_stub(src: Path, stub: Path) -> None:
    """The stub of ``src`` at ``stub``, made afresh."""
    shutil.rmtree(stub, ignore_errors=True)
    for top, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        here = stub / Path(top).relative_to(src)
        for name in files:
            if name == "Cargo.toml":
                here.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(top) / name, here / name)
            elif name.endswith(".rs"):
                here.mkdir(parents=True, exist_ok=True)
                (here / name).write_text(STUB_SOURCE, encoding="utf-8")
    shutil.copyfile(src / "Cargo.lock", stub / "Cargo.lock")


def has_dependencies(src: Path) -> bool:
    """Whether the lockfile has a package from a registry or git, for a stub's build to compile ahead."""
    return any(p.get("source") for p in _locked(src / "Cargo.lock"))


def local_packages(src: Path) -> list[tuple[str, str]]:
    """``(name, version)`` of every package the lockfile resolves from the repository itself (no ``source``: the
    workspace's members and its path dependencies), which the stub's build compiles as stubs."""
    return [(p["name"], p["version"]) for p in _locked(src / "Cargo.lock") if not p.get("source")]


def stubs_left(target: Path, packages: list[tuple[str, str]]) -> list[str]:
    """The local packages some build output of which is still in ``target`` (cargo's fingerprint of each unit)."""
    return sorted({name for name, _ in packages for _ in target.glob(f"*/.fingerprint/{name}-*")})


def compiles_without_running_code(src: Path) -> bool:
    """No package of the repository's has a build script or is a proc macro, so compiling it runs none of its code
    (only the dependencies', as the stub's build does): its units may be kept like theirs. False when a manifest
    cannot be read."""
    for manifest in manifests(src):
        try:
            said = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return False
        package, lib = said.get("package") or {}, said.get("lib") or {}
        if not isinstance(package, dict) or not isinstance(lib, dict):
            return False
        build = package.get("build", True)
        if isinstance(build, str) or (build is True and (manifest.parent / "build.rs").exists()):
            return False
        if lib.get("proc-macro") or lib.get("proc_macro"):
            return False
    return True


def stamp(src: Path, found: Sources, compiled: Sources) -> None:
    """Each file of ``src`` stamped old where the digest it was ``found`` with is the one the kept build's units
    were ``compiled`` from, else as changed after that build was kept and after now: cargo compiles again the units
    that read it. Every file is stamped, so none keeps the time it was unpacked at, which may be older than a
    build another job kept meanwhile."""
    later = max(time.time(), compiled.at + 1)
    for rel, path in source_files(src):
        digest = found.digests.get(rel)
        when = OLD if digest and compiled.digests.get(rel) == digest else later
        os.utime(path, (when, when), follow_symlinks=False)


def source_files(src: Path) -> list[tuple[str, Path]]:
    """``(relative path, path)`` of every file of the repository's but ``.git``'s (a ``target`` directory in the
    tree may be a module's)."""
    found = []
    for top, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        found += [((Path(top) / name).relative_to(src).as_posix(), Path(top) / name) for name in sorted(files)]
    return found


def _digest(path: Path) -> str | None:
    """A file's content digest (a symbolic link's, its target's name); None when it cannot be read, or is larger
    than ``DIGESTED_BYTES``: such a file always counts as changed."""
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        if path.stat().st_size > DIGESTED_BYTES:
            return None
        with path.open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def manifests(src: Path) -> list[Path]:
    """Every ``Cargo.toml`` of the repository, outside build output."""
    found = []
    for top, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        if "Cargo.toml" in files:
            found.append(Path(top) / "Cargo.toml")
    return found


def _locked(lockfile: Path) -> list[dict[str, str]]:
    """The lockfile's packages (none when it cannot be read: cargo says why in the build)."""
    try:
        packages = tomllib.loads(lockfile.read_text(encoding="utf-8")).get("package", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    return [p for p in packages if isinstance(p, dict) and isinstance(p.get("name"), str) and "version" in p]


def _toolchain(env: dict[str, str]) -> str | None:
    try:
        said = [
            subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True).stdout
            for argv in (["rustc", "-vV"], ["cargo", "-V"])
        ]
    except (OSError, subprocess.SubprocessError):
        return None
    return "".join(said)
