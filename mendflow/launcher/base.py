"""The launcher interface: run one short-lived, credential-free job and say how it ended.

A job reads its inputs from ``{workspace}/in/<name>`` and writes its outputs to ``{workspace}/out/<name>``.
The launcher moves them: inputs and outputs are URLs, ``file://`` on the trusted side or presigned
``http(s)://`` (the only kind a Kubernetes pod can use). Outputs are delivered in the order given, so a
report listed last acts as the commit marker. The job never sees a host path or a credential.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum

from pydantic import BaseModel, Field


class JobSpec(BaseModel):
    name: str = Field(description="Human-readable job name, e.g. 'build-b1-3f2a1c'.")
    image: str = Field("ci-runner-python", description="Language CI image; the local launcher runs its runner.")
    command: list[str] = Field(description="argv run inside the job; '{workspace}' is replaced by its path.")
    env: dict[str, str] = Field(default_factory=dict, description="The job's whole environment beyond basics.")
    cpu_limit: float = 2.0
    memory_limit_mb: int = 4096
    timeout_sec: int = 900
    inputs: dict[str, str] = Field(default_factory=dict, description="name → URL placed at in/<name>.")
    outputs: dict[str, str] = Field(default_factory=dict, description="name → URL filled from out/<name>.")
    labels: dict[str, str] = Field(default_factory=dict, description="repo, commit, stage, attempt, flow run.")


class JobState(StrEnum):
    SUCCEEDED = "succeeded"  # exit code 0
    FAILED = "failed"  # non-zero exit code
    TIMED_OUT = "timed_out"
    OOM_KILLED = "oom_killed"
    ERROR = "error"  # could not start, image pull failure, eviction, ...


class JobResult(BaseModel):
    state: JobState
    exit_code: int | None = None
    reason: str | None = Field(None, description="Why it ended, precise enough to act on.")
    duration_sec: float = 0.0
    log_tail: str = ""
    outputs: dict[str, str] = Field(default_factory=dict, description="Outputs that were delivered.")


class Launcher(ABC):
    """Runs jobs. Implementations must never pass the caller's credentials into a job."""

    name: str

    @abstractmethod
    def run(self, spec: JobSpec) -> JobResult:
        """Run the job to a terminal state; always clean up what was created, whatever happens."""
