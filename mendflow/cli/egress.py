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

from mendflow.cli.app import app
from mendflow.errors import InputError
from mendflow.launcher.egress import Allowlist, EgressProxy, index_hosts
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
    listen: Annotated[str, typer.Option(help="HOST:PORT for dependency pods: the package index and the store.")] = (
        "0.0.0.0:3128"
    ),
    store_listen: Annotated[
        str | None, typer.Option(help="HOST:PORT for every other pod: the store only (k8s/egress: 0.0.0.0:3129).")
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            help="An index HOST or HOST:PORT (repeat it); adds to sandbox.egress_hosts and each language's index "
            "(languages.go_proxy)."
        ),
    ] = None,
    allow_store: Annotated[
        list[str] | None,
        typer.Option(help="A store HOST or HOST:PORT (repeat it); adds to the settings' store hosts."),
    ] = None,
) -> None:
    """Serve the HTTPS CONNECT proxy that is job pods' only way out: to the package index from the dependency
    pods, to the artefact store from all."""
    settings = get_settings()
    store = [*store_hosts(settings), *(allow_store or [])]
    indexes = [*settings.sandbox.egress_hosts, *index_hosts(settings.languages.every_job_env()), *(allow or [])]
    ports = [(listen, Allowlist([*indexes, *store]))]
    if store_listen:
        ports.append((store_listen, Allowlist(store)))
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):  # before it says it serves: a signal may follow at once
        signal.signal(signum, lambda *_: stop.set())
    proxies = [_serve(address, allowlist) for address, allowlist in ports]
    while not stop.wait(0.5):  # a signal a proxy thread took runs its handler only once this thread wakes
        pass
    for proxy in proxies:
        proxy.close()


def _serve(listen: str, allowlist: Allowlist) -> EgressProxy:
    address = _listen_address(listen)
    try:
        proxy = EgressProxy(address, allowlist)
    except OSError as exc:
        raise InputError(f"cannot listen on {listen}: {exc.strerror or exc}", hint="pick a free port") from exc
    typer.echo(f"mendflow egress proxy on {address[0]}:{proxy.port}; allowing {allowlist.describe()}")
    return proxy
