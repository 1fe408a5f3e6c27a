"""The launcher interface: run one short-lived, credential-free job and say how it ended.

A job reads its inputs from ``{workspace}/in/<name>`` and writes its outputs to ``{workspace}/out/<name>``.
The launcher moves them: inputs and outputs are URLs, ``file://`` on the trusted side or presigned
``http(s)://`` (the only kind a Kubernetes pod can use). Outputs are delivered in the order given, so a
report listed last acts as the commit marker. The job never sees a host path or a credential.

While a job runs, each line of its combined output goes to the caller's ``on_output`` and to the process's
progress listeners (``mendflow.progress``). The output is untrusted: lines are cut to ``MAX_LINE_BYTES``.
"""

from __future__ import annotations

import fnmatch
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, Field

from mendflow import progress

log = logging.getLogger(__name__)
OnOutput = Callable[[str], None]
MAX_LINE_BYTES = 4096  # a job printing one endless line must not grow the trusted side's memory


# Every job's environment, whichever launcher runs it. A test that commits to a git repository of its own and
# configures no identity (typed-argument-parser 1.12.0's `git commit`s) finds one, as in a CI whose workflow sets it:
# git takes the name from the user's passwd entry ("mendflow job", in the images and in the local sandbox) and the
# address from EMAIL, which any user.email a test configures overrides (GIT_AUTHOR_EMAIL would override it).
# SHELL is a CI runner's login shell, which a test script may start (dynamic-dedupe 0.3.0's `nave use` runs
# `$SHELL`); every image is Debian's, with bash.
JOB_ENV = {"EMAIL": "job@mendflow.invalid", "SHELL": "/bin/bash"}


# Never handed to a job, whatever the spec says: the trusted side's credentials and their relatives.
CREDENTIAL_PATTERNS = (
    "AWS_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "AZURE_*",
    "GOOGLE_*",
    "GCP_*",
    "PREFECT_*",
    "GITHUB_*",
    "GH_*",
    "GITLAB_*",
    "KUBECONFIG",
    "KUBERNETES_*",
    "MENDFLOW_S3__*",
    "MENDFLOW_LLM__*",
    "SSH_*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*_KEY",
    "*_KEY_*",
    "*APIKEY*",
    "*_AUTH*",
)


def is_credential(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in CREDENTIAL_PATTERNS)


class Handoff(BaseModel):
    """Where a job split at its dependency phase keeps what that phase installed, between its two pods.

    Only a launcher that cannot cut a job's network per phase splits a job (Kubernetes: the network is the
    pod's); the local launcher gives each phase its own network namespace instead and never uses these.
    """

    upload: str = Field(description="Presigned PUT for the dependency pod's archive.")
    download: str = Field(description="Presigned GET of the same object, for the offline pod.")

    @classmethod
    def at(cls, store: PresignedUrls, key: str) -> Handoff:
        return cls(upload=store.upload_url(key), download=store.download_url(key))


class PresignedUrls(Protocol):
    """What a store offers a job (``mendflow.store.base.ArtefactStore``)."""

    def upload_url(self, key: str) -> str: ...

    def download_url(self, key: str) -> str: ...


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
    cache_scope: str = Field(
        "",
        description="Who may share this job's dependency cache: its repository's identity, set by the trusted "
        "side. Jobs of different scopes never share a writable cache; '' shares with no other job.",
    )
    handoff: Handoff | None = Field(
        None, description="The job installs dependencies first and can be split there (mendflow_runner.handoff)."
    )


# What to do about a job its memory limit ended, said by either launcher after what happened: a real suite may
# need more than the default (fastjsonschema 2.22.3's peaks at 4.2 GB, where GitHub's runners give 16 GB).
MEMORY_ADVICE = "raise MENDFLOW_SANDBOX__MEMORY_LIMIT_MB if its tests need more"


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
    def run(self, spec: JobSpec, on_output: OnOutput | None = None) -> JobResult:
        """Run the job to a terminal state; always clean up what was created, whatever happens.

        ``on_output`` gets each line of the job's combined output (without its newline, cut to
        ``MAX_LINE_BYTES`` bytes) in order, as the job prints it, from a helper thread; an exception it raises is
        logged and the job goes on.
        """


def output_sink(spec: JobSpec, on_output: OnOutput | None) -> OnOutput:
    """Where a job's lines go: the progress listeners (labelled with the job's stage), then ``on_output``."""
    stage = spec.labels.get("stage") or spec.name

    def sink(line: str) -> None:
        progress.job_output(stage, line)
        if on_output is not None:
            on_output(line)

    return sink


class OutputLines:
    """Splits a job's output bytes into lines of at most ``limit`` bytes and hands each to ``on_line``.

    Feed it chunks as they arrive (they may split lines, even characters); ``close`` hands over the last,
    unterminated line. What ``on_line`` raises is logged, never propagated: it must not end the job's handling.
    """

    def __init__(self, on_line: OnOutput, limit: int = MAX_LINE_BYTES) -> None:
        self.on_line, self.limit = on_line, limit
        self.failures = 0
        self._pending = bytearray()

    def feed(self, data: bytes) -> None:
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._keep(data[start:end])
            self._emit()
            start = end + 1
        self._keep(data[start:])

    def close(self) -> None:
        if self._pending:
            self._emit()

    def _keep(self, part: bytes) -> None:
        room = self.limit - len(self._pending)
        if room > 0:
            self._pending += part[:room]  # the rest of an over-long line is dropped, up to its newline

    def _emit(self) -> None:
        line = self._pending.decode("utf-8", "replace").rstrip("\r")
        self._pending.clear()
        try:
            self.on_line(line)
        except Exception:
            self.failures += 1
            if self.failures == 1:  # once with the traceback; a callback failing on every line would flood
                log.warning("a job output callback failed; the job goes on", exc_info=True)
