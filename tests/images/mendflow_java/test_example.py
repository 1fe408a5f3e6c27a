"""Real Maven on examples/java-isbn: the reports the Java runner reads, as surefire and JaCoCo write them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_java import surefire
from mendflow_runner.coverage_formats import from_jacoco

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "java-isbn"
JACOCO = "org.jacoco:jacoco-maven-plugin:0.8.14"

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")


def test_the_example_s_surefire_and_jacoco_reports_are_read(tmp_path: Path) -> None:
    repo = tmp_path / "isbn"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("target"))
    subprocess.run(
        ["mvn", "-B", "-q", f"-Dmaven.repo.local={tmp_path / 'm2'}", f"{JACOCO}:prepare-agent", "test",
         f"{JACOCO}:report", "-Dmaven.test.failure.ignore=true"],
        cwd=repo, check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    run = surefire.read_reports(repo)
    assert run.counts == {"total": 5, "passed": 5, "failed": 0, "skipped": 0, "errors": 0}
    coverage = from_jacoco((repo / "target/site/jacoco/jacoco.xml").read_text(), repo, ["src/main/java"])
    assert [f["path"] for f in coverage["files"]] == ["src/main/java/org/example/isbn/Isbn.java"]
    assert 60 < coverage["line_pct"] < 75
    assert coverage["branch_data"] is True
