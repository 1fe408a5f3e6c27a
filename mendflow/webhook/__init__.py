"""mendflow's own push receiver: Prefect's self-hosted server has no webhooks, so pushes arrive here.

A verified push becomes one Prefect event ``git.push``; a deployment trigger turns it into a flow run.
"""

from __future__ import annotations

from mendflow.webhook.app import create_app
from mendflow.webhook.config import WebhookSettings

__all__ = ["WebhookSettings", "create_app"]
