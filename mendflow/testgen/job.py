"""The builder's sandbox job: ship the in-job package as a zipapp input, run it with the launcher, read
``result.json`` back. The job gets only URLs (source snapshot, candidates, the package) and no credential.

While it runs, the job prints a ``MENDFLOW_PROGRESS`` line per finished module (Pynguin) or gated file;
``ProgressReader`` turns the launcher's stream of its output into ``on_progress(done, total)`` calls.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mendflow import keys
from mendflow.contracts import TestgenJobResult
from mendflow.errors import ArtefactNotFoundError, TooLargeError
from mendflow.gitversion import SCM_VERSION
from mendflow.jobcode import RUNNER_IMAGE, TESTGEN_PACKAGE, zipapp_bytes
from mendflow.launcher.base import Handoff, JobResult, JobSpec, JobState, Launcher, OnOutput
from mendflow.settings import Settings
from mendflow.store.base import ArtefactStore

PYZ = "mendflow_testgen.pyz"
OUTPUTS = ("builder.log", "result.json")  # result.json last: its presence means the job finished


@dataclass
class JobOutcome:
    state: JobState
    result: TestgenJobResult = field(default_factory=TestgenJobResult)
    reason: str = ""
    duration_sec: float = 0.0

    @property
    def error(self) -> str:
        return self.reason or self.result.error


def package_bytes() -> bytes:
    """The in-job test-generation package as a zipapp (same sources, same bytes)."""
    return zipapp_bytes(TESTGEN_PACKAGE, "mendflow_testgen.__main__:main")


def _upload_package(store: ArtefactStore) -> str:
    data = package_bytes()
    key = keys.tool("mendflow_testgen", hashlib.sha256(data).hexdigest()[:16], ".pyz")
    if not store.exists(key):
        store.put_bytes(key, data)
    return key


def job_timeout(settings: Settings, candidates: dict[str, Any]) -> int:
    """Install + gates get the build timeout; Pynguin adds its hard limit per module on top."""
    extra = 0
    if candidates.get("mode") == "pynguin":
        opts = candidates.get("pynguin") or {}
        extra = int(opts.get("module_timeout", 120)) * len(opts.get("modules") or []) + 120
    return settings.build_timeout_sec + extra


def expected_total(candidates: dict[str, Any]) -> int:
    """How many progress units the job has: its modules (Pynguin) or the files it gates."""
    if candidates.get("mode") == "pynguin":
        return len((candidates.get("pynguin") or {}).get("modules") or [])
    return len(candidates.get("files") or {})


def run_job(
    launcher: Launcher,
    store: ArtefactStore,
    settings: Settings,
    source_key: str,
    prefix: str,
    candidates: dict[str, Any],
    name: str,
    on_output: OnOutput | None = None,
    cache_scope: str = "",
    version: str = "",
) -> JobOutcome:
    """Run the builder job with ``candidates``; artefacts (candidates, result, log) stay under ``prefix``.

    ``on_output`` gets the job's output lines as it prints them (``ProgressReader`` makes progress of them);
    ``version``: what the commit's tags make it (``mendflow.gitversion``), for a build backend reading git.
    """
    store.put_bytes(f"{prefix}/candidates.json", json.dumps(candidates).encode())
    timeout = job_timeout(settings, candidates)
    spec = JobSpec(
        name=name,
        image=RUNNER_IMAGE,
        command=[
            "python",
            f"{{workspace}}/in/{PYZ}",
            "--source",
            "{workspace}/in/source.tar.gz",
            "--candidates",
            "{workspace}/in/candidates.json",
            "--out",
            "{workspace}/out",
        ],
        env={
            "MENDFLOW_JOB_TIMEOUT_SEC": str(timeout),
            "MENDFLOW_JOB_TEST_MARKER": settings.test_marker,
            **({SCM_VERSION: version} if version else {}),
        },
        cpu_limit=settings.sandbox.cpu_limit,
        memory_limit_mb=settings.sandbox.memory_limit_mb,
        timeout_sec=timeout + 30,  # the job keeps its own deadline; this is the backstop
        inputs={
            "source.tar.gz": store.download_url(source_key),
            PYZ: store.download_url(_upload_package(store)),
            "candidates.json": store.download_url(f"{prefix}/candidates.json"),
        },
        outputs={n: store.upload_url(f"{prefix}/{n}") for n in OUTPUTS},
        labels={"stage": "testbuilder", "spec": name},
        cache_scope=cache_scope,
        handoff=Handoff.at(store, f"{prefix}/{keys.HANDOFF}"),
    )
    try:
        result: JobResult = launcher.run(spec, on_output)
    finally:
        store.delete_prefix(f"{prefix}/{keys.HANDOFF_DIR}")  # the environments: job to job only
    max_bytes = settings.limits.job_output_mb * 1024 * 1024
    try:
        data = TestgenJobResult.model_validate_json(store.get_capped(f"{prefix}/result.json", max_bytes))
    except ArtefactNotFoundError:
        why = result.reason or f"the job ended ({result.state}) without writing result.json"
        tail = result.log_tail.strip().splitlines()[-1:] if result.log_tail else []
        return JobOutcome(
            JobState.ERROR if result.state is JobState.SUCCEEDED else result.state,
            reason=f"{why}{'; last output: ' + tail[0][:300] if tail else ''}",
            duration_sec=result.duration_sec,
        )
    except TooLargeError as exc:
        return JobOutcome(JobState.ERROR, reason=exc.one_line(), duration_sec=result.duration_sec)
    except ValidationError as exc:
        why = f"the job's result.json breaks the TestgenJobResult contract: {exc.errors()[0]['msg']}"
        return JobOutcome(JobState.ERROR, reason=why, duration_sec=result.duration_sec)
    return JobOutcome(result.state, data, "", result.duration_sec)
