"""The egress proxy tunnels to the hosts on its allowlist and refuses everything else, over a real Unix socket."""

from __future__ import annotations

import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mendflow.launcher.egress import Allowlist, EgressProxy, index_hosts
from tests.fixtures.listener import Listener


class Echo:
    """A TCP server on the loopback that sends back what it gets."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            while data := conn.recv(1024):
                conn.sendall(data)


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    yield server
    server.sock.close()


def _proxy(tmp_path: Path, *allowed: str) -> EgressProxy:
    return EgressProxy(tmp_path / "sock", Allowlist(allowed))


def _ask(proxy: EgressProxy, request: bytes) -> tuple[bytes, socket.socket]:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(5)
    client.connect(str(proxy.path))
    client.sendall(request)
    return client.recv(4096), client


def test_a_connect_to_an_allowed_host_is_tunnelled(tmp_path: Path, echo: Echo) -> None:
    proxy = _proxy(tmp_path, f"127.0.0.1:{echo.port}")
    reply, client = _ask(proxy, f"CONNECT 127.0.0.1:{echo.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    with client:
        client.sendall(b"ping")
        assert (reply.split(b"\r\n")[0], client.recv(4)) == (b"HTTP/1.1 200 Connection established", b"ping")
    proxy.close()


def test_a_client_that_hangs_up_before_the_tunnel_opens_leaves_no_traceback(
    tmp_path: Path, echo: Echo, capfd: pytest.CaptureFixture[str]
) -> None:
    proxy = _proxy(tmp_path, f"127.0.0.1:{echo.port}")
    client = socket.socket(socket.AF_UNIX)
    client.connect(str(proxy.path))
    client.sendall(f"CONNECT 127.0.0.1:{echo.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    client.close()  # the proxy's "200 Connection established" then meets a closed socket
    echo.thread.join(timeout=5)  # the upstream connection was made and closed again
    said, deadline = "", time.monotonic() + 1
    while time.monotonic() < deadline and "Traceback" not in said:  # socketserver prints a handler's exception
        time.sleep(0.05)
        said += capfd.readouterr().err
    assert "Traceback" not in said
    proxy.close()


def test_a_host_not_on_the_allowlist_is_refused_and_never_reached(tmp_path: Path) -> None:
    listener = Listener()
    proxy = _proxy(tmp_path, "pypi.org")
    reply, client = _ask(proxy, f"CONNECT 127.0.0.1:{listener.port} HTTP/1.1\r\n\r\n".encode())
    client.close()
    proxy.close()
    listener.sock.close()
    assert reply.startswith(b"HTTP/1.1 403") and listener.connections == 0


def test_an_allowed_name_on_another_port_is_refused(tmp_path: Path) -> None:
    proxy = _proxy(tmp_path, "localhost")  # port 443 only
    reply, client = _ask(proxy, b"CONNECT localhost:22 HTTP/1.1\r\n\r\n")
    client.close()
    proxy.close()
    assert reply.startswith(b"HTTP/1.1 403")


def test_plain_http_is_refused(tmp_path: Path, echo: Echo) -> None:
    proxy = _proxy(tmp_path, f"127.0.0.1:{echo.port}")
    reply, client = _ask(proxy, f"GET http://127.0.0.1:{echo.port}/ HTTP/1.1\r\n\r\n".encode())
    client.close()
    proxy.close()
    assert reply.startswith(b"HTTP/1.1 403") and b"plain HTTP" in reply


def test_an_allowed_host_that_does_not_answer_is_a_bad_gateway(tmp_path: Path) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    proxy = _proxy(tmp_path, f"127.0.0.1:{port}")
    reply, client = _ask(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    client.close()
    proxy.close()
    assert reply.startswith(b"HTTP/1.1 502")


def test_the_socket_is_its_owners_alone_and_gone_when_closed(tmp_path: Path) -> None:
    proxy = _proxy(tmp_path, "pypi.org")
    mode = stat.S_IMODE(proxy.path.stat().st_mode)
    proxy.close()
    assert (mode, proxy.path.exists()) == (0o600, False)


def test_the_index_urls_of_the_environment_join_the_allowlist() -> None:
    env = {
        "UV_INDEX_URL": "https://mirror.example/simple/",
        "UV_INDEX": "internal=https://pkgs.example:8443/simple/ https://other.example/",
        "PIP_INDEX_URL": "http://devpi.example/root/pypi/+simple/",
    }
    assert index_hosts(env) == [
        "mirror.example:443",
        "pkgs.example:8443",
        "other.example:443",
        "devpi.example:80",
    ]


def test_a_goproxy_list_gives_each_proxy_and_skips_direct_and_off() -> None:
    env = {"GOPROXY": "https://proxy.golang.org,https://goproxy.example:8443|direct,off"}
    assert index_hosts(env) == ["proxy.golang.org:443", "goproxy.example:8443"]


def test_names_compare_case_blind_and_without_a_trailing_dot() -> None:
    allowlist = Allowlist(["PyPI.org", "files.pythonhosted.org:443"])
    assert allowlist.permits("pypi.org.", 443) and allowlist.permits("FILES.pythonhosted.org", 443)
