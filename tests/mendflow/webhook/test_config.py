"""WebhookSettings read from MENDFLOW_WEBHOOK_* variables."""

from __future__ import annotations

import pytest

from mendflow.webhook.config import WebhookSettings


def test_globs_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MENDFLOW_WEBHOOK_ALLOWED_BRANCHES", "main, release/*")
    assert WebhookSettings().allowed_branches == ["main", "release/*"]


def test_only_providers_with_a_secret_are_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MENDFLOW_WEBHOOK_GITLAB_TOKEN", "t")
    monkeypatch.setenv("MENDFLOW_WEBHOOK_GITHUB_SECRET", "")
    assert WebhookSettings().enabled_providers() == ["gitlab"]


def test_default_body_limit_is_one_mebibyte() -> None:
    assert WebhookSettings().max_body_bytes == 1024 * 1024
