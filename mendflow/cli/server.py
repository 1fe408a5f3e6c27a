"""The temporary Prefect server a flow command runs on when no Prefect API is configured.

Prefect starts such a server itself, lazily, when its client first needs an API: only after this process has
imported Prefect and its server module (the server's import, ~3 s, is paid twice), then it waits for the
server's own start (~4 s, 9 s and more without bytecode or on a busy machine). A flow command starts it here
instead, as soon as its input is checked, so that its start overlaps this process's imports, and points Prefect
at it the way a configured server is: Prefect's client never takes its temporary-server path and never imports
the server module. The command is Prefect's own (uvicorn on ``create_app`` with the ephemeral flags), so the
server is the same; its process asks the kernel for SIGTERM when the command dies, even by SIGKILL.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from mendflow.errors import ConfigError

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PORT_TAKEN = "address already in use"  # uvicorn's words when another process bound the port meanwhile
_PORT_ATTEMPTS = 3
_EXCEPTION_LINE = re.compile(r"^[\w.]+(Error|Exception): ")
_RUNNING_SERVER = "or set PREFECT_API_URL to a running server (`prefect server start`)"
_HINT_EXIT = f"correct the Prefect setting it names, {_RUNNING_SERVER}"
_HINT_TIMEOUT = f"raise PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS on a busy machine, {_RUNNING_SERVER}"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the server is on loopback
_POLL_SEC = 0.05
_STOP_WAIT_SEC = 5


class TemporaryServer:
    """One Prefect server process on a free local port, started at once and stopped at this process's exit."""

    _log: IO[bytes]  # the server's output, a new file per attempt, quoted if it fails to start

    def __init__(self) -> None:
        self._attempts = 0
        self.port = 0
        self.process = self._spawn()
        atexit.register(self.stop)  # registered before Prefect's log and event workers, so it runs after them

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _spawn(self) -> subprocess.Popen[bytes]:
        if self._attempts:
            self._log.close()
        self._attempts += 1
        self.port = _free_port()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (open while the server lives; closed by stop)
        app_dir = Path(_prefect_origin()).parent.parent
        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
        argv = [sys.executable, "-m", "uvicorn", "--app-dir", str(app_dir)]
        argv += ["--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1"]
        argv += ["--port", str(self.port), "--log-level", "error", "--lifespan", "on"]
        preexec = _die_with_parent if sys.platform.startswith("linux") else None
        out = self._log
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=preexec)

    def wait_ready(self, timeout_sec: float) -> None:
        """Return once the server answers its health check; one clear error if it exits or never answers."""
        deadline = time.monotonic() + timeout_sec
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None and _PORT_TAKEN in self._output().lower() and self._attempts < _PORT_ATTEMPTS:
                self.process = self._spawn()  # its port was taken between our check and its bind
            elif code is not None:
                exited = f"the temporary Prefect server exited with code {code}"
                raise ConfigError(f"{exited}: {self._cause()}", hint=_HINT_EXIT)
            elif _healthy(self.api_url):
                return
            time.sleep(_POLL_SEC)
        self.stop()
        raise ConfigError(f"the temporary Prefect server did not answer within {timeout_sec:.0f} s", hint=_HINT_TIMEOUT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=_STOP_WAIT_SEC)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

    def _output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def _cause(self) -> str:
        """The last exception line the server printed (a traceback's last line may be a link), else its last."""
        lines = self._output().strip().splitlines()
        exceptions = [line for line in lines if _EXCEPTION_LINE.match(line)]
        return (exceptions or lines or ["it printed nothing"])[-1][:300]


def _prefect_origin() -> str:
    """Where Prefect's package is, without importing it (uvicorn's ``--app-dir``, as Prefect passes it)."""
    spec = importlib.util.find_spec("prefect")
    if spec is None or spec.origin is None:
        raise ConfigError("Prefect is not installed in this environment", hint="reinstall mendflow")
    return spec.origin


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(api_url: str) -> bool:
    try:
        with _NO_PROXY.open(f"{api_url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGTERM it when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def start_unless_configured() -> TemporaryServer | None:
    """A temporary server, started now, unless the environment already names a Prefect API.

    A Prefect profile or ``prefect.toml`` may name one too; that is only known once Prefect is imported, and
    ``use_or_stop`` then stops this server before it is used.
    """
    if os.environ.get("PREFECT_API_URL"):
        return None
    return TemporaryServer()


def use_or_stop(server: TemporaryServer) -> None:
    """Point Prefect at ``server`` once it answers, or stop it when Prefect's settings name their own API.

    Call after Prefect is imported. Setting the variable and refreshing Prefect's global settings context is
    what Prefect does itself after its plugins set variables; threads without a context of their own read that
    global context, so every client this process makes uses the server.
    """
    from prefect.context import refresh_global_settings_context
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_ALLOW_EPHEMERAL_MODE
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as STARTUP_TIMEOUT

    if PREFECT_API_URL.value() or not PREFECT_SERVER_ALLOW_EPHEMERAL_MODE.value():
        server.stop()
        return
    server.wait_ready(STARTUP_TIMEOUT.value())
    os.environ["PREFECT_API_URL"] = server.api_url
    os.environ.setdefault("PREFECT_UI_URL", "")  # it serves no UI (as Prefect's own): no "View at" dead link
    refresh_global_settings_context()
