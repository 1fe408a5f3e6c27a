"""Launchers run one credential-free job each; ``get_launcher`` picks the one the settings name."""

from __future__ import annotations

from mendflow.errors import ConfigError
from mendflow.launcher.base import JobResult, JobSpec, JobState, Launcher
from mendflow.settings import Settings

__all__ = ["JobResult", "JobSpec", "JobState", "Launcher", "get_launcher"]


def get_launcher(settings: Settings) -> Launcher:
    if settings.launcher == "local":
        from mendflow.launcher.local import LocalLauncher

        return LocalLauncher(settings)
    if settings.launcher == "kubernetes":
        # Imported lazily: the Kubernetes client is heavy and needs a cluster configuration.
        from mendflow.launcher.kubernetes import KubernetesLauncher  # type: ignore[import-not-found,unused-ignore]

        return KubernetesLauncher(settings)  # type: ignore[no-any-return,unused-ignore]
    raise ConfigError(
        f"unknown launcher {settings.launcher!r}", hint="set MENDFLOW_LAUNCHER to 'local' or 'kubernetes'"
    )
