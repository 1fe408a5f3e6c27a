"""The one contract module: every stage talks to the others only through these models.

Merged from seed 000 §1 (BuildReport, TestSpec, GeneratedTests), 001 (TestCase, min_line_coverage) and 003
(line coverage, artefact URL). JSON Schemas are generated into ``schemas/`` by ``python -m mendflow.contracts``;
a test fails when they drift from these models.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


class Contract(BaseModel):
    """Base for contracts: unknown fields are refused so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class BuildStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERRORED = "ERRORED"


class FailReason(StrEnum):
    """Value of the seed's ``ci_fail_reason`` metric."""

    TESTS = "tests"
    LINT = "lint"
    NO_TESTS = "no_tests"
    DEPENDENCIES = "dependencies"
    TIMEOUT = "timeout"
    OOM = "oom"
    RUNNER_CRASH = "runner_crash"
    INFRASTRUCTURE = "infrastructure"
    BAD_INPUT = "bad_input"


class SymbolCoverage(Contract):
    """Coverage of one function or class, as coverage.py 7.x reports it in ``functions``/``classes``."""

    name: str = Field(description="Qualified name, e.g. 'Calculator.divide'; '' is module-level code.")
    kind: Literal["function", "class"]
    start_line: int | None = None
    end_line: int | None = None
    statements: int
    missing_lines: list[int]
    line_pct: float
    branch_pct: float | None = None


class FileCoverage(Contract):
    path: str = Field(description="Path relative to the repository root.")
    statements: int
    missing_lines: list[int]
    excluded_lines: list[int] = Field(default_factory=list)
    num_branches: int = 0
    missing_branches: list[tuple[int, int]] = Field(default_factory=list)
    line_pct: float
    branch_pct: float | None = None
    symbols: list[SymbolCoverage] = Field(default_factory=list)
    contexts: dict[int, list[str]] = Field(
        default_factory=dict, description="line → test ids that ran it (coverage.py dynamic contexts)."
    )


class Coverage(Contract):
    line_pct: float
    branch_pct: float | None = None
    statements: int = 0
    covered_lines: int = 0
    num_branches: int = 0
    covered_branches: int = 0
    files: list[FileCoverage] = Field(default_factory=list)

    def file(self, path: str) -> FileCoverage | None:
        return next((f for f in self.files if f.path == path), None)


class TestCounts(Contract):
    __test__ = False  # not a pytest class
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0


class BuildMetrics(Contract):
    """The seed's runner metrics, recorded on the report and emitted as Prefect events."""

    ci_build_duration: float
    ci_tests_passed_total: int
    ci_coverage_line_pct: float | None
    ci_fail_reason: FailReason | None


class BuildReport(Contract):
    schema_version: int = SCHEMA_VERSION
    repo: str = Field(description="Repository identity, owner/name: artefact keys, events and the index use it.")
    commit_sha: str
    branch_name: str = ""
    stage: str = Field("build", description="'B1', 'B2' or 'build'.")
    attempt: int = 1
    status: BuildStatus
    failed_tests: list[str] = Field(default_factory=list, description="pytest node ids.")
    lint_errors: list[str] = Field(default_factory=list, description="'path:line:col CODE message' lines.")
    tests: TestCounts = Field(default_factory=TestCounts)
    test_command: list[str] = Field(default_factory=list)
    coverage: Coverage | None = None
    artefact_url: str = ""
    durations: dict[str, float] = Field(default_factory=dict, description="Seconds per step.")
    error_reason: str | None = None
    fail_reason: FailReason | None = None
    metrics: BuildMetrics | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    runner_version: str = ""


class CaseKind(StrEnum):
    SUCCESS = "success"
    EDGE = "edge"
    FAILURE = "failure"
    CONCURRENCY = "concurrency"
    SECURITY = "security"


class Priority(StrEnum):
    HIGH = "high"
    NORMAL = "normal"


class CoverageTarget(Contract):
    path: str = Field(description="Source file relative to the repository root.")
    symbol: str = Field(description="Qualified symbol, e.g. 'Calculator.divide'; '' targets module code.")
    start_line: int
    end_line: int
    line_pct: float
    missing_lines: list[int] = Field(default_factory=list)
    missing_branches: list[tuple[int, int]] = Field(
        default_factory=list, description="Branches (from line, to line; negative: exit) the build never took."
    )
    priority: Priority = Priority.NORMAL
    reasons: list[str] = Field(default_factory=list, description="Why this target: coverage gap, risk heuristics.")

    @property
    def ref(self) -> str:
        """The seed's 'client.py::fetch_data' form."""
        return f"{self.path}::{self.symbol}" if self.symbol else self.path


class TestCase(Contract):
    __test__ = False
    name: str
    goal: str
    kind: CaseKind = CaseKind.SUCCESS
    target_path: str = Field(description="'path::symbol' of the target this case exercises.")
    steps: list[str] = Field(default_factory=list)


class TestSpec(Contract):
    __test__ = False
    schema_version: int = SCHEMA_VERSION
    id: str
    parent_commit_sha: str
    repo: str = ""
    cases: list[TestCase] = Field(default_factory=list)
    targets: list[CoverageTarget] = Field(default_factory=list)
    min_line_coverage: float = 80.0
    rationale_md: str = ""
    estimated_tokens: int = 0
    planner: Literal["llm", "offline"] = "offline"
    llm_tokens: int = 0


class DropReason(StrEnum):
    OUTSIDE_TESTS_DIR = "outside_tests_dir"
    UNPARSABLE = "unparsable"
    LINT = "lint"
    NOT_COLLECTED = "not_collected"
    UNDEFINED_FIXTURE = "undefined_fixture"
    FAILS = "fails"
    FLAKY = "flaky"
    NO_COVERAGE_GAIN = "no_coverage_gain"
    SECRET = "secret"
    OVERSIZE = "oversize"
    NOT_ASKED_FOR = "not_asked_for"  # the job returned a file the trusted side did not ask it to write


class KeptTest(Contract):
    node_id: str
    target: str
    lines_gained: int
    branches_gained: int = 0


class DroppedTest(Contract):
    node_id: str
    reason: DropReason
    detail: str = ""


class GeneratedTests(Contract):
    schema_version: int = SCHEMA_VERSION
    spec_id: str
    branch_name: str
    commit_sha: str = Field("", description="Empty when precheck FAILED: nothing was committed.")
    precheck: BuildStatus
    notes: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    kept: list[KeptTest] = Field(default_factory=list)
    dropped: list[DroppedTest] = Field(default_factory=list)
    generator: Literal["llm", "pynguin"] = "pynguin"
    repair_rounds: int = 0
    llm_tokens: int = 0


class TestgenJobResult(Contract):
    """``result.json`` of the test-generation job: untrusted data, parsed with this contract and re-checked.

    The trusted side commits only ``files`` at paths it asked for before the job ran; a kept test whose file
    was refused is dropped, and B2 re-checks whatever is committed.
    """

    kept: list[KeptTest] = Field(default_factory=list)
    dropped: list[DroppedTest] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict, description="Final text of each test file, by path.")
    notes: list[str] = Field(default_factory=list)
    feedback: str = Field("", description="Failures fed back to the LLM for its next round.")
    generated: dict[str, str] = Field(default_factory=dict, description="The generator's raw output, for the log.")
    error: str = Field("", description="Set when the job could not gate at all (dependencies, a crash).")


class Regression(Contract):
    """The Verifier's ticket when a build fails: what broke, where, and the evidence."""

    schema_version: int = SCHEMA_VERSION
    id: str
    repo: str
    commit_sha: str
    branch_name: str
    stage: str
    status: BuildStatus
    fail_reason: FailReason | None = None
    failed_tests: list[str] = Field(default_factory=list)
    lint_errors: list[str] = Field(default_factory=list)
    error_reason: str | None = None
    build_report_url: str = ""
    summary_md: str = ""


class PipelineOutcome(StrEnum):
    MERGED = "merged"  # B2 passed and the branch was merged or pushed per the merge setting
    READY = "ready"  # B2 passed; merge mode 'none' leaves the branch for a human
    NOTHING_TO_ADD = "nothing_to_add"  # no target below the coverage threshold
    NO_TESTS_KEPT = "no_tests_kept"  # the builder's precheck failed: nothing survived the gates
    REGRESSION = "regression"  # B1 or B2 failed; see the Regression


class PipelineResult(Contract):
    """What one run of the self-healing loop ended with, and the evidence for it."""

    schema_version: int = SCHEMA_VERSION
    repo: str
    commit_sha: str
    branch_name: str
    outcome: PipelineOutcome
    b1: BuildReport
    spec: TestSpec | None = None
    generated: GeneratedTests | None = None
    b2: BuildReport | None = None
    regression: Regression | None = None
    merged_sha: str = ""
    coverage_delta_pct: float | None = Field(None, description="B2 line coverage minus B1's, in points.")


CONTRACTS: dict[str, type[BaseModel]] = {
    "BuildReport": BuildReport,
    "TestSpec": TestSpec,
    "GeneratedTests": GeneratedTests,
    "TestgenJobResult": TestgenJobResult,
    "Regression": Regression,
    "PipelineResult": PipelineResult,
}


def schema_json(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in CONTRACTS.items():
        path = directory / f"{name}.schema.json"
        path.write_text(schema_json(model))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_schemas():
        print(p)
