"""k8s/monitoring: the rules are what mendflow/alerts.py says, load in Prometheus, and pass their unit tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from mendflow.alerts import render_rules

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "k8s" / "monitoring"
RULES = DIR / "mendflow-alerts.rules.yml"
MANIFESTS = (DIR / "deployment.yaml", DIR / "service.yaml")
K8S_VERSION = "1.34.0"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=DIR, timeout=120, check=False)


def test_checked_in_rules_are_what_the_thresholds_render() -> None:
    assert RULES.read_text() == render_rules()


def test_promtool_loads_the_rules() -> None:
    result = run("promtool", "check", "rules", RULES.name)
    assert result.returncode == 0 and "SUCCESS: 3 rules found" in result.stdout, result.stdout + result.stderr


def test_each_alert_fires_past_its_threshold_and_not_at_it() -> None:
    result = run("promtool", "test", "rules", "mendflow-alerts.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_unit_test() -> None:
    tests = yaml.safe_load((DIR / "mendflow-alerts.test.yml").read_text())["tests"]
    tested = {case["alertname"] for test in tests for case in test["alert_rule_test"]}
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    assert tested == {rule["alert"] for rule in rules}


def test_manifests_pass_strict_validation() -> None:
    validate = Path(sys.executable).parent / "kubernetes-validate"
    result = run(str(validate), "--strict", "-k", K8S_VERSION, *map(str, MANIFESTS))
    assert result.returncode == 0 and result.stdout.count("passed") == len(MANIFESTS), result.stdout + result.stderr


def test_kustomization_ships_the_rules_and_the_exporter() -> None:
    built = list(yaml.safe_load_all(run("kubectl", "kustomize", ".").stdout))
    kinds: dict[str, dict[str, Any]] = {doc["kind"]: doc for doc in built}
    assert kinds["ConfigMap"]["data"] == {RULES.name: RULES.read_text()}
    assert kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]["command"][:2] == ["mendflow", "metrics"]


def test_the_service_reaches_the_port_the_exporter_serves() -> None:
    deployment, service = (yaml.safe_load(path.read_text()) for path in MANIFESTS)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    served = container["command"][container["command"].index("--port") + 1]
    (port,) = container["ports"]
    scraped = service["metadata"]["annotations"]["prometheus.io/port"]
    assert (served, service["spec"]["ports"][0]["targetPort"], scraped) == (
        str(port["containerPort"]), port["name"], served,
    )  # fmt: skip
