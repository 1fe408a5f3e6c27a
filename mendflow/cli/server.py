"""The temporary Prefect server a command starts when no ``PREFECT_API_URL`` is set dies with that command.

Prefect starts its temporary ("ephemeral") server lazily, the first time a client needs an API, and stops it
at interpreter exit. A command killed with SIGKILL, or ended by a signal that skips ``atexit``, used to leave
that server running. Prefect keeps one instance per port in ``SubprocessASGIServer._instances`` and hands out
the ``None``-keyed one to every internal caller (the same hook ``prefect_test_harness`` uses); registering an
instance there whose process asks the kernel for SIGTERM when its parent dies keeps Prefect's lazy start,
health check and clean stop, and ties the server's life to the command's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from typing import Any

import prefect
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, get_current_settings

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class _TiedServer(SubprocessASGIServer):
    """Prefect's temporary server, started in a process that gets SIGTERM when its parent dies."""

    def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
        # The same command and environment as Prefect 3.8's SubprocessASGIServer; only the pre-exec differs.
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
            **get_current_settings().to_environment_variables(exclude_unset=True),
        }
        argv = [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent)]
        argv += ["--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1"]
        argv += ["--port", str(self.port), "--log-level", "error", "--lifespan", "on"]
        return subprocess.Popen(argv, env=env, preexec_fn=_die_with_parent)


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGTERM it when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def tie_temporary_server() -> None:
    """Make the temporary server (if this command ends up needing one) die with this process."""
    if PREFECT_API_URL.value() or not sys.platform.startswith("linux"):
        return
    _TiedServer()  # registers itself as the None-keyed instance, unless Prefect already made one
