"""``mendflow webhook``: serve the push receiver (GitHub, GitLab, Gitea/Forgejo, plain git hook)."""

from __future__ import annotations

from typing import Annotated

import typer

from mendflow.cli.app import app
from mendflow.errors import ConfigError


def _require_api_url() -> None:
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        # Without it Prefect would start a private in-process server that no trigger listens to.
        raise ConfigError(
            "PREFECT_API_URL is not set", hint="point it at the Prefect server, e.g. http://host:4200/api"
        )


@app.command("webhook")
def webhook(
    host: Annotated[str | None, typer.Option(help="Bind address (default MENDFLOW_WEBHOOK_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default MENDFLOW_WEBHOOK_PORT).")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Receive git push webhooks and emit Prefect `git.push` events that trigger the pipeline."""
    import uvicorn

    from mendflow.webhook import WebhookSettings, create_app
    from mendflow.webhook.server import with_header_timeout

    settings = WebhookSettings()
    if not settings.enabled_providers():
        raise ConfigError(
            "no webhook secret is set, so no delivery could be verified",
            hint="set MENDFLOW_WEBHOOK_GITHUB_SECRET, _GITLAB_TOKEN, _GITEA_SECRET or _GIT_SECRET",
        )
    _require_api_url()
    typer.echo(f"mendflow webhook: providers {', '.join(settings.enabled_providers())}", err=True)
    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=port or settings.port,
        log_level=log_level,
        # Behind a proxy or ingress the peer address is the proxy's; nothing here trusts it anyway.
        proxy_headers=False,
        server_header=False,
        http=with_header_timeout(settings.header_timeout_sec),
    )
