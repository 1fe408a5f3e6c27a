"""prefect.yaml read as data: entrypoints, parameters, pools, trigger and schedule agree with the code."""

from __future__ import annotations

import asyncio
import inspect
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint
from prefect.server.utilities.user_templates import render_user_template_sync
from prefect.utilities.importtools import import_object
from prefect.utilities.templating import apply_values

from mendflow.webhook.emit import EVENT_NAME, build_event, resource_id
from mendflow.webhook.push import PushEvent
from tests.deploy.conftest import PREFECT_YAML, ROOT

CONFIG: dict[str, Any] = yaml.safe_load(PREFECT_YAML.read_text())
DEPLOYMENTS: list[dict[str, Any]] = CONFIG["deployments"]
POOLS = CONFIG["definitions"]["work_pools"]
ENTRYPOINTS = {
    "flows/pipeline.py:self_healing_pipeline",
    "flows/ci.py:ci_build",
    "flows/reindex.py:reindex_repo",
    "flows/alerts.py:mendflow_alerts",
}
GIT_PUSH_TRIGGER = CONFIG["definitions"]["git_push_trigger"]


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


def resolved_pull(clone: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The pull steps as `prefect deploy` stores them: build steps run (for real) in ``clone``, outputs applied.

    Each step function is called directly: `run_steps` would also resolve block and variable placeholders,
    which needs an API (and starts a throwaway server without one); the build steps have none."""
    monkeypatch.chdir(clone)
    outputs: dict[str, Any] = {}
    for step in CONFIG["build"]:
        ((name, args),) = step.items()
        kwargs = {k: v for k, v in args.items() if k != "id"}
        outputs[args["id"]] = asyncio.run(import_object(name)(**kwargs))
    return apply_values(CONFIG["pull"], outputs)  # what prefect deploy does with the top-level pull section


def git_clone_step(repository: str, branch: str) -> list[dict[str, Any]]:
    return [{"prefect.deployments.steps.git_clone": {"id": "clone", "repository": repository, "branch": branch}}]


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of mendflow on branch `release` whose origin is a hosted URL; no MENDFLOW_CODE_* set."""
    monkeypatch.delenv("MENDFLOW_CODE_REPO", raising=False)
    monkeypatch.delenv("MENDFLOW_CODE_BRANCH", raising=False)
    subprocess.run(["git", "init", "-q", "-b", "release", str(tmp_path)], check=True)
    origin = "https://git.example/acme/mendflow.git"
    subprocess.run(["git", "remote", "add", "origin", origin], cwd=tmp_path, check=True)
    return tmp_path


def test_workers_clone_the_deploying_clones_origin_and_branch_by_default(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolved_pull(clone, monkeypatch) == git_clone_step("https://git.example/acme/mendflow.git", "release")


def test_deploy_time_settings_choose_the_code_repository_and_branch(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MENDFLOW_CODE_REPO", "file:///srv/git/mendflow.git")
    monkeypatch.setenv("MENDFLOW_CODE_BRANCH", "stable")
    assert resolved_pull(clone, monkeypatch) == git_clone_step("file:///srv/git/mendflow.git", "stable")


def test_deploy_without_a_code_repository_is_refused_naming_the_setting(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "remote", "remove", "origin"], cwd=clone, check=True)
    with pytest.raises(RuntimeError, match="MENDFLOW_CODE_REPO"):
        resolved_pull(clone, monkeypatch)


@pytest.mark.parametrize("entrypoint", ["flows/pipeline.py:self_healing_pipeline", "flows/ci.py:ci_build"])
def test_kubernetes_deployments_run_the_code_in_the_image(entrypoint: str) -> None:
    """No clone and no build step: the flow image (images/app/Dockerfile) holds the code at /opt/mendflow."""
    deployment = by_entrypoint(entrypoint, "kubernetes")
    assert deployment["build"] is None
    assert deployment["pull"] == [{"prefect.deployments.steps.set_working_directory": {"directory": "/opt/mendflow"}}]


@pytest.mark.parametrize("entrypoint", sorted(ENTRYPOINTS))
def test_deployment_parameters_exist_on_the_flow(entrypoint: str) -> None:
    for deployment in (d for d in DEPLOYMENTS if d["entrypoint"] == entrypoint):
        assert set(deployment.get("parameters", {})) <= flow_parameters(entrypoint)


def test_push_trigger_passes_the_webhooks_owner_name_as_repo_id() -> None:
    """`repo_name` is the event's resource name (git.repo.<owner>/<name>): the id events and keys use."""
    push = PushEvent("github", "acme/demo", "https://git.example/acme/demo.git", "refs/heads/main", "0", "1", "me")
    event = build_event(push, "github:1")
    rendered = render_user_template_sync(GIT_PUSH_TRIGGER["parameters"]["repo_id"], {"event": event})
    assert rendered == event.resource["prefect.resource.name"] == "acme/demo"


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
    reacting = [d["entrypoint"] for d in DEPLOYMENTS for t in d.get("triggers", []) if EVENT_NAME in t["expect"]]
    assert reacting == ["flows/pipeline.py:self_healing_pipeline"]


def test_reindex_runs_on_a_cron_schedule() -> None:
    (schedule,) = by_entrypoint("flows/reindex.py:reindex_repo")["schedules"]
    assert len(schedule["cron"].split()) == 5 and schedule["active"] is True


def test_reindex_deployment_names_no_repository() -> None:
    """No `repo` (nor `ref`): the scheduled run re-indexes every served repository, each at its branch."""
    assert not by_entrypoint("flows/reindex.py:reindex_repo").get("parameters")
