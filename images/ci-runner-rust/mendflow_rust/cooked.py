"""A cargo project's dependencies, built once and kept in the repository's dependency cache for its next jobs.

Every job has its own target directory (build scripts and proc macros are code: a shared one could be
poisoned), so each compiled the dependencies again: lazy_static's test build took 15 s of which its own crate
was under one. Like cargo-chef, the runner now builds them from a *stub* of the workspace, in which no file of
the repository's is code: every manifest at its place, the lockfile, and each ``.rs`` file replaced by an empty
``fn main() {}`` (so every target cargo finds, or a manifest names, is there and compiles, build scripts
included). The stub's build runs the same commands as the job (``cargo test --no-run``, ``cargo clippy
--all-targets``, the job's RUSTFLAGS and profile), in the offline sandbox, before any code of the repository's
runs; then ``cargo clean -p`` removes the stub's own packages, the lockfile's entries without a source (left,
cargo would find their fingerprints fresh for the real sources and link the stubs), and what remains is kept,
unless a fingerprint of one of them is still there.

A kept build stands in only for the one the job would make: the key is a digest of the toolchain (``rustc -vV``,
``cargo -V``), the RUSTFLAGS and cargo settings of the environment, every ``Cargo.toml`` of the repository and
its lockfile. A repository with a ``.cargo`` directory keeps nothing: its config may set a ``rustc-wrapper``, a
linker or flags, which are its own code. Only whole jobs keep (a split job's caches are its own); the third-party
build scripts the stub's build runs see the cache read-only, like the tests, so no job changes a kept build
another key's job uses. One build is kept per repository: a new key replaces the old.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

from mendflow_runner import kept

KEPT_DIR = "cooked"  # under the repository's dependency cache
STUB_VERSION = b"mendflow stub 1"  # in the key: a change to how stubs are made keeps nothing made the old way
# A target of any kind compiles from it (a library's unused ``main`` is allowed, as are a manifest's lint levels).
STUB_SOURCE = "#![allow(warnings, missing_docs, dead_code, unused)]\nfn main() {}\n"
_SKIPPED_DIRS = {"target", ".git"}
# The environment that changes what cargo builds (not where: CARGO_HOME, CARGO_TARGET_DIR are the job's own).
_BUILD_SETTINGS = ("RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_INCREMENTAL")
_BUILD_PREFIXES = ("CARGO_PROFILE_", "CARGO_BUILD_")


class Kept:
    """The kept dependency build of one key in ``cache`` (the repository's dependency cache)."""

    def __init__(self, cache: Path, key: str) -> None:
        self.root = cache / KEPT_DIR
        self.home = self.root / key
        self.target = self.home / "target"

    @classmethod
    def for_project(cls, cache: Path, src: Path, env: dict[str, str]) -> Kept | None:
        key = cook_key(src, env)
        return cls(cache, key) if key else None

    def restore(self, target: Path) -> bool:
        """Copy the kept build to ``target``; False, leaving nothing, when there is none."""
        return kept.restore(self.target, target)

    def keep(self, target: Path) -> None:
        """Keep a copy of ``target``, made whole beside its place and renamed into it; the builds of other keys are
        dropped. A failure keeps nothing: the next job builds again."""
        if self.home.exists():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        making = self.root / f".making-{os.getpid()}-{time.monotonic_ns()}"
        try:
            making.mkdir()
            kept.copy_tree(target, making / "target")
            kept.share(making)
            making.rename(self.home)
        except (OSError, subprocess.SubprocessError):
            shutil.rmtree(making, ignore_errors=True)
            return
        self._drop_others()

    def _drop_others(self) -> None:
        for entry in self.root.iterdir():
            if entry != self.home and not kept.being_made(entry) and (gone := kept.hide(entry)):
                shutil.rmtree(gone, ignore_errors=True)


def cook_key(src: Path, env: dict[str, str]) -> str | None:
    """The digest of what decides the dependencies' build, or None when a kept one must not stand in for it (a
    ``.cargo`` config, no lockfile, nothing but the repository's own packages in it, an unreadable toolchain)."""
    lockfile = src / "Cargo.lock"
    if (src / ".cargo").exists() or not any(p.get("source") for p in _locked(lockfile)):
        return None  # a config of its own, or no dependency: nothing to build ahead
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


def local_packages(src: Path) -> list[tuple[str, str]]:
    """``(name, version)`` of every package the lockfile resolves from the repository itself (no ``source``: the
    workspace's members and its path dependencies), which the stub's build compiles as stubs."""
    return [(p["name"], p["version"]) for p in _locked(src / "Cargo.lock") if not p.get("source")]


def stubs_left(target: Path, packages: list[tuple[str, str]]) -> list[str]:
    """The local packages some build output of which is still in ``target`` (cargo's fingerprint of each unit)."""
    return sorted({name for name, _ in packages for _ in target.glob(f"*/.fingerprint/{name}-*")})


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
