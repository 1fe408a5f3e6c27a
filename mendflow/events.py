"""Every event mendflow emits, built here: one per stage transition, on the repository's resource.

Resource ``mendflow.repo.<owner>/<name>`` (the identity the webhook's ``git.repo.<owner>/<name>`` uses too);
the commit is a related resource with role ``commit``. The names, for automations and the metrics exporter:

    mendflow.build.<passed|failed|errored>      payload: stage, attempt, url, the seed 003 metrics
    mendflow.testplanner.planned                payload: spec_id, testplanner_cases_total, tp_latency_ms, …
    mendflow.testbuilder.<passed|failed|errored> payload: spec_id, testbuilder_new_tests, tb_llm_tokens,
                                                          testbuilder_selfcheck_failures, tb_duration_sec, …
    mendflow.verifier.regression                payload: id, stage
    mendflow.coverage.drop                      payload: b1, b2, delta (B2 minus B1 line coverage below -5 points)
    mendflow.merge.<merged|ready>               payload: sha, mode
    mendflow.pipeline.<outcome>                 payload: outcome, coverage_delta_pct, duration_sec
"""

from __future__ import annotations

from typing import Any

from prefect.events import Event, emit_event

REPO_RESOURCE_PREFIX = "mendflow.repo."
COMMIT_RESOURCE_PREFIX = "mendflow.commit."


def resource_id(repo_id: str) -> str:
    return f"{REPO_RESOURCE_PREFIX}{repo_id}"


def emit(repo_id: str, commit_sha: str, step: str, outcome: str, /, **payload: Any) -> Event | None:
    """Emit ``mendflow.<step>.<outcome>`` for one transition of ``repo_id`` at ``commit_sha``."""
    return emit_event(
        event=f"mendflow.{step}.{outcome.lower()}",
        resource={"prefect.resource.id": resource_id(repo_id), "prefect.resource.name": repo_id},
        related=[
            {
                "prefect.resource.id": f"{COMMIT_RESOURCE_PREFIX}{commit_sha}",
                "prefect.resource.role": "commit",
                "prefect.resource.name": commit_sha[:12],
            }
        ],
        payload=payload,
    )
