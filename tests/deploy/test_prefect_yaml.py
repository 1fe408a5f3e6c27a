"""prefect.yaml read as data: entrypoints, parameters, pools, trigger and schedule agree with the code."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint

from mendflow.webhook.emit import EVENT_NAME, resource_id
from mendflow.webhook.push import PushEvent
from tests.deploy.conftest import PREFECT_YAML, ROOT

CONFIG: dict[str, Any] = yaml.safe_load(PREFECT_YAML.read_text())
DEPLOYMENTS: list[dict[str, Any]] = CONFIG["deployments"]
POOLS = CONFIG["definitions"]["work_pools"]
ENTRYPOINTS = {
    "flows/pipeline.py:self_healing_pipeline",
    "flows/ci.py:ci_build",
    "flows/reindex.py:reindex_repo",
}


def by_entrypoint(entrypoint: str, name: str = "default") -> dict[str, Any]:
    (found,) = [d for d in DEPLOYMENTS if d["entrypoint"] == entrypoint and d["name"] == name]
    return found


def flow_parameters(entrypoint: str) -> set[str]:
    if not (ROOT / entrypoint.split(":")[0]).exists():
        pytest.skip(f"{entrypoint} does not exist yet")
    return set(inspect.signature(load_flow_from_entrypoint(str(ROOT / entrypoint)).fn).parameters)


def test_every_flow_has_a_default_deployment() -> None:
    assert {d["entrypoint"] for d in DEPLOYMENTS if d["name"] == "default"} == ENTRYPOINTS


def test_pools_are_the_anchored_definitions() -> None:
    """Each deployment points at one of the two pool definitions (same object: a YAML alias, not a copy)."""
    assert {POOLS["process"]["name"], POOLS["kubernetes"]["name"]} == {"mendflow-process", "mendflow-kubernetes"}
    for deployment in DEPLOYMENTS:
        expected = POOLS["process"] if deployment["name"] == "default" else POOLS["kubernetes"]
        assert deployment["work_pool"] is expected, deployment["name"]


def test_kubernetes_base_job_template_referenced_exists() -> None:
    referenced = re.findall(r"k8s/prefect/[\w.-]+\.json", PREFECT_YAML.read_text())
    assert referenced and all((ROOT / path).exists() for path in referenced)


def test_process_deployments_run_from_the_deploying_checkout() -> None:
    (step,) = CONFIG["pull"]
    assert step["prefect.deployments.steps.set_working_directory"]["directory"] == "{{ checkout.stdout }}"
    (build,) = CONFIG["build"]
    assert build["prefect.deployments.steps.run_shell_script"] == {
        "id": "checkout",
        "script": "pwd",
        "stream_output": False,
    }


@pytest.mark.parametrize("entrypoint", sorted(ENTRYPOINTS))
def test_deployment_parameters_exist_on_the_flow(entrypoint: str) -> None:
    for deployment in (d for d in DEPLOYMENTS if d["entrypoint"] == entrypoint):
        assert set(deployment.get("parameters", {})) <= flow_parameters(entrypoint)


def test_pipeline_trigger_expects_git_push_from_the_webhook() -> None:
    (trigger,) = by_entrypoint("flows/pipeline.py:self_healing_pipeline")["triggers"]
    assert trigger["expect"] == [EVENT_NAME]
    pattern = trigger["match"]["prefect.resource.id"]
    assert re.fullmatch(pattern.replace(".", r"\.").replace("*", ".*"), resource_id("acme/demo"))


def test_trigger_parameters_are_event_payload_fields_the_webhook_sends() -> None:
    (trigger,) = by_entrypoint("flows/pipeline.py:self_healing_pipeline")["triggers"]
    sent = set(PushEvent("github", "a/b", "url", "refs/heads/main", "0", "1", "me").payload())
    for template in trigger["parameters"].values():
        (key,) = re.fullmatch(r"\{\{ event\.payload\.(\w+) \}\}", template).groups()  # type: ignore[union-attr]
        assert key in sent


@pytest.mark.parametrize("entrypoint", ["flows/pipeline.py:self_healing_pipeline", "flows/ci.py:ci_build"])
def test_trigger_parameters_exist_on_the_flow(entrypoint: str) -> None:
    """ci_build stands in for the pipeline in tests/deploy until the pipeline exists, so both must fit."""
    (trigger,) = by_entrypoint("flows/pipeline.py:self_healing_pipeline")["triggers"]
    assert set(trigger["parameters"]) <= flow_parameters(entrypoint)


def test_only_the_pipeline_reacts_to_pushes() -> None:
    assert [d["entrypoint"] for d in DEPLOYMENTS if d.get("triggers")] == ["flows/pipeline.py:self_healing_pipeline"]


def test_reindex_runs_on_a_cron_schedule() -> None:
    (schedule,) = by_entrypoint("flows/reindex.py:reindex_repo")["schedules"]
    assert len(schedule["cron"].split()) == 5 and schedule["active"] is True
