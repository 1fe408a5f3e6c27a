"""``mendflow run``'s summary: what the terminal says of a loop's outcome."""

from __future__ import annotations

from rich.console import Console

from mendflow.cli.run import print_result
from mendflow.contracts import BuildReport, BuildStatus, GeneratedTests, PipelineOutcome, PipelineResult, TestSpec
from mendflow.languages import Language
from mendflow.testgen.builder import not_generated


def test_a_loop_with_no_generator_for_its_language_says_why_no_test_was_kept() -> None:
    b1 = BuildReport(repo="o/r", commit_sha="c" * 40, stage="B1", language=Language.GO, status=BuildStatus.PASSED)
    generated: GeneratedTests = not_generated(TestSpec(id="ts-1", repo="o/r", parent_commit_sha="c" * 40), Language.GO)
    result = PipelineResult(
        repo="o/r",
        commit_sha="c" * 40,
        branch_name="main",
        outcome=PipelineOutcome.NO_TESTS_KEPT,
        b1=b1,
        generated=generated,
    )
    console = Console(record=True, width=200)
    print_result(console, result)
    said = console.export_text()
    assert "  note: no offline generator for go: the test builder writes go tests with an LLM only" in said
