"""The one contract module: every stage talks to the others only through these models.

Merged from seed 000 §1 (BuildReport, TestSpec, GeneratedTests), 001 (TestCase, min_line_coverage) and 003
(line coverage, artefact URL). JSON Schemas are generated into ``schemas/`` by ``python -m mendflow.contracts``;
a test fails when they drift from these models.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
GENERATED_TEST_SUFFIX = "_mendflow.py"  # tests/test_<module>[_<n>]_mendflow.py: mendflow.testgen.layout.test_file_for
# Every branch mendflow creates (the builder's agt/testbuilder/…, the healer's agt/healer/…) is under this prefix:
# a fetch of a URL repository never prunes them, and the repository's own branches never carry it.
MENDFLOW_BRANCH_PREFIX = "agt/"


def is_generated_test_file(path: str) -> bool:
    """Whether ``path`` is a test file mendflow generated (``<tests dir>/test_<module>_mendflow.py``, the test
    builder's naming rule; the tests dir is where the repo's pytest looks, ``mendflow.testgen.layout.tests_dir``):
    the one test file a stage may drop and write again; every other file is the user's."""
    p = PurePosixPath(path)
    return (
        len(p.parts) >= 2
        and p.name.startswith("test_")
        and p.name.endswith(GENERATED_TEST_SUFFIX)
        and len(p.name) > len("test_") + len(GENERATED_TEST_SUFFIX)
    )


_TEST_DIRS = {"tests", "test", "testing"}


def is_test_file(path: str) -> bool:
    """Test code by the conventions pytest collects: what healing may touch by default, never a planner's
    target."""
    p = PurePosixPath(path)
    if p.suffix != ".py":
        return False
    name = p.name
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or bool(_TEST_DIRS.intersection(p.parts[:-1]))
    )


def generated_test_modules(path: str) -> set[str]:
    """The module names a generated test file can be named after (``test_<module>[_<n>]_mendflow.py``: a number
    when earlier generated tests for the module were kept)."""
    name = PurePosixPath(path).name.removeprefix("test_").removesuffix(GENERATED_TEST_SUFFIX)
    numbered = re.fullmatch(r"(.+)_\d+", name)
    return {name, numbered[1]} if numbered else {name}


class Contract(BaseModel):
    """Base for contracts: unknown fields are refused so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class Language(StrEnum):
    """A language mendflow builds, each with its own CI image (``mendflow.jobcode.RUNNER_IMAGES``)."""

    PYTHON = "python"
    GO = "go"
    TYPESCRIPT = "typescript"  # and JavaScript: one Node toolchain
    RUST = "rust"
    JAVA = "java"


class BuildStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERRORED = "ERRORED"


class FailReason(StrEnum):
    """Value of the seed's ``ci_fail_reason`` metric."""

    TESTS = "tests"
    BUILD = "build"  # the code does not compile (Go, Rust, Java, TypeScript): the compiler's words in error_reason
    LINT = "lint"
    NO_TESTS = "no_tests"
    DEPENDENCIES = "dependencies"
    TIMEOUT = "timeout"
    OOM = "oom"
    RUNNER_CRASH = "runner_crash"
    INFRASTRUCTURE = "infrastructure"
    BAD_INPUT = "bad_input"
    COVERAGE = "coverage"  # the build passed but measured less than the one before it (B2 below B1)


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
    missing_branches: list[tuple[int, int]] = Field(
        default_factory=list,
        description="coverage.py: (from line, to line) arcs never taken (a negative target leaves the function). "
        "LCOV, Cobertura, JaCoCo name no target: (line, n) is the n-th branch out of that line, from 0.",
    )
    line_pct: float
    branch_pct: float | None = None
    symbols: list[SymbolCoverage] = Field(default_factory=list)


class CoverageFormat(StrEnum):
    """The tool's report a build's coverage was read from (the runner's ``coverage_formats``)."""

    COVERAGE_PY = "coverage.py"
    LCOV = "lcov"
    COBERTURA = "cobertura"
    JACOCO = "jacoco"
    GO = "go-coverprofile"


class Coverage(Contract):
    format: CoverageFormat = CoverageFormat.COVERAGE_PY
    branch_data: bool = Field(
        True,
        description="False when the format records no branches (Go's coverprofile): branch numbers are absent, "
        "not zero, and no gate compares them.",
    )
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


class FailureKind(StrEnum):
    FAILED = "failed"  # the test ran and its body failed (an assertion, an exception)
    ERROR = "error"  # collection, import or a fixture failed: the test never ran its body


class TestFailure(Contract):
    """One failing test as the runner read it from JUnit XML: enough for a person, or the healer, to act on."""

    __test__ = False
    node_id: str = Field(description="pytest node id, or 'path' for a collection error of a whole file.")
    kind: FailureKind
    exception: str = Field("", description="Exception class, e.g. 'ImportError', 'AssertionError'.")
    message: str = Field("", description="The exception's first line, e.g. 'assert 3 == 4'.")
    location: str = Field("", description="'path:line' of the deepest frame inside the repository.")
    traceback: str = Field("", description="The failure's text, at most 4 KiB.")


class LanguageSection(Contract):
    """One language's own build inside a run of a repository with several (``BuildReport.sections``)."""

    language: Language
    status: BuildStatus | None = Field(None, description="None when no job ran for it (see skipped).")
    failed_tests: list[str] = Field(default_factory=list)
    selected: list[str] = Field(default_factory=list, description="This language's share of the report's selected.")
    lint_errors: list[str] = Field(default_factory=list)
    tests: TestCounts = Field(default_factory=TestCounts)
    test_command: list[str] = Field(default_factory=list)
    coverage: Coverage | None = None
    durations: dict[str, float] = Field(default_factory=dict, description="Seconds per step.")
    error_reason: str | None = None
    fail_reason: FailReason | None = None
    transient: bool | None = None
    artefact_url: str = Field("", description="This language's own job artefacts ('' when no job ran).")
    skipped: str = Field("", description="Why no job ran for this language (no test of it selected); '' if one ran.")


class BuildReport(Contract):
    schema_version: int = SCHEMA_VERSION
    repo: str = Field(description="Repository identity, owner/name: artefact keys, events and the index use it.")
    commit_sha: str
    branch_name: str = ""
    stage: str = Field("build", description="'B1', 'B2' or 'build'.")
    attempt: int = 1
    language: Language = Field(Language.PYTHON, description="What the commit built as (mendflow.languages).")
    status: BuildStatus
    failed_tests: list[str] = Field(default_factory=list, description="pytest node ids.")
    failures: list[TestFailure] = Field(default_factory=list, description="Details of failed_tests, same order.")
    selected: list[str] = Field(default_factory=list, description="Node ids run when only these were asked for.")
    lint_errors: list[str] = Field(
        default_factory=list,
        description="'path:line:col CODE message' lines the commit brought (the only ones that fail a build).",
    )
    lint_preexisting: list[str] = Field(
        default_factory=list, description="Findings the parent commit has too: listed, never fatal."
    )
    lint_baseline: str = Field(
        "", description="The commit lint findings were compared with ('': none, so every finding counts as new)."
    )
    lint_advisory: list[str] = Field(
        default_factory=list,
        description="Advice in the report, never fatal: bug-level ruff findings in a Python repository that "
        "configures no ruff (config or pre-commit hook), and notes on what a build could not measure or check "
        "(coverage a tool could not record, a linter that is not installed).",
    )
    tests: TestCounts = Field(default_factory=TestCounts)
    runs: int = Field(
        1,
        ge=1,
        description="How many times the tests ran (a gate asks for several and the job stops at the first run that "
        "does not pass): tests, failed_tests and failures describe the last; coverage is the first's.",
    )
    test_command: list[str] = Field(default_factory=list)
    coverage: Coverage | None = None
    artefact_url: str = ""
    durations: dict[str, float] = Field(default_factory=dict, description="Seconds per step.")
    error_reason: str | None = None
    fail_reason: FailReason | None = None
    transient: bool | None = Field(
        None,
        description="An ERRORED build's: whether trying again may help (network, a 5xx); False for a deterministic "
        "failure (a resolution conflict, a missing package), which is not retried; None: not judged (retried).",
    )
    metrics: BuildMetrics | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    runner_version: str = ""
    sections: list[LanguageSection] = Field(
        default_factory=list,
        description="One per detected language (mendflow.ci.combine): the fields above are their combination.",
    )


class FixedFile(Contract):
    """One file the lint-fix job was asked to fix: its text after the repository's fixers, if they changed it."""

    path: str = Field(description="Repository-relative path, as asked for.")
    text: str | None = Field(None, description="The file after the fixers; null when they left it unchanged.")
    remaining: list[str] = Field(
        default_factory=list, description="Lint findings left in the file after fixing, as BuildReport.lint_errors."
    )
    error: str = Field("", description="Why this file was not fixed (not a regular Python file, not UTF-8).")


class LintFixes(Contract):
    """``fixes.json`` of the CI runner's fix mode (``--fix``): untrusted data, parsed with this contract and
    vetted (``mendflow.heal.lintfix``): only asked-for paths, size-capped, valid Python, no weaker tests."""

    schema_version: int = SCHEMA_VERSION
    files: list[FixedFile] = Field(default_factory=list)
    formatted: bool = Field(False, description="Whether `ruff format` ran (only when the repository configures ruff).")
    error: str = Field("", description="Set when the job fixed nothing: bad input, a fixer that could not run.")


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
    generator: Literal["llm", "pynguin", "none"] = Field(
        "pynguin", description="'none': no generator for the language."
    )
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


class ErrorCategory(StrEnum):
    """What kind of break a failing test shows (seed 004's error_category)."""

    IMPORT = "import"  # ImportError / ModuleNotFoundError: a module or name moved or was renamed
    NAME = "name"  # NameError / AttributeError of a symbol the commit renamed or removed
    SIGNATURE = "signature"  # TypeError on a call: parameters renamed, added, removed or reordered
    ASSERTION = "assertion"  # an assertion about behaviour
    FIXTURE = "fixture"  # a fixture or setup error
    TIMEOUT = "timeout"
    FLAKY = "flaky"  # failed, then passed on the same inputs
    LINT = "lint"  # a lint or format finding
    SYNTAX = "syntax"
    OTHER = "other"
    STALE_GENERATED = "stale_generated"  # a generated test pinned behaviour the commit changed: regenerated


class HealMethod(StrEnum):
    UPDATE = "update"  # replace one unique string (the scalpel)
    PATCH = "patch"  # a unified diff that must apply cleanly
    REWRITE = "rewrite"  # the whole file's new content


class Scope(StrEnum):
    LOCAL = "local"
    MULTI_LINE = "multi_line"
    FILE_WIDE = "file_wide"


class Assessment(Contract):
    """The error analyzer's reading of one failure (seed 004's ``analysis``)."""

    category: ErrorCategory
    scope: Scope = Scope.LOCAL
    locations: list[str] = Field(default_factory=list, description="'path:line' places a fix would touch.")
    uniqueness: float = Field(0.0, ge=0.0, le=1.0, description="1.0 when the text to change occurs once.")
    lines_to_change: int = 0
    suggested_method: HealMethod = HealMethod.UPDATE
    explained_by_change: bool = Field(
        False, description="The commit changed what the test relies on (a rename, a move, a signature)."
    )
    change: str = Field("", description="What the commit changed there, e.g. 'calc.add renamed to calc.plus'.")


class UpdateEdit(Contract):
    old_str: str = Field(min_length=1, description="Must occur exactly once in the file.")
    new_str: str


class HealEdit(Contract):
    """One repair in the seed's payload shape: exactly one of ``update``, ``patch``, ``new_content``.

    An LLM's answer is untrusted data: parsed with this contract, then applied only to a file the healer was
    allowed to touch and only if the no-weakening gate passes.
    """

    reasoning: str = ""
    file_to_patch: str = Field(description="Path relative to the repository root.")
    update: UpdateEdit | None = None
    patch: str | None = Field(None, description="A unified diff of file_to_patch.")
    new_content: str | None = None

    @model_validator(mode="after")
    def _exactly_one_payload(self) -> HealEdit:
        given = [p for p in (self.update, self.patch, self.new_content) if p is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of update, patch, new_content")
        return self

    @property
    def method(self) -> HealMethod:
        if self.update is not None:
            return HealMethod.UPDATE
        return HealMethod.PATCH if self.patch is not None else HealMethod.REWRITE


class HealAttempt(Contract):
    """One repair tried, as the healing knowledge base records it (across repositories)."""

    repo: str
    commit_sha: str
    test_id: str
    category: ErrorCategory
    scope: Scope
    healer: str = Field(description="'deterministic:<rule>' or 'llm:<model>'.")
    method: HealMethod
    success: bool
    tokens: int = 0
    duration_sec: float = 0.0
    diff_lines: int = 0
    gate: list[str] = Field(default_factory=list, description="Why the no-weakening gate refused it; [] = passed.")
    error: str = ""
    diff: str = ""
    at: datetime | None = None


class CheckStatus(StrEnum):
    FAILED = "failed"
    PASSED = "passed"
    HEALED = "healed"
    QUARANTINED = "quarantined"  # flaky: reported, never healed
    REGRESSION = "regression"  # a behaviour change the commit did not intend: reported, never healed
    GAVE_UP = "gave_up"  # every method tried within the budget failed


class ChecklistEntry(Contract):
    """Seed 004's smart checklist, one test."""

    test_id: str
    status: CheckStatus = CheckStatus.FAILED
    retries: int = 0
    last_error: str = ""
    category: ErrorCategory | None = None
    assessment: Assessment | None = None
    history: list[HealAttempt] = Field(default_factory=list)


class Checklist(Contract):
    schema_version: int = SCHEMA_VERSION
    repo: str
    commit_sha: str
    stage: str
    entries: list[ChecklistEntry] = Field(default_factory=list)


class HealOutcome(StrEnum):
    HEALED = "healed"  # every failure repaired; B3 passed; merged per merge mode
    AWAITING_APPROVAL = "awaiting_approval"  # repaired, but a category needs a human's yes
    REJECTED = "rejected"  # a human said no
    NOT_HEALED = "not_healed"  # a real regression, or a failure no method repaired


class SourceFixProposal(Contract):
    """A fix to the code under test for a real regression: only ever proposed on a branch for a human to review;
    mendflow never merges it."""

    branch_name: str
    commit_sha: str
    files: list[str]
    reasoning: str = ""
    diff: str = ""
    passes: list[str] = Field(default_factory=list, description="Regression tests that pass with the fix.")
    still_failing: list[str] = Field(default_factory=list)
    tokens: int = 0


class Regeneration(Contract):
    """Generated tests that pinned behaviour the commit changed (stale), dropped on the heal branch and generated
    again from the current code (planner and builder on the drop commit). It changes what the tests expect: always
    for a human's approval, and the regression stays reported."""

    dropped: list[str] = Field(default_factory=list, description="Node ids of the stale generated tests dropped.")
    files: list[str] = Field(default_factory=list, description="Generated test files the drop changed or removed.")
    drop_commit_sha: str = Field("", description="The drop commit on the heal branch.")
    drop_build: BuildReport | None = Field(None, description="B3: the full build of the drop commit.")
    spec_id: str = Field("", description="The TestSpec of what the dropped tests covered; '' when nothing was left.")
    generated: GeneratedTests | None = None
    build: BuildReport | None = Field(None, description="B2 of the regenerated tests' commit.")
    passed: bool = Field(False, description="The drop's B3 passed, and the regenerated tests' B2 when any.")


class HealResult(Contract):
    """What the heal stage did to one failed build, and the evidence (the audit trail's summary)."""

    schema_version: int = SCHEMA_VERSION
    repo: str
    commit_sha: str
    stage: str
    outcome: HealOutcome
    checklist: Checklist
    branch_name: str = ""
    heal_commit_sha: str = ""
    b3: BuildReport | None = None
    approver: str = ""
    diff: str = ""
    proposal: SourceFixProposal | None = Field(
        None, description="For a real regression, with an LLM: a source fix proposed on its own branch, never merged."
    )
    regenerated: Regeneration | None = Field(
        None, description="Stale generated tests dropped and generated again from the current code, for approval."
    )
    summary_md: str = ""


class PipelineOutcome(StrEnum):
    HEALED = "healed"  # a failed build was repaired (tests only) and B3 passed
    AWAITING_APPROVAL = "awaiting_approval"  # repaired, waiting for a human's approval
    MERGED = "merged"  # B2 passed and the branch was merged or pushed per the merge setting
    READY = "ready"  # B2 passed; merge mode 'none' leaves the branch for a human
    NOTHING_TO_ADD = "nothing_to_add"  # no line or branch left that the tests miss
    NO_COVERAGE = "no_coverage"  # B1 passed but measured nothing (the repo's coverage config matched no file)
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
    b3: BuildReport | None = Field(
        None, description="The build of the tests commit after the generated tests that failed B2 were dropped."
    )
    regression: Regression | None = None
    heal: HealResult | None = None
    merged_sha: str = ""
    coverage_delta_pct: float | None = Field(
        None, description="Line coverage of what merges (B3 when tests were dropped, else B2) minus B1's, in points."
    )


CONTRACTS: dict[str, type[BaseModel]] = {
    "BuildReport": BuildReport,
    "TestSpec": TestSpec,
    "GeneratedTests": GeneratedTests,
    "TestgenJobResult": TestgenJobResult,
    "Regression": Regression,
    "PipelineResult": PipelineResult,
    "HealEdit": HealEdit,
    "HealResult": HealResult,
    "LintFixes": LintFixes,
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
