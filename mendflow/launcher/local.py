"""Run jobs as local processes in a throw-away workspace, without credentials and under limits.

Layout (everything a job can reach is outside /root, which is mode 700):

* ``BASE/jobs/``               root-owned 0711: no job lists another's id; a job's sandboxed steps see it as a
  fresh directory holding that job's alone (``MENDFLOW_JOB_DIR``, ``mendflow_runner.proc``).
* ``BASE/jobs/<id>/``          root-owned 0755 (listable: tools list each parent of a temp file);
  ``job.log`` (root, 0600) holds the job's combined output.
* ``BASE/jobs/<id>/ws/``       the workspace, owned by the job's uid: ``in/`` (inputs, read-only),
  ``out/``, ``home/`` and ``tmp/``.
* ``BASE/jobs/<id>/runner/``   the runner package of the ``ci-runner-python`` image, root's: no step of the job
  can change the code that sandboxes its next step.
* ``BASE/jobs/<id>/egress/``   ``sock``, the job's only way to the package index (``egress.py``), the
  job uid's alone; the runner hands it to the dependency phase and hides it from every other.
* ``BASE/cache/scopes/<key>/`` uv's cache of one ``spec.cache_scope`` (a repository), root's with a group of
  that repository's own (setgid, 2770), kept across its jobs (``UV_CACHE_DIR``); a job with no scope gets
  ``ws/cache/``, removed with it. ``scopes/`` is root's, so no job can plant a cache for a repository that has
  none yet, and the runner's dependency phase may write only its own (``mendflow_runner.proc.confined``).
* ``BASE/ids/``                 claims on the uids and groups handed out (``ids.py``), root's, 0700.
* ``BASE/toolchain/<key>/bin`` world-readable copies of the project venv's ``uv`` and ``ruff`` plus a
  ``python`` link, keyed by the binaries' size and mtime so an upgrade makes a new one.
* ``BASE/toolchain/seed-<image>-<key>/`` a cache the image builds ahead of its jobs, world-readable, once per
  toolchain (``seeds.py``: the Go standard library's build, which starts each repository's build cache).

``BASE`` is ``/var/tmp/mendflow`` (root-owned, 0755: it holds only fixed names) when mendflow runs as root and
drops each job to a uid of its own (``settings.sandbox.job_ids_start``..., umask 007, its repository's cache
group as its only other group); otherwise jobs run as the current user with ``BASE`` =
``settings.cache_dir/local-launcher``; ``sandbox.local_base_dir`` overrides both. When a job ends, whatever runs
as its uid is killed and what it left at the top of ``/tmp``, ``/dev/shm`` and ``/var/tmp`` is removed.

Limits: RLIMIT_CPU (CPU seconds) and RLIMIT_NOFILE per process, plus, where the cgroup v1 controllers are
writable, per-job groups (``cgroups.py``): memory (its ``oom_kill`` counter tells an OOM kill apart from other
deaths; without it, RLIMIT_AS stands in), a CPU quota of ``spec.cpu_limit`` cores and a cap on processes (a fork
bomb stays in its job). Their ``cgroup.procs`` list every process of the job, daemons included, for the final sweep.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import fcntl
import hashlib
import os
import resource
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mendflow.jobcode import IMAGE_PACKAGES, IMAGE_SYSROOTS, IMAGE_TOOLS, RUNNER_IMAGE, copy_package
from mendflow.launcher.base import (
    JOB_ENV,
    MEMORY_ADVICE,
    JobResult,
    JobSpec,
    JobState,
    Launcher,
    OnOutput,
    OutputLines,
    is_credential,
    output_sink,
)
from mendflow.launcher.caches import cache_dirs, survey, to_evict
from mendflow.launcher.cgroups import JobCgroups, JobLimits
from mendflow.launcher.egress import Allowlist, EgressProxy, index_hosts
from mendflow.launcher.ids import SCOPE_PREFIX, IdClaims, files_of, processes_of
from mendflow.launcher.seeds import seed_env
from mendflow.settings import Settings

ROOT_BASE = Path("/var/tmp/mendflow")
SYSTEM_PYTHON = Path("/usr/bin/python3")
KILL_GRACE_SEC = 5.0
LOG_TAIL_LINES = 200
LOG_TAIL_BYTES = 256 * 1024
TRANSFER_TIMEOUT_SEC = 120
TAIL_POLL_SEC = 0.2  # how often job.log is checked for new output while the job is quiet
TAIL_CHUNK = 64 * 1024
TAIL_JOIN_SEC = 30.0  # after the job: time for the callbacks to catch up with what it printed last
JOB_MARKER = "MENDFLOW_LOCAL_JOB_ID"
EGRESS_SOCKET = "MENDFLOW_EGRESS_SOCKET"  # read by the runner (mendflow_runner/proc.py)
JOB_DIR = "MENDFLOW_JOB_DIR"  # likewise: the job's own directory, the one entry its sandboxes show of jobs/
UNIX_PATH_MAX = 107  # sun_path's 108 bytes, less the terminating NUL
OWNER_FILE = "owner"
# What an image brings beside Python and its toolchain (``IMAGE_TOOLS``), as its Dockerfile installs it: the
# Python image's uv and ruff, the Go image's golangci-lint. A job sees only its own image's: a Go test that runs
# `uv` when it finds it (ardanlabs/jinja 1.8.0's reference renderer, skipped without it) failed offline here,
# where every image's jobs found the Python image's uv.
TOOLS = {RUNNER_IMAGE: ("uv", "ruff")}
# Taken when the host has them, on PATH or built into ``<cache_dir>/bin`` (scripts/build-go-tools.sh).
OPTIONAL_TOOLS = {"ci-runner-go": ("golangci-lint",)}

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that forked it ends
_DELETING: list[subprocess.Popen[bytes]] = []  # the finished jobs' directories being removed (``_discard``)
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls into it
# Every signal a process may catch or ignore. exec keeps a signal the trusted side ignores ignored in the job: one
# started under nohup (SIGHUP) or in the background by a script (SIGINT, SIGQUIT) would pass that on to every
# test, and a suite that signals its own children (sh 2.4.0's) would fail there and nowhere else.
_RESETTABLE = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))

# The launcher sets these itself; the spec cannot point them elsewhere.
RESERVED_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "UV_CACHE_DIR",
    "MENDFLOW_JOB_CACHE",
    JOB_MARKER,
    EGRESS_SOCKET,
    JOB_DIR,
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
)


def _dir(path: Path, mode: int, uid: int | None = None, gid: int | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    if uid is not None and gid is not None:
        os.chown(path, uid, gid)
    return path


def cache_key(scope: str) -> str:
    """The directory name of a cache scope's dependency cache under ``BASE/cache/scopes``."""
    return hashlib.sha256(scope.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Identity:
    """Who one job runs as: a uid of its own (its group the same number) and its repository's cache group;
    all None when mendflow is not root, and jobs run as ourselves."""

    uid: int | None = None
    groups: tuple[int, ...] = ()


def _marked_pids(job_id: str) -> list[int]:
    """Processes whose environment carries this job's id: the sweep where there is no cgroup."""
    needle = f"{JOB_MARKER}={job_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _process_identity(pid: int) -> str:
    """'pid start-time': a pid alone may be reused by another process after its owner died."""
    try:
        start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""
    return f"{pid} {start}"


def _owner_alive(job_dir: Path) -> bool:
    try:
        owner = (job_dir / OWNER_FILE).read_text()
    except OSError:
        return False  # written first thing; a job without one predates it or was never set up
    return bool(owner) and _process_identity(int(owner.split()[0])) == owner


def _remove(path: Path) -> None:
    """A file, link or whole tree, whichever ``path`` is (a link is removed, never followed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _kill(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def image_tool_dirs(image: str, toolchains: Path) -> list[str]:
    """Where this host keeps the toolchain ``image`` brings (the Go image's ``go``, the Rust image's sysroot): the
    local launcher's stand-in for the image, found on the trusted side's PATH."""
    dirs = []
    if command := IMAGE_SYSROOTS.get(image):
        dirs.append(str(reachable_sysroot(command, toolchains) / "bin"))
    for tool in IMAGE_TOOLS.get(image, ()):
        found = shutil.which(tool)
        if found is None:
            raise FileNotFoundError(
                f"{tool} is not on PATH: the local launcher runs {image}'s jobs with the host's {tool}"
            )
        # The directory it was found in (npm's /usr/bin/npm must stay a link into its package), unless a dropped
        # job could not reach it (a link under /root): then the one it links to.
        named = Path(found).parent
        dirs.append(str(named if _searchable_by_all(named) else Path(found).resolve().parent))
    return list(dict.fromkeys(dirs))


def reachable_sysroot(command: tuple[str, ...], toolchains: Path) -> Path:
    """The toolchain root ``command`` prints (``rustc --print sysroot``), or, where a dropped job could not reach
    it (rustup's under /root), a mirror of it under ``toolchains``: hard links (no 1.4 GB copy), made once per
    toolchain, its directories world-searchable. Its binaries find their libraries relative to themselves."""
    try:
        printed = subprocess.run(list(command), capture_output=True, text=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise FileNotFoundError(f"`{' '.join(command)}` failed: the host has no such toolchain ({exc})") from exc
    sysroot = Path(printed.strip())
    if _searchable_by_all(sysroot):
        return sysroot
    stamp = f"{sysroot}:{(sysroot / 'bin').stat().st_mtime_ns}"
    target = toolchains / f"sysroot-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}"
    if not (target / ".complete").exists():
        tmp = Path(tempfile.mkdtemp(prefix=".sysroot-", dir=toolchains))
        shutil.copytree(sysroot, tmp, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)
        for directory in [tmp, *(p for p in tmp.rglob("*") if p.is_dir() and not p.is_symlink())]:
            directory.chmod(0o755)
        (tmp / ".complete").touch()
        try:
            os.rename(tmp, target)
        except OSError:  # another job mirrored it first
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _searchable_by_all(path: Path) -> bool:
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents))


def _with_dirs(dirs: list[str], path: str) -> str:
    """``dirs`` ahead of ``path``, but for those already on it (``/usr/bin``'s node must not come before the job's
    own tools)."""
    have = path.split(":")
    return ":".join([*(d for d in dirs if d not in have), *have])


class Toolchain:
    """An image's own tools, world-readable (a dropped job cannot reach the project venv under /root: uv and
    ruff), and python."""

    def __init__(self, base: Path, python: Path, built_tools: Path) -> None:
        self.base, self.python, self.built_tools = base, python, built_tools

    def bin_dir(self, image: str) -> Path:
        scripts = Path(sysconfig.get_path("scripts"))
        sources = {name: scripts / name for name in TOOLS.get(image, ())}
        for name, src in sources.items():
            if not src.is_file():
                found = shutil.which(name)
                if found is None:
                    raise FileNotFoundError(f"{name} is neither in {scripts} nor on PATH")
                sources[name] = Path(found)
        for name in OPTIONAL_TOOLS.get(image, ()):  # a linter a repository may configure; its runner says so when
            found = shutil.which(name) or shutil.which(name, path=str(self.built_tools))  # it is absent
            if found is not None:
                sources[name] = Path(found)
        key = "-".join(f"{n}.{s.stat().st_size}.{s.stat().st_mtime_ns}" for n, s in sources.items())
        key += "-" + hashlib.sha256(str(self.python).encode()).hexdigest()[:8]
        target = self.base / key / "bin"
        if not (target / ".complete").exists():
            self._build(target, sources)
        return target

    def _build(self, target: Path, sources: dict[str, Path]) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=self.base))
        bin_dir = _dir(tmp / "bin", 0o755)
        for name, src in sources.items():
            try:
                os.link(src, bin_dir / name)  # same filesystem: no 60 MB copy
            except OSError:
                shutil.copy2(src, bin_dir / name)
            os.chmod(bin_dir / name, 0o755)
        for alias in ("python", "python3"):
            (bin_dir / alias).symlink_to(self.python)
        (bin_dir / ".complete").touch()
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, target.parent)
        except OSError:  # another job built it first
            shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Workspace:
    root: Path  # BASE/jobs/<id>, root-owned
    ws: Path  # what the job sees

    @property
    def log(self) -> Path:
        return self.root / "job.log"

    def sub(self, name: str) -> Path:
        return self.ws / name

    @property
    def egress_socket(self) -> Path:
        return self.root / "egress" / "sock"


class LocalLauncher(Launcher):
    name = "local"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.drops = os.geteuid() == 0
        default_base = ROOT_BASE if self.drops else settings.cache_dir / "local-launcher"
        self.base = settings.sandbox.local_base_dir or default_base
        self.caches = self.base / "cache" / "scopes"
        self.ids = IdClaims(self.base / "ids", settings.sandbox.job_ids_start, settings.sandbox.job_ids_count)
        if self.drops:
            self.python = SYSTEM_PYTHON if SYSTEM_PYTHON.exists() else Path(sys.executable)
        else:
            self.python = Path(sys.executable)

    # -- setup ----------------------------------------------------------------------------------------------

    def _prepare_base(self, image: str) -> Path:
        """The launcher's directories, and the bin directory of ``image``'s own tools."""
        if self.base.is_symlink() or (self.base.exists() and self.base.stat().st_uid != os.geteuid()):
            # /var/tmp is world-writable: a base someone else planted could redirect our files.
            raise OSError(f"{self.base} is a link or not owned by us; remove it and retry")
        root_owned = (0, 0) if self.drops else (None, None)
        # Listable: tools list each parent of a temp file (pytest-mypy-plugins' clean-up: attrs' 86 mypy tests),
        # and the base holds only fixed names. jobs/ is not: a job's sandboxes show it with that job alone in it.
        _dir(self.base, 0o755, *root_owned)
        if self.drops:
            _check_traversable(self.base)
        for sub in ("jobs", "toolchain", "cache"):
            _dir(self.base / sub, 0o711)
        _dir(self.trash, 0o700, *root_owned)
        _dir(self.base / "toolchain", 0o755)
        _dir(self.caches, 0o711, *root_owned)
        _dir(self.ids.root, 0o700, *root_owned)
        return Toolchain(self.base / "toolchain", self.python, self.settings.cache_dir / "bin").bin_dir(image)

    def _make_workspace(self, job_id: str, uid: int | None) -> Workspace:
        # Listable by the job, not writable: tools walk up from a temp file and list each parent, as they may on
        # any machine (pytest-mypy-plugins' cache clean-up failed 86 of attrs' tests on PermissionError).
        root = _dir(self.base / "jobs" / job_id, 0o755)
        (root / OWNER_FILE).write_text(_process_identity(os.getpid()))  # `reap` spares jobs whose owner lives
        ws = Workspace(root, root / "ws")
        for path in (ws.ws, *(ws.sub(name) for name in ("out", "home", "tmp", "cache"))):
            _dir(path, 0o700, uid, uid)
        _dir(ws.sub("in"), 0o755)  # root-owned when dropping: the job reads its inputs, cannot swap them
        return ws

    def _place_inputs(self, spec: JobSpec, ws: Workspace) -> None:
        for name, url in spec.inputs.items():
            _check_name(name)
            dest = ws.sub("in") / name
            if url.startswith(("http://", "https://")):
                _download(url, dest)  # presigned: the launcher fetches it, so the job needs no network for it
            else:
                shutil.copyfile(_file_path(url), dest)
            os.chmod(dest, 0o644)

    def _place_image(self, spec: JobSpec, ws: Workspace) -> dict[str, str]:
        """The image's in-job packages (its toolchain is the host's: ``scripts/lib/bootstrap.sh`` installs it)."""
        packages = IMAGE_PACKAGES.get(spec.image)
        if packages is None:
            raise ValueError(
                f"the local launcher has no runner for image {spec.image!r}; use one of {list(IMAGE_PACKAGES)}"
            )
        for package in packages:
            copy_package(package, ws.root / "runner")
        return {"PYTHONPATH": str(ws.root / "runner"), "MENDFLOW_JOB_PYTHON": str(self.python)}

    def _serve_egress(self, spec: JobSpec, ws: Workspace, uid: int | None) -> EgressProxy:
        """The job's egress proxy, serving for as long as the job runs: the package index hosts and nothing else."""
        path = ws.egress_socket
        if len(os.fsencode(path)) > UNIX_PATH_MAX:
            hint = "set MENDFLOW_SANDBOX__LOCAL_BASE_DIR to a shorter path"
            raise OSError(f"{path} is too long for a Unix socket; {hint}")
        _dir(path.parent, 0o711)
        allowlist = Allowlist([*self.settings.sandbox.egress_hosts, *index_hosts(spec.env)])
        return EgressProxy(path, allowlist, owner=uid)

    def _cache_for(self, spec: JobSpec, ws: Workspace) -> Path:
        """The dependency cache ``spec`` may use: its scope's, shared only with jobs of the same repository."""
        if not spec.cache_scope:
            return ws.sub("cache")
        path = self.caches / cache_key(spec.cache_scope)
        with self._caches_locked():
            cache = self._group_cache(path) if self.drops else _dir(path, 0o700)
            os.utime(cache)  # its last use, for eviction (caches.py)
        return cache

    @contextlib.contextmanager
    def _caches_locked(self) -> Iterator[None]:
        """One launcher at a time makes, uses or evicts a cache (a new repository's first two jobs make one)."""
        with (self.caches / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def evict_caches(self) -> list[str]:
        """Remove the dependency caches of repositories idle past ``sandbox.cache_max_idle_days``, then the least
        recently used until the rest fit ``sandbox.cache_max_gb``; a cache's group claim goes with it."""
        sandbox = self.settings.sandbox
        with self._caches_locked():
            chosen = to_evict(
                survey(self.caches),
                now=time.time(),
                max_idle_sec=sandbox.cache_max_idle_days * 86400,
                max_bytes=int(sandbox.cache_max_gb * 2**30),
                busy_sec=2 * self.settings.build_timeout_sec,
            )
            self._remove_caches(chosen)
        return [f"dependency cache {path.name}" for path in chosen]

    def cache_names(self) -> set[str]:
        """The names of the dependency caches there are (one per repository, ``cache_key``)."""
        return {path.name for path in cache_dirs(self.caches)}

    def remove_caches(self, names: set[str]) -> None:
        """Remove the dependency caches of these names, whatever their age (the test suite's, whose repositories
        will not be seen again)."""
        if not self.caches.is_dir():
            return
        with self._caches_locked():
            self._remove_caches([path for path in cache_dirs(self.caches) if path.name in names])

    def _remove_caches(self, paths: list[Path]) -> None:
        for path in paths:
            group = path.stat().st_gid
            _remove(path)
            if self.drops and group != 0:
                self.ids.release_scope(group, path.name)

    def _group_cache(self, path: Path) -> Path:
        """A repository's cache: root's, with a group of its own (setgid 2770) that only its jobs get."""
        info = path.lstat() if os.path.lexists(path) else None
        if info and stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and info.st_mode & stat.S_ISGID:
            return path
        if info:  # made before caches had a group of their own: only a cache, so it is built again
            _remove(path)
        _dir(path, 0o700, 0, self.ids.claim(f"{SCOPE_PREFIX}{path.name}"))
        os.chmod(path, 0o2770)  # setgid: what any of its jobs adds belongs to the repository's group
        return path

    def _identity(self, uid: int | None, cache: Path) -> Identity:
        if uid is None:
            return Identity()
        return Identity(uid, (cache.stat().st_gid,) if cache.parent == self.caches else ())

    def _environment(self, spec: JobSpec, ws: Workspace, tools: Path, job_id: str, cache: Path) -> dict[str, str]:
        env = {k: v for k, v in spec.env.items() if not is_credential(k) and k not in RESERVED_ENV}
        env = {"LANG": "C.UTF-8", **JOB_ENV, **env}
        env.setdefault("MENDFLOW_JOB_TIMEOUT_SEC", str(spec.timeout_sec))
        cafile = ssl.get_default_verify_paths().cafile
        if cafile and os.access(cafile, os.R_OK):
            env.setdefault("SSL_CERT_FILE", cafile)  # uv and urllib behind a TLS-inspecting proxy
        env.update(
            PATH=f"{tools}:/usr/local/bin:/usr/bin:/bin",
            HOME=str(ws.sub("home")),
            TMPDIR=str(ws.sub("tmp")),
            UV_CACHE_DIR=str(cache),
            MENDFLOW_JOB_CACHE=str(cache),  # every toolchain's caches, below it (the Go runner's go/mod, go/build)
            # Copies, not hard links: a hard-linked venv file *is* the cached one, so a job changing a package
            # in its venv would change what the next job of any repository installs.
            UV_LINK_MODE="copy",
            UV_PYTHON_DOWNLOADS="never",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env[JOB_MARKER] = job_id
        env[EGRESS_SOCKET] = str(ws.egress_socket)
        env[JOB_DIR] = str(ws.root)
        return env

    def prepare_image(self, image: str) -> dict[str, str]:
        """What ``image`` brings that its first job would otherwise wait for (its seed), made now, as an image's
        build makes it before any pod: a benchmark's first build is then a repository's first, not the image's."""
        self._prepare_base(image)
        toolchains = self.base / "toolchain"
        with tempfile.TemporaryDirectory(prefix=".runner-", dir=toolchains) as runner:
            for package in IMAGE_PACKAGES[image]:
                copy_package(package, Path(runner))
            return seed_env(image, toolchains, image_tool_dirs(image, toolchains), self.python, Path(runner))

    # -- run ------------------------------------------------------------------------------------------------

    def run(self, spec: JobSpec, on_output: OnOutput | None = None) -> JobResult:
        job_id = f"{_slug(spec.name)}-{uuid.uuid4().hex[:8]}"
        start = time.monotonic()
        ws: Workspace | None = None
        cgroups: JobCgroups | None = None
        egress: EgressProxy | None = None
        uid: int | None = None
        try:
            try:
                tools = self._prepare_base(spec.image)
                uid = self.ids.claim_for_job(job_id) if self.drops else None
                ws = self._make_workspace(job_id, uid)
                cache = self._cache_for(spec, ws)
                identity = self._identity(uid, cache)
                self._place_inputs(spec, ws)
                env = self._environment(spec, ws, tools, job_id, cache)
                env.update({k: v for k, v in self._place_image(spec, ws).items() if k not in spec.env})
                tool_dirs = image_tool_dirs(spec.image, self.base / "toolchain")
                env["PATH"] = _with_dirs(tool_dirs, env["PATH"])
                env.update(seed_env(spec.image, self.base / "toolchain", tool_dirs, self.python, ws.root / "runner"))
                argv = [part.replace("{workspace}", str(ws.ws)) for part in spec.command]
                limits = JobLimits(spec.memory_limit_mb, spec.cpu_limit, self.settings.sandbox.max_processes)
                cgroups = JobCgroups.create(job_id, limits)
                egress = self._serve_egress(spec, ws, uid)
            except (OSError, ValueError) as exc:
                return JobResult(state=JobState.ERROR, reason=f"could not prepare the job: {exc}")
            sink = output_sink(spec, on_output)
            result = self._execute(spec, argv, env, ws, cgroups, job_id, sink, identity)
            result.outputs = self._collect_outputs(spec, ws, result)
            result.log_tail = _tail(ws.log)
            result.duration_sec = round(time.monotonic() - start, 3)
            return result
        finally:
            if egress is not None:
                egress.close()
            if cgroups is not None:
                _kill(cgroups.pids(), signal.SIGKILL)
                cgroups.remove()
            if uid is not None:
                self._clear_uid(uid)
            if ws is not None:
                self._discard(ws.root)

    @property
    def trash(self) -> Path:
        return self.base / "trash"

    def _discard(self, job_dir: Path) -> None:
        """Delete a finished job's directory without making the run wait: on a disk mounted with ``discard``,
        each unlink waits for the device (a TypeScript job's node_modules: 0.3-0.7 s). Renamed into the
        root-only trash at once, it is removed by an ``rm`` that outlives this process; ``reap`` empties what a
        killed one left."""
        parked = self.trash / job_dir.name
        try:
            job_dir.rename(parked)
        except OSError:
            shutil.rmtree(job_dir, ignore_errors=True)
            return
        _DELETING[:] = [rm for rm in _DELETING if rm.poll() is None]  # reaped, not left as zombies
        try:
            rm = subprocess.Popen(
                ["rm", "-rf", "--", str(parked)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not killed with this process's group (Ctrl-C)
            )
        except OSError:
            shutil.rmtree(parked, ignore_errors=True)
            return
        _DELETING.append(rm)

    def _clear_uid(self, uid: int) -> None:
        """Nothing of a job outlives it: what still runs as its uid, what it left in the shared temp dirs."""
        _kill(processes_of(uid), signal.SIGKILL)
        for leftover in files_of(uid):
            _remove(leftover)
        self.ids.release(uid)

    def reap(self, older_than_sec: float | None = None) -> list[str]:
        """Remove what killed runs left of their jobs: processes, cgroups, job directories (in the trash too),
        what ran as their uids or was left in the shared temp dirs, and the uids' claims.

        ``run`` cleans up in ``finally``, which a SIGKILL of the trusted process skips. A job is reaped only
        when the process that started it is gone and its directory is older than ``older_than_sec`` (default
        twice the build timeout), so a live job never is, however long it runs.
        """
        if older_than_sec is None:
            older_than_sec = 2 * self.settings.build_timeout_sec
        jobs = self.base / "jobs"
        uids = {job_id: uid for uid, job_id in self.ids.jobs()}
        reaped = []
        for job_dir in sorted(jobs.iterdir()) if jobs.is_dir() else []:
            try:
                young = time.time() - job_dir.stat().st_mtime < older_than_sec
            except FileNotFoundError:  # its own run has just cleaned it up
                continue
            if young or _owner_alive(job_dir):
                continue
            cgroups = JobCgroups.existing(job_dir.name)
            _kill(sorted(set(cgroups.pids()) | set(_marked_pids(job_dir.name))), signal.SIGKILL)
            cgroups.remove()
            if job_dir.name in uids:
                self._clear_uid(uids[job_dir.name])
            shutil.rmtree(job_dir, ignore_errors=True)
            reaped.append(f"local job {job_dir.name}")
        for parked in sorted(self.trash.iterdir()) if self.trash.is_dir() else []:
            shutil.rmtree(parked, ignore_errors=True)
        if self.caches.is_dir():
            reaped += self.evict_caches()
        return reaped

    def _preexec(self, spec: JobSpec, cgroups: JobCgroups, identity: Identity) -> Callable[[], None]:
        # Runs in the child between fork and exec: only os-level calls (no locks a parent thread may hold).
        # Where the memory cgroup holds the job to its limit, as a pod's does, address space is not limited too:
        # V8 reserves about 10 GiB of it for each WebAssembly instance (vitest's and esbuild's parsers), which
        # no real memory limit would refuse. Without the cgroup, RLIMIT_AS is the only guard there is.
        memory = resource.RLIM_INFINITY if "memory" in cgroups.groups else spec.memory_limit_mb * 1024 * 1024
        cpu = self.settings.sandbox.cpu_time_limit_sec
        nofile = self.settings.sandbox.open_files_limit
        procs_files = cgroups.procs_files
        uid, groups = identity.uid, list(identity.groups)
        parent = os.getpid()

        def preexec() -> None:
            for procs in procs_files:  # join before dropping privileges: cgroup files are root's
                fd = os.open(procs, os.O_WRONLY)
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            for signum in _RESETTABLE:  # each as a fresh process has it
                _LIBC.signal(signum, signal.SIG_DFL)
            if uid is not None:
                os.setgroups(groups)  # its repository's cache group, nothing else
                os.setgid(uid)
                os.setuid(uid)
                os.umask(0o007)  # what it adds to the cache its repository's next job may change; others nothing
            # After the uid switch, which clears it: a job dies with the trusted side that launched it (killed
            # or crashed before its clean-up) instead of running on unwatched. It is the launching thread's
            # death that counts; that thread waits in _wait for as long as the job runs.
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the trusted side died before prctl took effect
                os._exit(137)

        return preexec

    def _execute(
        self,
        spec: JobSpec,
        argv: list[str],
        env: dict[str, str],
        ws: Workspace,
        cgroups: JobCgroups,
        job_id: str,
        on_output: OnOutput,
        identity: Identity,
    ) -> JobResult:
        with ws.log.open("wb") as log:
            os.chmod(ws.log, 0o600)
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=ws.ws,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=self._preexec(spec, cgroups, identity),
                    close_fds=True,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                return JobResult(state=JobState.ERROR, reason=f"could not start {argv[:1]}: {exc}")
            tail = _LogTail(ws.log, OutputLines(on_output), spec.name)
            try:
                timed_out = self._wait(proc, spec, cgroups, job_id)
            except BaseException:
                tail.stop(drain=False)  # interrupted: the caller's cleanup matters, not the last lines
                raise
            tail.stop()  # after the sweep: nothing writes to job.log any more
        return _classify(proc.returncode, timed_out, spec, cgroups, ws.log, self.settings.sandbox.max_processes)

    def _wait(self, proc: subprocess.Popen[bytes], spec: JobSpec, cgroups: JobCgroups, job_id: str) -> bool:
        """Wait for the job (terminated at its timeout), then sweep what is left; True when it timed out."""
        timed_out = False
        try:
            proc.wait(spec.timeout_sec)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._terminate(proc, cgroups, job_id)
        self._sweep(proc, cgroups, job_id)
        return timed_out

    def _job_pids(self, proc: subprocess.Popen[bytes], cgroups: JobCgroups, job_id: str) -> list[int]:
        pids = set(cgroups.pids()) | set(_marked_pids(job_id))
        return sorted(pids - {os.getpid()})

    def _terminate(self, proc: subprocess.Popen[bytes], cgroups: JobCgroups, job_id: str) -> None:
        """SIGTERM to the whole job (the runner then writes its report), SIGKILL after a short grace."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        _kill(self._job_pids(proc, cgroups, job_id), signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KILL_GRACE_SEC)

    def _sweep(self, proc: subprocess.Popen[bytes], cgroups: JobCgroups, job_id: str) -> None:
        """SIGKILL whatever is left of the job (group, cgroup, marked processes) and wait for it to go."""
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            left = self._job_pids(proc, cgroups, job_id)
            _kill(left, signal.SIGKILL)
            if proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(1)
            if (not left and proc.returncode is not None) or time.monotonic() > deadline:
                return
            time.sleep(0.05)

    # -- outputs --------------------------------------------------------------------------------------------

    def _collect_outputs(self, spec: JobSpec, ws: Workspace, result: JobResult) -> dict[str, str]:
        delivered = {}
        for name, url in spec.outputs.items():
            try:
                _check_name(name)
                if url.startswith(("http://", "https://")):
                    _upload(ws.sub("out"), name, url)
                else:
                    _copy_out(ws.sub("out"), name, _file_path(url))
            except (OSError, ValueError) as exc:
                with ws.log.open("a") as log:
                    log.write(f"\n[launcher] output {name} not delivered: {exc}\n")
                continue
            delivered[name] = url
        return delivered


class _LogTail:
    """Follows job.log on a thread while the job runs and feeds what it appends to ``lines``.

    The job writes job.log directly (no pipe: a slow callback never stalls the job); the thread reads what is
    new and sleeps ``TAIL_POLL_SEC`` when there is nothing. It runs in a copy of the caller's context, so the
    callbacks see the caller's Prefect settings and run context.
    """

    def __init__(self, path: Path, lines: OutputLines, name: str) -> None:
        self.path, self.lines = path, lines
        self._stopping, self._abandoned = threading.Event(), threading.Event()
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._follow,), daemon=True, name=f"log-{name}")
        self._thread.start()

    def _follow(self) -> None:
        with self.path.open("rb", buffering=0) as fh:
            while not self._abandoned.is_set():
                stopping = self._stopping.is_set()  # seen before reading: the job is gone, this read gets the rest
                data = fh.read(TAIL_CHUNK)
                if data:
                    self.lines.feed(data)
                elif stopping:
                    break
                else:
                    self._stopping.wait(TAIL_POLL_SEC)
        if not self._abandoned.is_set():
            self.lines.close()

    def stop(self, drain: bool = True) -> None:
        """Deliver what is left (or nothing more), then return; callbacks slower than ``TAIL_JOIN_SEC`` finish
        on their own."""
        if not drain:
            self._abandoned.set()
        self._stopping.set()
        self._thread.join(TAIL_JOIN_SEC if drain else 1.0)


def _classify(
    rc: int | None, timed_out: bool, spec: JobSpec, cgroups: JobCgroups, log: Path, max_processes: int
) -> JobResult:
    if cgroups.reached_process_cap():  # first: a thread refused may hang a test until the timeout (once_cell)
        reason = (
            f"reached its cap of {max_processes} processes and threads at once, so what it ran is no evidence: "
            "raise MENDFLOW_SANDBOX__MAX_PROCESSES if its tests need more"
        )
        return JobResult(state=JobState.ERROR, exit_code=rc, reason=reason)
    if timed_out:
        return JobResult(state=JobState.TIMED_OUT, exit_code=rc, reason=f"exceeded its timeout of {spec.timeout_sec} s")
    if cgroups.oom_killed():
        reason = f"killed by the kernel's OOM killer at its {spec.memory_limit_mb} MB memory limit; {MEMORY_ADVICE}"
        return JobResult(state=JobState.OOM_KILLED, exit_code=rc, reason=reason)
    if rc == -signal.SIGKILL:
        reason = f"killed by SIGKILL, most likely out of memory (limit {spec.memory_limit_mb} MB); {MEMORY_ADVICE}"
        return JobResult(state=JobState.OOM_KILLED, exit_code=rc, reason=reason)
    if rc == 0:
        return JobResult(state=JobState.SUCCEEDED, exit_code=0, reason=None)
    last = next((line for line in reversed(_tail(log, 20).splitlines()) if line.strip()), "")
    how = f"signal {-rc}" if rc is not None and rc < 0 else f"exit code {rc}"
    return JobResult(state=JobState.FAILED, exit_code=rc, reason=f"ended with {how}: {last}"[:500])


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
            data = fh.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])


def _check_traversable(path: Path) -> None:
    """The unprivileged job must be able to walk down to its workspace and toolchain."""
    for parent in path.resolve().parents:
        if not parent.stat().st_mode & stat.S_IXOTH:
            raise OSError(
                f"{parent} is not searchable by others, so a job dropped to an unprivileged uid cannot reach "
                f"{path}; set MENDFLOW_SANDBOX__LOCAL_BASE_DIR to a directory outside it (default /var/tmp/mendflow)"
            )


def _slug(name: str) -> str:
    # Short: the job's egress socket lives under its directory, and a Unix socket's path has 107 bytes at most.
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:24].strip("-.")
    return cleaned or "job"


def _check_name(name: str) -> None:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"input/output name {name!r} must be a plain file name")


def _file_path(url: str) -> Path:
    parts = urlsplit(url)
    if parts.scheme != "file":
        raise ValueError(f"the local launcher handles file:// and http(s):// URLs, not {url!r}")
    return Path(unquote(parts.path))


@contextlib.contextmanager
def _opened_output(out_dir: Path, name: str) -> Iterator[int]:
    """Open out/<name> without following links: the job controls out/ and could point it at a root file."""
    dir_fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"out/{name} is not a regular file")
        yield fd
    finally:
        os.close(fd)


def _copy_out(out_dir: Path, name: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _opened_output(out_dir, name) as fd:
        tmp_fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
        try:
            with os.fdopen(tmp_fd, "wb") as tmp, os.fdopen(os.dup(fd), "rb") as src:
                shutil.copyfileobj(src, tmp)
            os.chmod(tmp_name, 0o644)
            os.replace(tmp_name, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise


def _download(url: str, dest: Path) -> None:
    with urllib.request.urlopen(url, timeout=TRANSFER_TIMEOUT_SEC) as resp, dest.open("wb") as out:
        shutil.copyfileobj(resp, out)


def _upload(out_dir: Path, name: str, url: str) -> None:
    """PUT out/<name> to a presigned URL; no headers beyond Content-Length, which the signature covers."""
    with _opened_output(out_dir, name) as fd, os.fdopen(os.dup(fd), "rb") as src:
        data = src.read()
    # Content-Type is unsigned but must be set: urllib would send a form type that S3 APIs mistreat.
    headers = {"Content-Length": str(len(data)), "Content-Type": "application/octet-stream"}
    request = urllib.request.Request(url, data=data, method="PUT", headers=headers)
    with urllib.request.urlopen(request, timeout=TRANSFER_TIMEOUT_SEC) as resp:
        resp.read()
