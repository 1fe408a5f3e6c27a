"""An npm project's installed ``node_modules``, kept in the repository's dependency cache for its next job.

``npm ci`` from a warm cache still unpacks every package again (about 6 s for the TypeScript example, most of its
job); a copy of the tree an earlier job installed takes a fraction of that. A kept tree is reused only where it
is the tree the install would make again:

- npm (not yet pnpm, whose tree links into its store, nor yarn);
- the key is a digest of every ``package.json`` outside ``node_modules``, the lockfile, the project's ``.npmrc``,
  the job's ``npm_config_*`` settings and the toolchain (Node's version, platform and module ABI, npm's version).
  Without a lockfile (a published tarball, a library that commits none) the kept tree is the resolution of the
  ranges the first job made, until a manifest changes: a release upstream between two commits cannot make the
  second fail, as only what a commit changes may;
- no repository code runs during the install: no workspace package has an install lifecycle script and no
  package a ``binding.gyp`` (node-gyp's implicit install), so what an install writes is the registry's
  packages, checked against their integrity, and their own scripts. The root package's install scripts
  (husky's ``prepare``, a ``prepublish`` as in minimist 1.2.8, a build) are left out of the install a tree is
  kept from (``--ignore-scripts``, then ``npm rebuild`` of the packages whose scripts that skipped) and run by
  each job on its own view of the tree (``root_scripts``): minimist's warm job went from 29 s, an install each
  time, to 8 s;
- the offline steps (tests, tsc, eslint) see the cache read-only. Where they run in bubblewrap (the local
  launcher), the kept tree is lent (``lend``), the first job's too: its install is moved into the cache before
  any offline step runs. It is bound read-only once, at ``node_modules/.mendflow-kept/node_modules``, and the
  job's own ``node_modules`` holds a link to each package there, as pnpm's links into ``node_modules/.pnpm``:
  Node resolves a package to its real path, from which the others are found in ``node_modules`` as before. What a
  tool adds beside the packages (``.cache``, ``.vite``) is the job's own, so no copy of thousands of files is
  made (exponential-backoff: 18,755 files, 9-16 s on the launcher's disk). A bind per package, as before, cost
  each sandboxed step time growing with their square (bubblewrap reads the mount table again after each bind):
  0.3 s for fastq 1.17.1's 349 entries, 0.84 s for 605. A tree with a link deeper than a scope (a workspace
  package npm nested) is copied instead, as the link, relative, would point one level too high from there.
  Without bubblewrap (a pod) the tree is copied, before any offline step runs. Either way, what a test writes
  into its own ``node_modules`` never reaches the kept tree.

One tree is kept per repository (a new key replaces the old one, unless a job is still using it); a job that
cannot use it installs as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, BinaryIO

from mendflow_runner import kept
from mendflow_runner.proc import Mounts

from .project import MANIFEST, Project

KEPT_DIR = "installed"  # under the repository's Node cache
# The scripts npm runs for a package it installs (the root and workspace packages included).
INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare")
_CACHE_SETTINGS = ("npm_config_cache", "npm_config_store_dir")  # where, not what: not part of the key
_TOP_LEVEL = re.compile(r"node_modules/(?:@[^/]+/)?[^/@][^/]*")  # a package's place, not nested
_NODE_IDENTITY = "[process.version, process.platform, process.arch, process.versions.modules].join(' ')"
IN_USE = "in-use"  # beside a kept tree: each job its offline steps are shown to holds a shared lock on it
# Entries of node_modules linked like the packages (npm's own); the others starting with a dot are tools' caches,
# copied so that the tests may write them (babel's and nyc's .cache, vite's .vite).
_LINKED_DOT = (".bin", ".package-lock.json")
# Where in a job's node_modules the kept tree is bound: no package's name starts with a dot. A package's real path
# then ends in node_modules/NAME, as npm's and pnpm's do: a tool that finds its own package.json from that path
# (package-json-from-dist, in rimraf 6 and glob 11) read .mendflow-kept/package.json from .mendflow-kept/rimraf.
LENT = ".mendflow-kept/node_modules"
_DEPENDENCY_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")


class KeptInstall:
    """The kept tree of one install key in ``cache`` (the repository's Node cache)."""

    def __init__(self, cache: Path, key: str) -> None:
        self.root = cache / KEPT_DIR
        self.tree = self.root / key / "node_modules"
        self._held: BinaryIO | None = None  # the open lock of a lent tree, held as long as the job runs

    @classmethod
    def for_project(cls, cache: Path, project: Project, env: dict[str, str]) -> KeptInstall | None:
        """The project's kept install, or None when an earlier job's tree could differ from this one's."""
        key = install_key(project, env)
        return cls(cache, key) if key else None

    def restore(self, node_modules: Path) -> bool:
        """Copy the kept tree to ``node_modules``; False (and nothing left behind) when there is none or it cannot
        be copied (another job of the repository replaced it meanwhile)."""
        return kept.restore(self.tree, node_modules)

    def lend(self, node_modules: Path) -> Mounts | None:
        """The read-only bind that shows the kept tree in ``node_modules`` (made here: a link to each package
        there and a copy of the tools' caches), for the offline steps; the tree is not dropped while this job
        runs. None (and nothing left behind) when there is none, another job is dropping it, or it holds a link
        deeper than a scope."""
        if nested_links(self.tree) or not self._hold(self.tree.parent / IN_USE):
            return None
        try:
            return _places(self.tree, node_modules)
        except (OSError, subprocess.SubprocessError):
            shutil.rmtree(node_modules, ignore_errors=True)
            return None

    def keep(self, node_modules: Path, move: bool = False) -> None:
        """Keep a fresh install as the repository's kept tree, copied or (``move``, for a job that ``lend``s it
        next) moved; made whole beside its place, then renamed into it. The trees of other keys are dropped. A
        failure keeps nothing (a moved install goes back): the next job installs again."""
        home = self.tree.parent
        if home.exists() or not node_modules.is_dir():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        making = self.root / f".making-{os.getpid()}-{time.monotonic_ns()}"
        try:
            making.mkdir()
            (making / IN_USE).touch()
            if not move:
                kept.copy_tree(node_modules, making / "node_modules")
            elif self._hold(making / IN_USE):  # held before a job of another key may drop it
                node_modules.rename(making / "node_modules")
            else:
                raise OSError("the new tree's lock is taken")
            kept.share(making)
            making.rename(home)
        except (OSError, subprocess.SubprocessError):
            if move and not node_modules.exists():
                (making / "node_modules").rename(node_modules)
            shutil.rmtree(making, ignore_errors=True)
            return
        self._drop_others(home)

    def _hold(self, lock: Path) -> bool:
        if self._held is not None:
            return True
        try:
            held = lock.open("rb")
        except OSError:
            return False
        try:
            fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            held.close()
            return False
        self._held = held
        return True

    def _drop_others(self, home: Path) -> None:
        for entry in self.root.iterdir():
            if entry == home or kept.being_made(entry):
                continue
            with contextlib.ExitStack() as unused:
                if not entry.name.startswith(".") and not _unused(entry / IN_USE, unused):
                    continue  # a job's offline steps see it: the next new key's job drops it
                gone = kept.hide(entry)
            if gone is not None:
                shutil.rmtree(gone, ignore_errors=True)


def _unused(lock: Path, stack: contextlib.ExitStack) -> bool:
    """No job holds ``lock`` (or there is none: a tree kept before lending): it is now held, until ``stack``
    closes, so that no job takes it meanwhile."""
    try:
        held = stack.enter_context(lock.open("rb"))
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _places(tree: Path, node_modules: Path) -> Mounts:
    """Make ``node_modules`` a place for ``tree``, bound at its ``LENT`` directory: a link there for each package,
    the tree's own links (a workspace package's, relative to ``node_modules``) as they are, and a copy of its
    tools' caches. A scope's packages and the ``.bin`` commands are linked one by one, so that the tree's own
    links among them (``@acme/util`` to ``../../packages/util``, a command to ``../util/cli.js``) hold."""
    (node_modules / LENT).mkdir(parents=True)
    for entry in sorted(os.scandir(tree), key=lambda e: e.name):
        what, place = Path(entry.path), node_modules / entry.name
        if entry.is_symlink():
            place.symlink_to(os.readlink(what))
        elif entry.name.startswith(".") and entry.name not in _LINKED_DOT:
            kept.copy_tree(what, place)
        elif (entry.name.startswith("@") or entry.name == ".bin") and entry.is_dir():
            _link_each(what, place, f"../{LENT}/{entry.name}")
        else:
            place.symlink_to(f"{LENT}/{entry.name}")
    return ((tree, node_modules / LENT),)


def _link_each(directory: Path, place: Path, lent: str) -> None:
    """``place``, a directory of a link for each entry of ``directory``: its own link as it is, else one into
    ``lent`` (where ``directory`` is lent, relative to ``place``)."""
    place.mkdir()
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        (place / entry.name).symlink_to(os.readlink(entry.path) if entry.is_symlink() else f"{lent}/{entry.name}")


def nested_links(tree: Path) -> bool:
    """Whether npm placed a link (a workspace or ``file:`` package) deeper than ``node_modules/[@scope/]name``, by
    its hidden lockfile; unreadable, it may have."""
    packages = _hidden_lockfile(tree)
    if packages is None:
        return True
    return any(entry.get("link") and not _TOP_LEVEL.fullmatch(path) for path, entry in packages.items())


def install_key(project: Project, env: dict[str, str]) -> str | None:
    """The digest of what decides an npm install's tree, or None when a kept tree must not stand in for one."""
    root = project.root
    if project.manager != "npm" or (root / "node_modules").exists():
        return None
    manifests = {path: _declared(path) for path in _manifests(root)}
    if any(_runs_repository_code(path, declared, path != root / MANIFEST) for path, declared in manifests.items()):
        return None
    toolchain = _toolchain(env)
    if toolchain is None:
        return None
    digest = hashlib.sha256(toolchain.encode() + b"\0")
    lockfile = [root / project.lockfile] if project.lockfile else []
    for path in [*manifests, *lockfile, root / ".npmrc", *_local_tarballs(manifests)]:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    settings = sorted((k, v) for k, v in env.items() if k.startswith("npm_config_") and k not in _CACHE_SETTINGS)
    digest.update(json.dumps(settings).encode())
    return digest.hexdigest()[:32]


def root_scripts(project: Project) -> list[str]:
    """The root package's install scripts, in the order npm runs them after an install."""
    return [name for name in INSTALL_SCRIPTS if name in project.scripts]


def skipped_scripts(node_modules: Path) -> list[str]:
    """The installed packages whose install scripts an ``--ignore-scripts`` install skipped, by name (npm's hidden
    lockfile marks them)."""
    marked = (path for path, entry in (_hidden_lockfile(node_modules) or {}).items() if entry.get("hasInstallScript"))
    return sorted({path.rpartition("node_modules/")[2] for path in marked})


def _hidden_lockfile(node_modules: Path) -> dict[str, dict[str, Any]] | None:
    """npm's hidden lockfile of an installed tree: each package's place and entry; None when it cannot be read."""
    try:
        packages = json.loads((node_modules / ".package-lock.json").read_text(encoding="utf-8"))["packages"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(packages, dict):
        return None
    return {path: entry for path, entry in packages.items() if isinstance(entry, dict)}


def _manifests(root: Path) -> list[Path]:
    """Every ``package.json`` of the repository (workspaces, ``file:`` packages), outside ``node_modules``."""
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("node_modules", ".git"))
        if MANIFEST in files:
            found.append(Path(top) / MANIFEST)
    return found


def _local_tarballs(manifests: dict[Path, dict[str, Any] | None]) -> list[Path]:
    """The repository's tarballs the manifests depend on (``file:vendor/dep-1.0.0.tgz``): npm unpacks their bytes
    into the tree, so a new tarball is a new tree (a lockfile's integrity then stops ``npm ci``, as it would
    without a kept tree). A ``file:`` directory is linked, not copied: the job sees its files as they are."""
    found = []
    for manifest, declared in manifests.items():
        for field in _DEPENDENCY_FIELDS:
            specs = (declared or {}).get(field)
            for spec in specs.values() if isinstance(specs, dict) else ():
                if isinstance(spec, str) and (path := _local_path(spec)):
                    found.append(manifest.parent / path)
    return sorted(p for p in set(found) if p.is_file())


def _local_path(spec: str) -> str:
    """The path of a local dependency spec (``file:x.tgz``, ``./x.tgz``), '' for any other."""
    if spec.startswith("file:"):
        return spec.removeprefix("file:")
    return spec if spec.startswith(("./", "../")) else ""


def _declared(manifest: Path) -> dict[str, Any] | None:
    """A package.json's fields; None when it cannot be read as an object (npm's install will say why)."""
    try:
        declared = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return declared if isinstance(declared, dict) else None


def _runs_repository_code(manifest: Path, declared: dict[str, Any] | None, scripts: bool = True) -> bool:
    """npm would run this package's own code while installing: node-gyp's implicit install script, or (``scripts``)
    one of its own. Unreadable (None), it may: a kept tree must not stand in."""
    if (manifest.parent / "binding.gyp").is_file() or declared is None:
        return True
    own = declared.get("scripts")
    return scripts and isinstance(own, dict) and any(name in own for name in INSTALL_SCRIPTS)


def _toolchain(env: dict[str, str]) -> str | None:
    """Node's version, platform, arch and module ABI, and npm's version; None when either cannot be read."""
    npm = shutil.which("npm", path=env.get("PATH"))
    if npm is None:
        return None
    package = next((p / MANIFEST for p in Path(npm).resolve().parents if (p / MANIFEST).is_file()), None)
    try:
        node = subprocess.run(
            ["node", "-p", _NODE_IDENTITY], env=env, capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        npm_version = json.loads(package.read_text(encoding="utf-8"))["version"] if package else None
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return None
    return f"{node} npm {npm_version}" if npm_version else None
