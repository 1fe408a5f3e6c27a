"""The only way out of a local job's dependency phase: an HTTP CONNECT proxy on a Unix socket, run by the
trusted side for the job's lifetime, that tunnels to the package index hosts it was told and refuses the rest.

The job's dependency phase runs in a fresh network namespace (bubblewrap ``--unshare-net``), where nothing but
its own loopback exists; a relay inside (``mendflow_runner/relay.py``) listens there and hands each connection
to this socket, and uv finds the relay through ``HTTPS_PROXY``. A Unix socket crosses network namespaces where a
TCP port would not, and its file permissions keep every other job off it. The allowlist is decided here, before
the job runs; nothing the job sends can widen it.

Hand-rolled rather than a proxy package: all it needs is CONNECT to a fixed list of names (under two hundred
lines on the standard library), and a general-purpose proxy would bring configuration and a daemon to manage.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import select
import socket
import socketserver
import threading
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from mendflow.settings import CARGO_VARIABLES, MAVEN_VARIABLES, NPM_REGISTRY_VARIABLES

HEAD_LIMIT = 8192  # a CONNECT request is one short line and a few headers
CONNECT_TIMEOUT_SEC = 30.0
IDLE_TIMEOUT_SEC = 300.0  # a tunnel nobody writes to for this long is closed
MAX_TUNNELS = 128  # uv opens up to 50 downloads at once; more is a job trying to exhaust threads
CHUNK = 262144
# ``close`` waits for the serving loop to notice, and every local job's run waits for ``close``: socketserver's
# default of 0.5 s cost a job 0.25 s on average.
POLL_SEC = 0.05
# Variables through which the trusted side names a package index (uv, pip, Go, npm, cargo, Maven): their hosts join the
# allowlist.
INDEX_VARIABLES = (
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "PIP_INDEX_URL",
    "GOPROXY",
    *NPM_REGISTRY_VARIABLES,
    *CARGO_VARIABLES,
    *MAVEN_VARIABLES,
)


class Allowlist:
    """Hosts a job may tunnel to: ``name`` means port 443, ``name:port`` that port; names compare case-blind."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.allowed = {_target(entry, default_port=443) for entry in entries if entry.strip()}

    def permits(self, host: str, port: int) -> bool:
        return (host.lower().rstrip("."), port) in self.allowed

    def describe(self) -> str:
        return ", ".join(sorted(h if p == 443 else f"{h}:{p}" for h, p in self.allowed)) or "none"


def index_hosts(env: dict[str, str]) -> list[str]:
    """``host[:port]`` of every package index the job's (trusted) environment names."""
    hosts = []
    for name in INDEX_VARIABLES:
        for url in re.split(r"[\s,|]+", env.get(name, "")):  # GOPROXY's list takes commas and pipes
            named = "=" in url.split("://", 1)[0]  # UV_INDEX's ``name=url`` form
            parts = urlsplit(url.split("=", 1)[1] if named else url)
            if parts.hostname:
                port = parts.port or (80 if parts.scheme == "http" else 443)
                hosts.append(f"{parts.hostname}:{port}")
    return hosts


def _target(text: str, default_port: int) -> tuple[str, int]:
    """``(host, port)`` of ``host``, ``host:port`` or ``[v6]:port``, lower-cased, without a trailing dot."""
    text = text.strip().lower()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    return host.rstrip("."), int(port) if port.isdigit() else default_port


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allowlist: Allowlist
    slots: threading.BoundedSemaphore


class _TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """The same proxy on a TCP port, for a cluster's job pods (``mendflow egress-proxy``)."""

    daemon_threads = True
    allow_reuse_address = True
    allowlist: Allowlist
    slots: threading.BoundedSemaphore


class _Tunnel(socketserver.BaseRequestHandler):
    server: _Server | _TcpServer

    def handle(self) -> None:
        if not self.server.slots.acquire(blocking=False):
            self._reply(503, "too many connections at once")
            return
        try:
            self._serve()
        finally:
            self.server.slots.release()

    def _serve(self) -> None:
        client: socket.socket = self.request
        client.settimeout(CONNECT_TIMEOUT_SEC)
        head = _read_head(client)
        method, _, rest = head.partition(b" ")
        if method != b"CONNECT":
            self._reply(403, "plain HTTP is not tunnelled: only HTTPS package indexes can be reached")
            return
        host, port = _target(rest.split(b" ", 1)[0].decode("ascii", "replace"), default_port=443)
        if not self.server.allowlist.permits(host, port):
            self._reply(403, f"{host}:{port} is not a package index this job may reach")
            return
        try:
            upstream = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SEC)
        except OSError as exc:
            self._reply(502, f"could not connect to {host}:{port}: {exc}")
            return
        with upstream:
            try:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                early = head.split(b"\r\n\r\n", 1)[1]  # what a client sent without waiting for the 200
                if early:
                    upstream.sendall(early)
            except OSError:  # a side hung up first (uv gives up on a slow mirror): nothing left to tunnel
                return
            _pipe(client, upstream)

    def _reply(self, status: int, message: str) -> None:
        reason = {403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}
        body = f"mendflow egress: {message}\n".encode()
        head = f"HTTP/1.1 {status} {reason[status]}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        with contextlib.suppress(OSError):
            self.request.sendall(head.encode() + body)


def _read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and len(data) < HEAD_LIMIT:
        try:
            chunk = sock.recv(1024)
        except OSError:
            return b""
        if not chunk:
            return b""
        data += chunk
    return data


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until either side closes or both stay silent for IDLE_TIMEOUT_SEC."""
    peers = {a: b, b: a}
    for sock in peers:
        sock.setblocking(True)
    while True:
        readable, _, _ = select.select(list(peers), [], [], IDLE_TIMEOUT_SEC)
        if not readable:
            return
        for sock in readable:
            try:
                data = sock.recv(CHUNK)
                if not data:
                    return
                peers[sock].sendall(data)
            except OSError:
                return


class EgressProxy:
    """Serves on a thread until closed: on a Unix socket (``Path``, made ``owner``'s alone, mode 0600) for one
    local job, or on a TCP ``(host, port)`` for a cluster's jobs."""

    def __init__(self, address: Path | tuple[str, int], allowlist: Allowlist, owner: int | None = None) -> None:
        self._server: _Server | _TcpServer
        if isinstance(address, Path):
            self._server = _Server(str(address), _Tunnel)
            os.chmod(address, 0o600)
            if owner is not None:
                os.chown(address, owner, -1)
        else:
            self._server = _TcpServer(address, _Tunnel)
        self._server.allowlist = allowlist
        self._server.slots = threading.BoundedSemaphore(MAX_TUNNELS)
        serve = functools.partial(self._server.serve_forever, poll_interval=POLL_SEC)
        self._thread = threading.Thread(target=serve, daemon=True, name="egress-proxy")
        self._thread.start()

    @property
    def path(self) -> Path:
        """The Unix socket's path."""
        return Path(str(self._server.server_address))

    @property
    def port(self) -> int:
        """The TCP port it listens on (the one the system chose, for port 0)."""
        return int(self._server.socket.getsockname()[1])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if isinstance(self._server, _Server):
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
