"""`prefect deploy` of prefect.yaml against a real server leaves what the file promises."""

from __future__ import annotations

import pytest
from prefect.client.orchestration import get_client

from tests.deploy.conftest import HAS_REINDEX, Deployed

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not HAS_REINDEX, reason="flows/reindex.py does not exist yet")
def test_reindex_deployment_has_its_cron_schedule(deployed: Deployed) -> None:
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("reindex-repo/default")
    (schedule,) = deployment.schedules
    assert schedule.active and getattr(schedule.schedule, "cron", None) == "17 3 * * *"


def test_trigger_deployment_owns_the_git_push_automation(deployed: Deployed) -> None:
    with get_client(sync_client=True) as client:
        automations = client.read_automations_by_name("git-push-runs-pipeline")
    (automation,) = automations
    assert automation.trigger.expect == {"git.push"}  # type: ignore[union-attr]
    (action,) = automation.actions
    assert action.deployment_id == deployed.target_id  # type: ignore[union-attr]


def test_reindex_repo_parameter_defaults_to_the_checkout(deployed: Deployed) -> None:
    if not HAS_REINDEX:
        pytest.skip("flows/reindex.py does not exist yet")
    from tests.deploy.conftest import ROOT

    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("reindex-repo/default")
    assert deployment.parameters["repo"] == str(ROOT)
