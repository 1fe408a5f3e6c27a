"""Run a command whose only way out is the trusted side's egress proxy.

Usage (inside a fresh network namespace, where only this namespace's loopback exists):
``python -I relay.py SOCKET REFUSALS -- COMMAND...``. It listens on 127.0.0.1, points the command's
``HTTPS_PROXY`` (and friends) at itself, hands every connection to the proxy's Unix socket, and exits with the
command's code. A host the proxy refuses is appended to REFUSALS, so the runner can say which host its
allowlist lacks instead of reporting a network error that retrying cannot fix.

Standalone on purpose (run with ``-I``): it must not import the repository's code or the runner's package.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading

HEAD_LIMIT = 8192
CHUNK = 262144
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def java_proxy_options(port: int, existing: str = "") -> str:
    """A JVM's options (Maven's) with the relay as its HTTP and HTTPS proxy: the JVM reads no ``HTTPS_PROXY``."""
    relay = " ".join(f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort={port}" for scheme in ("http", "https"))
    return f"{existing} {relay}".strip()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: relay.py SOCKET REFUSALS -- COMMAND...", file=sys.stderr)
        return 2
    upstream, refusals, command = argv[0], argv[1], argv[3:]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    threading.Thread(target=_accept, args=(listener, upstream, refusals), daemon=True).start()
    env = {k: v for k, v in os.environ.items() if k.upper() != "NO_PROXY"}
    env.update(dict.fromkeys(PROXY_VARIABLES, f"http://127.0.0.1:{port}"))
    env["JAVA_TOOL_OPTIONS"] = java_proxy_options(port, env.get("JAVA_TOOL_OPTIONS", ""))
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"relay: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda n, _f: child.send_signal(n))
    return child.wait()


def _accept(listener: socket.socket, upstream: str, refusals: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, upstream, refusals), daemon=True).start()


def _relay(client: socket.socket, upstream: str, refusals: str) -> None:
    with client, socket.socket(socket.AF_UNIX) as proxy:
        try:
            proxy.connect(upstream)
            request = _head(client)
            proxy.sendall(request)
            reply = _head(proxy)
            client.sendall(reply)
        except OSError:
            return
        if b" 403 " in reply.split(b"\r\n", 1)[0]:
            _note_refusal(request, refusals)
            return
        _pipe(client, proxy)


def _head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and len(data) < HEAD_LIMIT:
        chunk = sock.recv(1024)
        if not chunk:
            break
        data += chunk
    return data


def _note_refusal(request: bytes, refusals: str) -> None:
    parts = request.split(b"\r\n", 1)[0].split(b" ")
    target = parts[1].decode("ascii", "replace") if len(parts) > 1 else "?"
    if "://" in target:  # a plain-HTTP request names a whole URL: keep its scheme and host
        scheme, _, rest = target.partition("://")
        target = f"{scheme}://{rest.split('/', 1)[0]}"
    with open(refusals, "a", encoding="utf-8") as fh:
        fh.write(target + "\n")


def _pipe(a: socket.socket, b: socket.socket) -> None:
    peers = {a: b, b: a}
    while True:
        readable, _, _ = select.select(list(peers), [], [])
        for sock in readable:
            try:
                data = sock.recv(CHUNK)
                if not data:
                    return
                peers[sock].sendall(data)
            except OSError:
                return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
