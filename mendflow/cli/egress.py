"""``mendflow egress-proxy``: the package index allowlist as a service, for a cluster's job pods.

The local launcher serves the same proxy to each job on a Unix socket; on Kubernetes the job pods reach it
through ``kubernetes.egress_proxy`` (``HTTPS_PROXY``) and the ``k8s/egress`` overlay's NetworkPolicy, which lets
them reach nothing else on the public network.
"""

from __future__ import annotations

import signal
import threading
from typing import Annotated
from urllib.parse import urlsplit

import typer

from mendflow.cli import app
from mendflow.errors import InputError
from mendflow.launcher.egress import Allowlist, EgressProxy
from mendflow.settings import Settings, get_settings


def store_hosts(settings: Settings) -> list[str]:
    """The artefact store's HTTPS hosts, which presigned transfers from the pods reach through the proxy."""
    if settings.s3.endpoint_url:
        parts = urlsplit(settings.s3.endpoint_url)
        return [f"{parts.hostname}:{parts.port or 443}"] if parts.scheme == "https" and parts.hostname else []
    store = urlsplit(settings.store_url or "")
    if store.scheme != "s3" or not store.hostname:
        return []
    region = settings.s3.region_name or "us-east-1"
    return [f"{store.hostname}.s3.{region}.amazonaws.com", f"{store.hostname}.s3.amazonaws.com"]


def _listen_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:  # 0: any free port
        raise InputError(f"--listen {text!r} is not HOST:PORT", hint="e.g. --listen 0.0.0.0:3128")
    return host or "0.0.0.0", int(port)


@app.command("egress-proxy")
def egress_proxy(
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "0.0.0.0:3128",
    allow: Annotated[
        list[str] | None,
        typer.Option(help="HOST or HOST:PORT jobs may tunnel to (repeat it); adds to sandbox.egress_hosts."),
    ] = None,
) -> None:
    """Serve the HTTPS CONNECT proxy that is job pods' only way to the package index and the artefact store."""
    settings = get_settings()
    address = _listen_address(listen)
    allowlist = Allowlist([*settings.sandbox.egress_hosts, *store_hosts(settings), *(allow or [])])
    try:
        proxy = EgressProxy(address, allowlist)
    except OSError as exc:
        raise InputError(f"cannot listen on {listen}: {exc.strerror or exc}", hint="pick a free port") from exc
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    typer.echo(f"mendflow egress proxy on {address[0]}:{proxy.port}; allowing {allowlist.describe()}")
    stop.wait()
    proxy.close()
