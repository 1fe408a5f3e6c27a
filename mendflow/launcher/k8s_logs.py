"""Stream a stage pod's log into the run's logger and the caller's ``on_output``, and keep its tail before the
Job's TTL removes the pod."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections import deque
from typing import Any

from kubernetes import client as k

from mendflow.launcher.base import OnOutput, OutputLines
from mendflow.launcher.k8s_manifest import CONTAINER

TAIL_LINES = 200
JOIN_SEC = 5.0  # after the verdict: a connected follow stream ends with the container, give it a moment
CONNECT_JOIN_SEC = 0.2  # not even connected yet: the termination message carries the tail instead


RunLogger = logging.Logger | logging.LoggerAdapter[logging.Logger]


def run_logger() -> RunLogger:
    """Prefect's run logger inside a flow or task run (logs reach the UI), else a module logger."""
    try:
        from prefect.exceptions import MissingContextError
        from prefect.logging import get_run_logger

        try:
            return get_run_logger()
        except MissingContextError:
            pass
    except ImportError:  # pragma: no cover - prefect is a dependency; keep the launcher usable without it
        pass
    return logging.getLogger("mendflow.launcher.kubernetes")


class LogFollower:
    """Follows one pod's log on a daemon thread (one API call); never blocks the verdict for long."""

    def __init__(
        self, api: k.ApiClient, namespace: str, logger: RunLogger, prefix: str, on_output: OnOutput | None = None
    ) -> None:
        self.core = k.CoreV1Api(api)
        self.namespace, self.logger, self.prefix, self.on_output = namespace, logger, prefix, on_output
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self.thread: threading.Thread | None = None
        self.error: str | None = None
        self._response: object | None = None

    def start(self, pod_name: str) -> None:
        if self.thread is None:
            context = contextvars.copy_context()  # the callbacks see the caller's Prefect settings and run
            self.thread = threading.Thread(
                target=context.run, args=(self._follow, pod_name), daemon=True, name=f"logs-{pod_name}"
            )
            self.thread.start()

    def _follow(self, pod_name: str) -> None:
        try:
            resp: Any = self.core.read_namespaced_pod_log(
                pod_name,
                self.namespace,
                container=CONTAINER,
                follow=True,
                _preload_content=False,
                _request_timeout=(10, 24 * 3600),  # connect fast; the stream lasts as long as the job
            )
            self._response = resp
            lines = OutputLines(self._line)  # bounded lines: the pod's output is untrusted
            for chunk in resp.stream(4096):
                lines.feed(chunk)
            lines.close()
        except Exception as exc:  # logs are best effort: the verdict never depends on them
            self.error = f"{type(exc).__name__}: {exc}"[:300]

    def _line(self, line: str) -> None:
        self.lines.append(line)
        self.logger.info("%s | %s", self.prefix, line)
        if self.on_output is not None:
            self.on_output(line)

    def finish(self) -> str:
        """Wait briefly for the stream to end, then return the tail kept so far."""
        if self.thread is not None:
            self.thread.join(JOIN_SEC if self._response is not None else CONNECT_JOIN_SEC)
            if self.thread.is_alive() and self._response is not None:
                close = getattr(self._response, "close", None)
                if callable(close):
                    with contextlib.suppress(Exception):  # closing mid-read may raise; nothing to do
                        close()
        return "\n".join(self.lines)
