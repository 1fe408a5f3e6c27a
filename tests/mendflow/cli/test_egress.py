"""``mendflow egress-proxy`` as a cluster runs it: a real process on a TCP port, stopped with SIGTERM."""

from __future__ import annotations

import ctypes
import os
import platform
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mendflow.cli.egress import store_hosts
from mendflow.settings import Settings
from tests.fixtures.listener import Listener

TGKILL = 234  # x86-64 syscall number: a signal to one thread of a process


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "state")}
    argv = [sys.executable, "-m", "mendflow.cli", "egress-proxy", "--listen", "127.0.0.1:0", *args]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.sock.close()


def _connect(port: int, target: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
        return client.recv(1024)


def test_it_tunnels_to_an_allowed_host_refuses_the_rest_and_stops_on_sigterm(
    tmp_path: Path, listener: Listener
) -> None:
    proc = _start(tmp_path, "--allow", f"127.0.0.1:{listener.port}")
    try:
        assert proc.stdout is not None
        bound = re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline())
        assert bound, "no banner"
        port = int(bound.group(1))
        allowed, refused = _connect(port, f"127.0.0.1:{listener.port}"), _connect(port, "example.com:443")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=10)
    finally:
        proc.kill()
    assert allowed.startswith(b"HTTP/1.1 200") and refused.startswith(b"HTTP/1.1 403")
    assert (listener.connections, code) == (1, 0)


def test_the_store_port_tunnels_to_the_store_and_refuses_the_index(tmp_path: Path) -> None:
    index, store = Listener(), Listener()
    proc = _start(
        tmp_path,
        "--store-listen",
        "127.0.0.1:0",
        "--allow",
        f"127.0.0.1:{index.port}",
        "--allow-store",
        f"127.0.0.1:{store.port}",
    )
    try:
        assert proc.stdout is not None
        banners = [proc.stdout.readline(), proc.stdout.readline()]
        ports = [int(m.group(1)) for b in banners if (m := re.search(r"on 127\.0\.0\.1:(\d+)", b))]
        index_port, store_port = ports
        from_dependencies = (
            _connect(index_port, f"127.0.0.1:{index.port}"),
            _connect(index_port, f"127.0.0.1:{store.port}"),
        )
        from_others = _connect(store_port, f"127.0.0.1:{index.port}"), _connect(store_port, f"127.0.0.1:{store.port}")
        reached = index.count_after(1), store.count_after(2)
    finally:
        proc.kill()
        index.sock.close()
        store.sock.close()
    assert [r[:12] for r in from_dependencies] == [b"HTTP/1.1 200"] * 2
    assert [r[:12] for r in from_others] == [b"HTTP/1.1 403", b"HTTP/1.1 200"]
    assert reached == (1, 2)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="tgkill's syscall number here is x86-64's")
def test_sigterm_ends_it_when_a_proxy_thread_takes_the_signal(tmp_path: Path) -> None:
    """The kernel hands a process's signal to any of its threads; the main thread must still see it."""
    proc = _start(tmp_path)
    try:
        assert proc.stdout is not None and proc.stdout.readline()  # serving: its proxy thread runs
        threads = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(TGKILL, proc.pid, threads[0], signal.SIGTERM) == 0
        code = proc.wait(timeout=10)
    finally:
        proc.kill()
    assert code == 0


def test_a_bad_listen_address_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mendflow.cli", "egress-proxy", "--listen", "nowhere"],
        env={**os.environ, "MENDFLOW_STATE_DIR": str(tmp_path / "state")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "HOST:PORT" in proc.stderr


def test_an_s3_store_on_aws_adds_its_bucket_hosts() -> None:
    settings = Settings(store_url="s3://builds/mendflow", s3={"region_name": "eu-west-1"})
    assert store_hosts(settings) == ["builds.s3.eu-west-1.amazonaws.com", "builds.s3.amazonaws.com"]


def test_an_in_cluster_plain_http_store_needs_no_proxy_entry() -> None:
    assert store_hosts(Settings(store_url="s3://b/p", s3={"endpoint_url": "http://minio.store.svc:9000"})) == []
