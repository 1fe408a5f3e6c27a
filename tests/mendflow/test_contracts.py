import json

import pytest
from pydantic import ValidationError

from mendflow.contracts import CONTRACTS, SCHEMA_DIR, BuildReport, BuildStatus, schema_json


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_checked_in_schema_matches_model(name: str) -> None:
    checked_in = (SCHEMA_DIR / f"{name}.schema.json").read_text()
    assert checked_in == schema_json(CONTRACTS[name]), (
        f"schemas/{name}.schema.json drifted from mendflow.contracts; run `python -m mendflow.contracts`"
    )


def test_unknown_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        BuildReport(repo="r", commit_sha="abc", status=BuildStatus.PASSED, colour="green")  # type: ignore[call-arg]


def test_report_round_trips_through_json() -> None:
    report = BuildReport(repo="r", commit_sha="abc", status=BuildStatus.FAILED, failed_tests=["t.py::test_x"])
    assert BuildReport.model_validate(json.loads(report.model_dump_json())) == report
