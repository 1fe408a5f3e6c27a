"""Settings of the webhook receiver (``MENDFLOW_WEBHOOK_*``): a service deployed on its own, with its own group."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from mendflow.settings import get_settings

MIB = 1024 * 1024
# provider → the field holding what verifies its deliveries
SECRET_FIELDS = {
    "github": "github_secret",
    "gitlab": "gitlab_token",
    "gitea": "gitea_secret",
    "git": "git_secret",
}


def _default_dedup_db() -> Path:
    return get_settings().state_dir / "webhook-deliveries.sqlite3"


class WebhookSettings(BaseSettings):
    """A provider is enabled exactly when its secret is set; otherwise its endpoint answers 404."""

    model_config = SettingsConfigDict(env_prefix="MENDFLOW_WEBHOOK_", extra="ignore")

    github_secret: SecretStr | None = Field(default=None, description="GitHub secret (X-Hub-Signature-256).")
    gitlab_token: SecretStr | None = Field(default=None, description="GitLab secret token (X-Gitlab-Token).")
    gitea_secret: SecretStr | None = Field(
        default=None, description="Gitea/Forgejo webhook secret (X-Gitea-Signature / X-Forgejo-Signature)."
    )
    git_secret: SecretStr | None = Field(
        default=None, description="Shared secret of the plain git post-receive hook (X-Mendflow-Signature)."
    )
    allowed_repos: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["*"], description="Globs on the repo's full name, comma-separated."
    )
    allowed_branches: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["*"], description="Globs on the branch name, comma-separated."
    )
    max_body_bytes: int = Field(default=MIB, gt=0, description="Bigger bodies get 413 (while streaming).")
    dedup_db: Path = Field(default_factory=_default_dedup_db, description="SQLite file of seen delivery ids.")
    dedup_retention_days: int = Field(default=30, gt=0, description="Forget delivery ids after this.")
    max_json_depth: int = Field(default=64, gt=0, description="Deeper JSON nesting gets 400 before it is parsed.")
    header_timeout_sec: float = Field(
        default=10.0, gt=0, description="A connection whose request headers are not in by then is closed."
    )
    body_timeout_sec: float = Field(default=30.0, gt=0, description="A body not in by then gets 408.")
    host: str = Field(default="127.0.0.1", description="Bind address; 0.0.0.0 in a container.")
    port: int = Field(default=8787, ge=1, le=65535)

    @field_validator("allowed_repos", "allowed_branches", mode="before")
    @classmethod
    def _split_globs(cls, value: object) -> object:
        # Env vars are plain strings: "org/*,other/repo" reads better than JSON in a manifest.
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    def secret_for(self, provider: str) -> str | None:
        secret: SecretStr | None = getattr(self, SECRET_FIELDS[provider])
        return (secret.get_secret_value() or None) if secret is not None else None

    def enabled_providers(self) -> list[str]:
        return [name for name in SECRET_FIELDS if self.secret_for(name)]
