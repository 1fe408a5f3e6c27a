"""`prefect deploy` of prefect.yaml against a real server leaves what the file promises."""

from __future__ import annotations

from typing import Any

import pytest
from prefect.client.orchestration import get_client

from tests.deploy.conftest import HAS_REINDEX, Deployed

PROCESS = ["self-healing-pipeline/default", "ci-build/default", "reindex-repo/default", "mendflow-alerts/default"]
KUBERNETES = ["self-healing-pipeline/kubernetes", "ci-build/kubernetes"]


def pull_steps(name: str) -> list[dict[str, Any]] | None:
    with get_client(sync_client=True) as client:
        return client.read_deployment_by_name(name).pull_steps


pytestmark = pytest.mark.slow


@pytest.mark.skipif(not HAS_REINDEX, reason="flows/reindex.py does not exist yet")
def test_reindex_deployment_has_its_cron_schedule(deployed: Deployed) -> None:
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("reindex-repo/default")
    (schedule,) = deployment.schedules
    assert schedule.active and getattr(schedule.schedule, "cron", None) == "17 3 * * *"


@pytest.mark.parametrize("name", PROCESS)
def test_process_deployments_clone_the_configured_code_repository(deployed: Deployed, name: str) -> None:
    clone = {"id": "clone", "repository": str(deployed.code_repo), "branch": "main"}
    assert pull_steps(name) == [{"prefect.deployments.steps.git_clone": clone}]


@pytest.mark.parametrize("name", KUBERNETES)
def test_kubernetes_deployments_run_the_code_in_the_image(deployed: Deployed, name: str) -> None:
    assert pull_steps(name) == [{"prefect.deployments.steps.set_working_directory": {"directory": "/opt/mendflow"}}]


def test_push_automation_passes_repo_id_from_the_event(deployed: Deployed) -> None:
    with get_client(sync_client=True) as client:
        (automation,) = client.read_automations_by_name("git-push-runs-pipeline")
    (action,) = automation.actions
    assert action.parameters == {  # type: ignore[union-attr]
        "repo": "{{ event.payload.repo }}",
        "commit": "{{ event.payload.after }}",
        "branch": "{{ event.payload.branch }}",
        "repo_id": "{{ event.payload.repo_name }}",
    }


def test_trigger_deployment_owns_the_git_push_automation(deployed: Deployed) -> None:
    with get_client(sync_client=True) as client:
        automations = client.read_automations_by_name("git-push-runs-pipeline")
    (automation,) = automations
    assert automation.trigger.expect == {"git.push"}  # type: ignore[union-attr]
    (action,) = automation.actions
    assert action.deployment_id == deployed.target_id  # type: ignore[union-attr]


def test_reindex_deployment_reindexes_every_served_repository(deployed: Deployed) -> None:
    """No `repo` is stored: the scheduled run takes the flow's default, every repository mendflow serves."""
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("reindex-repo/default")
    assert deployment.parameters == {}
