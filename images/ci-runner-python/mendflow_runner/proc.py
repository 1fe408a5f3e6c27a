"""Run one step's command under the job's deadline and log it to runner.log."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

# How a phase's step is run: as it is, or through ``sandbox``.
Wrap = Callable[[list[str]], list[str]]


def as_is(argv: list[str]) -> list[str]:
    """The ``Wrap`` that runs a command as it is."""
    return argv


GRACE_SEC = 3.0
# Set by the local launcher: the Unix socket of the egress proxy the dependency phase may use (egress.py).
EGRESS_SOCKET = "MENDFLOW_EGRESS_SOCKET"
JOB_DIR = "MENDFLOW_JOB_DIR"  # the local launcher's jobs/<id>
# The CPU priority of work beside the job's main line (``beside``): the kernel gives a nice-10 task about a tenth
# of a contended core against a nice-0 one, and all of an idle one.
BESIDE_NICE = 10

T = TypeVar("T")


@dataclass
class StepResult:
    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def last_stderr_line(self) -> str:
        for text in (self.stderr, self.stdout):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines[-1]
        return ""

    def describe(self) -> str:
        how = "timed out" if self.timed_out else f"exited {self.returncode}"
        return f"`{' '.join(self.argv)}` {how}: {self.last_stderr_line()}"


class Log:
    """runner.log: every command, its exit code and output, in order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # a step on another thread (the Node runner's eslint) writes whole entries too

    def write(self, text: str, echo: bool = True) -> None:
        line = text if text.endswith("\n") else text + "\n"
        with self._lock, self.path.open("a", encoding="utf-8", errors="replace") as fh:
            fh.write(line)
        if echo:  # the job's stdout is what a launcher keeps as the log tail
            print(line, end="", flush=True)

    def step(self, r: StepResult, cwd: Path | None) -> None:
        how = f"exit={r.returncode}, timed_out={r.timed_out}, {r.duration:.1f}s"
        head = f"$ {' '.join(r.argv)}  (cwd={cwd}, {how})"
        self.write(f"{head}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}\n", echo=False)
        print(head if r.ok else f"{head}\n  {r.last_stderr_line()}", flush=True)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # The step runs in its own process group so uv's or pytest's children die with it.
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(GRACE_SEC)
    except (ProcessLookupError, PermissionError):
        pass
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever ignored SIGTERM, and background children
    proc.wait()


def _read(fh: IO[bytes]) -> str:
    fh.seek(0)
    return fh.read().decode("utf-8", errors="replace")


Mounts = tuple[tuple[Path, Path], ...]  # (what, where): a tree shown at a place inside a sandbox's writable path


def offline(
    argv: list[str], writable: Path, readable: tuple[Path, ...] = (), mounts: Mounts = (), shared: tuple[Path, ...] = ()
) -> list[str]:
    """``argv`` with no network (a fresh namespace: not even the host's loopback, where the Prefect API may
    listen), its own ``/tmp``, ``/var/tmp`` (``_own_var_tmp``) and ``/dev/shm`` (gone when it ends), and every path
    but ``writable`` (and the job's own ``HOME``: ``_own_home``) read-only.

    ``readable`` are paths the command needs that may live under the host's ``/tmp`` or ``/var/tmp`` (the runner's
    own plugin, the interpreter): they are bound back, read-only, over the fresh ones. ``mounts`` show a
    read-only tree at a place inside ``writable`` (a Node job's kept ``node_modules``); each place must exist.
    ``shared`` are directories of the repository's cache that a tool running none of the repository's code may
    write too (golangci-lint's analysis cache); each must exist.
    bubblewrap does it unprivileged when the machine has it (the local launcher's hosts: the bootstrap
    installs it); a Kubernetes pod gets the same from its NetworkPolicy and emptyDirs, so without bwrap the
    command runs as it is.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None or os.environ.get("MENDFLOW_JOB_OFFLINE") == "0":
        return argv
    sandbox = ["--unshare-net", "--unshare-ipc", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    sandbox += ["--tmpfs", "/tmp", *_own_var_tmp(), *_this_job_alone(), *_own_home(), *_loopback_hosts()]
    sandbox += _named_user()
    if egress := os.environ.get(EGRESS_SOCKET):  # a Unix socket crosses network namespaces: hide it
        sandbox += ["--tmpfs", str(Path(egress).parent)]
    for path in sorted({str(p.resolve()) for p in readable if _under_tmp(p.resolve())}):
        sandbox += ["--ro-bind", path, path]
    where = str(writable)
    shown = [arg for what, place in mounts for arg in ("--ro-bind", str(what), str(place))]
    kept = [arg for path in shared for arg in ("--bind", str(path), str(path))]
    return [bwrap, *sandbox, "--bind", where, where, *shown, *kept, "--", *argv]


_IPV6_LOCALHOST = re.compile(r"^[ \t]*::1[ \t]+(?:\S+[ \t]+)*localhost\b", re.MULTILINE)


@functools.cache
def _sandbox_hosts() -> str | None:
    """The offline sandbox's ``/etc/hosts``, naming ``localhost`` on both loopbacks as a container runtime or the
    kubelet writes it, where the machine's names it for IPv4 only (None where it names both): a test that
    reaches its own server at ``::`` by name (pino-std-serializers' ``http.get(server.address())``) cannot ask a
    DNS server offline (``getaddrinfo EAI_AGAIN localhost``)."""
    try:
        machine = Path("/etc/hosts").read_text(encoding="utf-8", errors="replace")
    except OSError:
        machine = "127.0.0.1\tlocalhost\n"
    if _IPV6_LOCALHOST.search(machine):
        return None
    return f"{machine.rstrip()}\n::1\tlocalhost ip6-localhost ip6-loopback\n"


@functools.cache  # read once: every sandboxed command asks
def sandbox_passwd(uid: int, gid: int, home: str) -> str | None:
    """A sandbox's ``/etc/passwd``, naming ``uid`` as a container image names its user, where the
    machine's does not (None where it does): the local launcher runs each job as a uid of its own, and a process
    started without ``HOME`` asks for its home by the uid (pino-pretty 13.0.0's CLI tests spawn it with ``TERM``
    and ``TZ`` alone; Node's ``os.homedir()`` then threw ENOENT). The home is the job's ``HOME``, as on a
    developer's machine, where the two agree (go-homedir 1.1.0's TestDir compares them)."""
    return _naming("/etc/passwd", uid, f"mendflow:x:{uid}:{gid}:mendflow job:{home}:/usr/sbin/nologin")


@functools.cache
def sandbox_group(gid: int) -> str | None:
    """A sandbox's ``/etc/group``, naming ``gid`` as a container image names its user's group, where the
    machine's does not (None where it does): a job's gid is its own uid's, and a test may ask for the name of the
    group of a file it made (anyio 4.16.0's ``test_group``: ``getgrgid(): gid not found``)."""
    return _naming("/etc/group", gid, f"mendflow:x:{gid}:")


def _naming(place: str, number: int, entry: str) -> str | None:
    """The machine's ``place`` (``/etc/passwd``, ``/etc/group``) with ``entry`` added, where none of its lines
    has ``number`` as its id (None where one has)."""
    try:
        machine = Path(place).read_text(encoding="utf-8", errors="replace")
    except OSError:
        machine = ""
    if any(line.split(":")[2:3] == [str(number)] for line in machine.splitlines()):
        return None
    return f"{machine.rstrip()}\n{entry}\n".lstrip()


_written_etc: dict[str, Path] = {}  # the files this process wrote, written again if a temp cleaner removed one


def _loopback_hosts() -> list[str]:
    """bwrap arguments that bind ``_sandbox_hosts`` over ``/etc/hosts``, from a file outside the sandbox's view."""
    return _bound_over("/etc/hosts", _sandbox_hosts())


def _named_user() -> list[str]:
    """bwrap arguments that bind ``sandbox_passwd`` of this process's uid and home over ``/etc/passwd``, and
    ``sandbox_group`` of its gid over ``/etc/group``."""
    home = os.environ.get("HOME") or "/tmp"
    passwd = _bound_over("/etc/passwd", sandbox_passwd(os.getuid(), os.getgid(), home))
    return [*passwd, *_bound_over("/etc/group", sandbox_group(os.getgid()))]


def _bound_over(place: str, text: str | None) -> list[str]:
    """bwrap arguments that show ``text`` at ``place`` (none for None), from a file outside the sandbox's view."""
    if text is None:
        return []
    path = _written_etc.get(text)
    if path is None or not path.is_file():
        fd, name = tempfile.mkstemp(prefix=f"mendflow-{Path(place).name}-")
        with os.fdopen(fd, "w", encoding="utf-8") as written:
            written.write(text)
        os.chmod(name, 0o644)
        path = _written_etc[text] = Path(name)
        atexit.register(path.unlink, missing_ok=True)  # a runner outside a job's own temp dir leaves nothing
    return ["--ro-bind", str(path), place]


def confined(writable: tuple[Path, ...], refusals: Path) -> Wrap:
    """For the dependency phase, which runs the repository's build backends (its ``setup.py``): every path
    except ``writable`` (the job's own directories and its own dependency cache) is read-only, so install-time
    code cannot change a cache another job installs from. Where the launcher serves an egress proxy
    (``EGRESS_SOCKET``), the phase gets a fresh network namespace too, whose only way out is that proxy, through
    ``relay.py``: the package index hosts the trusted side allows, nothing else; a host it refuses is noted in
    ``refusals``. Without one (a Kubernetes pod: its NetworkPolicy decides), the network stays."""
    bwrap = shutil.which("bwrap")
    if bwrap is None or os.environ.get("MENDFLOW_JOB_OFFLINE") == "0":
        return as_is
    binds = [
        arg for path in sorted({str(p.resolve()) for p in writable if p.exists()}) for arg in ("--bind", path, path)
    ]
    prefix = [bwrap, "--unshare-ipc", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    prefix += [*_this_job_alone(), *_named_user(), *binds]
    egress = os.environ.get(EGRESS_SOCKET)
    if not egress:
        return lambda argv: [*prefix, "--", *argv]
    relay = [sys.executable, "-I", str(Path(__file__).with_name("relay.py")), egress, str(refusals), "--"]
    return lambda argv: [*prefix, "--unshare-net", "--", *relay, *argv]


def _this_job_alone() -> list[str]:
    """bwrap arguments that show the local launcher's jobs/ directory, which a job may not list (no job learns
    another's id), as a fresh one holding this job's directory alone: tools list each parent of a temp file
    (pytest-mypy-plugins' clean-up failed attrs' 86 mypy tests on PermissionError)."""
    job = os.environ.get(JOB_DIR)
    return ["--tmpfs", str(Path(job).parent), "--ro-bind", job, job] if job else []


# The job's directories its environment names, which a command must still see where they lie in /var/tmp.
_JOB_PLACES = ("MENDFLOW_JOB_CACHE", "UV_CACHE_DIR", "HOME", "TMPDIR")


def _own_var_tmp() -> list[str]:
    """bwrap arguments that give the command a ``/var/tmp`` of its own, writable as a CI runner's is: dvc-s3
    3.3.0's tests write dvc's site cache, ``/var/tmp/dvc`` (29 errors, "Read-only file system"). What the job
    keeps there is shown back read-only, under the job's own directories bound after it: the local launcher's
    directory (root's ``/var/tmp/mendflow``: the job's toolchain and caches), and the caches and home its
    environment names, and its temp dir."""
    job = os.environ.get(JOB_DIR)
    places = [Path(job).parent.parent] if job else []  # BASE/jobs/<id>
    places += [Path(value) for name in _JOB_PLACES if (value := os.environ.get(name))]
    shown = sorted({str(p.resolve()) for p in places if p.resolve().is_relative_to("/var/tmp") and p.exists()})
    return ["--tmpfs", "/var/tmp", *(arg for path in shown for arg in ("--ro-bind", path, path))]


def _own_home() -> list[str]:
    """bwrap arguments that let the command write ``HOME`` where it is the job's own, in the job's directory, as a
    pod's is (``HOME=/tmp``, an emptyDir): adrg/xdg 0.5.3's tests create files under ``~/.local/share``, and with
    the home read-only its DataFile fell through to ``/usr/local/share`` and failed. A home outside the job's
    directory (the runner run by hand) stays read-only."""
    job, home = os.environ.get(JOB_DIR), os.environ.get("HOME")
    if not job or not home:
        return []
    own = Path(home).resolve()
    if not own.is_relative_to(Path(job).resolve()) or not own.is_dir():
        return []
    return ["--bind", str(own), str(own)]


# A sandboxed command's umask, a developer's (tempfile 3.27.0's doctest checks that a file it makes is readable by
# others). The local launcher's job umask, 007, keeps other uids out of what the runner writes outside a sandbox;
# inside one, none sees the job's private /tmp, its workspace (0700) or its repository's cache (2770). A pod has 022.
SANDBOX_UMASK = 0o002


def in_bwrap(argv: list[str]) -> bool:
    """A wrapped command runs in bubblewrap (a wrap leaves it as it is where there is none: a pod)."""
    return os.path.basename(argv[0]) == "bwrap"


def sandbox(
    writable: Path, readable: tuple[Path, ...] = (), mounts: Mounts = (), shared: tuple[Path, ...] = ()
) -> Wrap:
    """``offline`` for every step of a phase that runs the repository's code or config (lint, tests, the test
    generator's gates, Pynguin): only ``writable`` may be written.

    A tool named bare (``ruff``) runs by its real path, found on the job's PATH: inside, a PATH entry under
    ``/tmp`` is a fresh, empty tmpfs. The installs a step's program lives in (its venv, and the interpreter or
    venv its real path is in) are bound back read-only with ``readable`` when they live under the host's
    ``/tmp``."""

    def wrap(argv: list[str]) -> list[str]:
        bare = os.sep not in argv[0]
        found = shutil.which(argv[0]) if bare else argv[0]
        if found is None:
            return offline(argv, writable, readable, mounts, shared)
        real = Path(found).resolve()
        installs = (Path(found).absolute().parent.parent, real.parent.parent)
        return offline([str(real) if bare else found, *argv[1:]], writable, (*readable, *installs), mounts, shared)

    return wrap


# Inside a sandbox, where a job's workspace is bound a second time (bwrap's own /dev tmpfs takes the mount point,
# whichever of the wraps above made the sandbox): the same path in every job.
STABLE_ROOT = "/dev/mendflow-work"
_SEEN_ROOT = re.compile(re.escape(STABLE_ROOT) + r"(?![\w.-])")  # the root itself, not a sibling's name


class StableRoot:
    """Commands that see ``real`` (a job's workspace) at ``STABLE_ROOT``, for tools whose caches name the
    directory they compiled in: Go's build cache keys a package by its path, and a cargo build kept for the next
    job names its sources in its units' coverage maps, so without this no job's compile serves the next, whose
    workspace has another path on the host. Arguments and environment values naming a path under ``real`` are
    rewritten, and the command starts in its directory inside (``--chdir``, and ``PWD``, which the go command
    trusts); what it prints is read back at ``real`` (``real_text``). A wrap without bwrap (a pod, whose
    workspace path is fixed already) runs the command as given."""

    def __init__(self, wrap: Wrap, real: Path) -> None:
        self.wrap, self.real = wrap, str(real)
        self.active = in_bwrap(wrap(["true"]))

    def path(self, value: str) -> str:
        if not self.active or not (value == self.real or value.startswith(self.real + "/")):
            return value
        return STABLE_ROOT + value[len(self.real) :]

    def real_text(self, text: str) -> str:
        """What a command printed, each path it saw under ``STABLE_ROOT`` named at ``real`` again."""
        return _SEEN_ROOT.sub(lambda _: self.real, text)

    def _text(self, value: str) -> str:
        head, sep, tail = value.partition("=")  # -flag=PATH
        return f"{head}{sep}{self.path(tail)}" if sep and head.startswith("-") else self.path(value)

    def command(
        self, argv: list[str], cwd: Path, env: dict[str, str], over: Mounts = ()
    ) -> tuple[list[str], dict[str, str]]:
        """``argv`` at the shared path; ``over``: (tree, place under ``real``) shown writable over that place there
        (golangci-lint's private copy of the sources, at their own path)."""
        wrapped = self.wrap([self._text(a) for a in argv])
        env = {k: self.path(v) for k, v in env.items()}
        if not self.active:
            return wrapped, env
        where, cut = self.path(str(cwd)), wrapped.index("--")
        shown = [arg for tree, place in over for arg in ("--bind", str(tree), self.path(str(place)))]
        extra = ["--bind", self.real, STABLE_ROOT, *shown, "--chdir", where]
        return [*wrapped[:cut], *extra, *wrapped[cut:]], {**env, "PWD": where}


def _under_tmp(path: Path) -> bool:
    """Whether ``path`` lies in one of the temp dirs a sandbox gets fresh (``offline``)."""
    return (path.is_relative_to("/tmp") or path.is_relative_to("/var/tmp")) and path.exists()


# bubblewrap copies the machine's mount table into a sandbox; a mount that comes or goes meanwhile (a container's
# network namespace on a busy host) fails that start before any of the command runs (containers/bubblewrap#650).
_MOUNT_RACE = re.compile(r"bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: [^\n]*\n?")
SANDBOX_STARTS = 3


def run(argv: list[str], *, cwd: Path | None, env: dict[str, str], timeout: float, log: Log) -> StepResult:
    """``argv`` under ``timeout``, logged; a sandbox start lost to a changing mount table is tried again."""
    deadline = time.monotonic() + timeout
    for _ in range(SANDBOX_STARTS - 1):
        r = _run_once(argv, cwd=cwd, env=env, timeout=deadline - time.monotonic(), log=log)
        if not (in_bwrap(argv) and r.returncode == 1 and _MOUNT_RACE.fullmatch(r.stderr)):
            return r
    return _run_once(argv, cwd=cwd, env=env, timeout=deadline - time.monotonic(), log=log)


def _run_once(argv: list[str], *, cwd: Path | None, env: dict[str, str], timeout: float, log: Log) -> StepResult:
    start = time.monotonic()
    if timeout <= 0:
        r = StepResult(argv, None, "", "no time left in the job's budget", 0.0, timed_out=True)
        log.step(r, cwd)
        return r
    # Files, not pipes: a background child holding a pipe open must not stall the step.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                process_group=0,
                umask=SANDBOX_UMASK if in_bwrap(argv) else -1,
            )
        except OSError as exc:
            r = StepResult(argv, 127, "", f"could not start: {exc}", time.monotonic() - start)
            log.step(r, cwd)
            return r
        timed_out = False
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc)
        r = StepResult(argv, proc.returncode, _read(out), _read(err), time.monotonic() - start, timed_out)
    log.step(r, cwd)
    return r


def beside(work: Callable[[], T]) -> Future[T]:
    """``work`` on a thread of its own at a lower CPU priority (``BESIDE_NICE``), inherited by every command it
    starts (Linux keeps the nice value per thread, and a child takes its parent thread's). It fills what the job's
    main line leaves idle (tests waiting on a timer, a compile using one core) and yields a core the main line
    wants, so tests that measure time run as they would alone. A daemon thread: a job ending on its deadline does
    not wait for it."""
    future: Future[T] = Future()

    def run_it() -> None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BESIDE_NICE)
        try:
            future.set_result(work())
        except BaseException as exc:  # the caller's result() raises it where it would have been raised
            future.set_exception(exc)

    threading.Thread(target=run_it, name="mendflow-beside", daemon=True).start()
    return future
