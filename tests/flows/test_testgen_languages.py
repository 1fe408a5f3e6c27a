"""The LLM test builder for Go, TypeScript, Rust and Java: the whole loop on the examples, with the scripted
OpenAI-compatible server as the LLM and everything else real (Prefect, the store, the language's CI runner and
toolchain)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from flows.pipeline import self_healing_pipeline
from mendflow.contracts import BuildStatus, DropReason, PipelineOutcome
from tests.fixtures.llm_server import LLMServer
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_go.helpers import example_files as go_files
from tests.images.mendflow_node import helpers as node
from tests.images.mendflow_runner.helpers import tree_files
from tests.images.mendflow_rust import helpers as rust

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
needs_rust = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs the Rust toolchain")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js and npm")
needs_java = pytest.mark.skipif(shutil.which("mvn") is None, reason="needs a JDK and Maven")
JAVA_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "java-isbn"

GO_TEST = """package ratelimit

import (
\t"testing"
\t"time"
)

func TestReserveWaitsForTheNextToken(t *testing.T) {
\tat := time.Unix(0, 0)
\tb := NewBucket(Limit{Events: 1, Per: time.Second, Burst: 1}, func() time.Time { return at })
\tif got := b.Reserve(); got != 0 {
\t\tt.Fatalf("the first reservation waits %v, want 0", got)
\t}
\tif got := b.Reserve(); got != time.Second {
\t\tt.Fatalf("the second reservation waits %v, want 1s", got)
\t}
}
"""
GO_BROKEN = GO_TEST.replace("b.Reserve(); got != 0", "b.Reserve(); got != undefinedThing")

TS_TEST = """import { describe, expect, it } from "vitest";

import { formatTotals } from "../src/invoice.js";

describe("formatTotals", () => {
  it("lists each taxed category, then the total", () => {
    const totals = { net: 1000, tax: { standard: 190, reduced: 0, exempt: 0 }, gross: 1190 };
    expect(formatTotals(totals)).toBe("Net: €10.00\\nTax (standard): €1.90\\nTotal: €11.90");
  });
});
"""

RUST_TEST = """use duration::{parse, round_to};

#[test]
fn round_to_rounds_halves_up_and_keeps_a_zero_step() {
    assert_eq!(round_to(90, 60), 120);
    assert_eq!(round_to(89, 60), 60);
    assert_eq!(round_to(7, 0), 7);
}

#[test]
fn parse_refuses_a_number_without_a_unit() {
    assert_eq!(
        parse("12"),
        Err(duration::ParseError::MissingUnit("12".to_string()))
    );
}
"""

JAVA_TEST = """package org.example.isbn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class IsbnMendflowTest {
  @Test
  void toIsbn10DropsThe978PrefixAndRecomputesTheCheckDigit() {
    assertEquals("080442957X", Isbn.parse("978-0-8044-2957-3").toIsbn10().digits());
  }

  @Test
  void toIsbn10RefusesA979Isbn() {
    Isbn isbn = Isbn.parse("979-10-00000-00-8");
    assertThrows(IllegalStateException.class, isbn::toIsbn10);
  }

  @Test
  void prefixOfAnIsbn10Is978() {
    assertEquals("978", Isbn.parse("0-306-40615-2").prefix());
  }

  @Test
  void parseRefusesNull() {
    assertThrows(IllegalArgumentException.class, () -> Isbn.parse(null));
  }
}
"""
JAVA_BROKEN = JAVA_TEST.replace('assertEquals("978", ', "assertEquals(undefinedThing, ")
JAVA_TEST_FILE = "src/test/java/org/example/isbn/IsbnMendflowTest.java"


@pytest.fixture
def llm_env(mendflow_env: pytest.MonkeyPatch, scripted_llm: LLMServer) -> LLMServer:
    mendflow_env.setenv("MENDFLOW_LLM__BASE_URL", scripted_llm.url)
    mendflow_env.setenv("MENDFLOW_LLM__API_KEY", "sk-test")
    mendflow_env.setenv("MENDFLOW_LLM__MAX_RETRIES", "0")
    from mendflow.settings import get_settings

    get_settings.cache_clear()
    return scripted_llm


def plan(llm: LLMServer, target: str, goal: str) -> None:
    case: dict[str, Any] = {"name": "gap", "goal": goal, "kind": "success", "target_path": target}
    llm.reply({"cases": [case], "rationale_md": "the gap is untested"})


@needs_go
def test_the_go_loop_refuses_a_write_outside_its_file_repairs_a_compile_error_and_merges(
    make_repo: RepoFactory, llm_env: LLMServer
) -> None:
    plan(llm_env, "bucket.go::Bucket.Reserve", "Reserve says how long to wait when the bucket is empty")
    llm_env.reply(
        {
            "files": [
                {"path": "bucket.go", "content": "package ratelimit\n"},  # source: never the builder's to write
                {"path": "bucket_mendflow_test.go", "content": GO_BROKEN},
            ]
        }
    )
    llm_env.reply({"files": [{"path": "bucket_mendflow_test.go", "content": GO_TEST}]})
    result = self_healing_pipeline(repo=str(make_repo(go_files(), name="ratelimit-llm")), branch="main")
    generated = result.generated
    assert generated is not None and generated.generator == "llm", generated
    reasons = {(d.node_id, d.reason) for d in generated.dropped}
    assert ("bucket.go", DropReason.OUTSIDE_TESTS_DIR) in reasons
    assert ("bucket_mendflow_test.go", DropReason.UNPARSABLE) in reasons, generated.dropped
    broken = next(d for d in generated.dropped if d.reason is DropReason.UNPARSABLE)
    assert "does not compile" in broken.detail and "undefinedThing" in broken.detail
    assert generated.repair_rounds == 1
    assert [k.node_id for k in generated.kept] == [".::TestReserveWaitsForTheNextToken"]
    assert generated.kept[0].lines_gained > 0
    assert generated.files == ["bucket_mendflow_test.go"]
    assert result.outcome is PipelineOutcome.MERGED, (result.outcome, result.regression)
    assert result.b2 is not None and result.b2.status is BuildStatus.PASSED
    assert result.b1.coverage is not None and result.b2.coverage is not None
    assert result.b2.coverage.line_pct > result.b1.coverage.line_pct
    print(f"go coverage: {result.b1.coverage.line_pct} -> {result.b2.coverage.line_pct}")


@needs_node
def test_the_typescript_loop_writes_a_vitest_file_where_the_tests_live_and_merges(
    make_repo: RepoFactory, llm_env: LLMServer
) -> None:
    plan(llm_env, "src/invoice.ts::formatTotals", "formatTotals lists the taxed categories")
    llm_env.reply({"files": [{"path": "tests/invoice.mendflow.test.ts", "content": TS_TEST}]})
    result = self_healing_pipeline(repo=str(make_repo(node.example_files(), name="invoice-llm")), branch="main")
    generated = result.generated
    assert generated is not None and generated.generator == "llm", generated
    assert generated.files == ["tests/invoice.mendflow.test.ts"], generated
    assert [k.node_id for k in generated.kept] == ["tests/invoice.mendflow.test.ts"]
    assert result.outcome is PipelineOutcome.MERGED, (result.outcome, result.regression)
    assert result.b1.coverage is not None and result.b2 is not None and result.b2.coverage is not None
    assert result.b2.coverage.line_pct > result.b1.coverage.line_pct
    print(f"ts coverage: {result.b1.coverage.line_pct} -> {result.b2.coverage.line_pct}")


@needs_rust
def test_the_rust_loop_writes_an_integration_test_of_the_crate_and_merges(
    make_repo: RepoFactory, llm_env: LLMServer
) -> None:
    plan(llm_env, "src/lib.rs::round_to", "round_to rounds halves up")
    llm_env.reply({"files": [{"path": "tests/lib_mendflow.rs", "content": RUST_TEST}]})
    result = self_healing_pipeline(repo=str(make_repo(rust.example_files(), name="duration-llm")), branch="main")
    generated = result.generated
    assert generated is not None and generated.generator == "llm", generated
    assert sorted(k.node_id for k in generated.kept) == [
        "tests/lib_mendflow.rs::parse_refuses_a_number_without_a_unit",
        "tests/lib_mendflow.rs::round_to_rounds_halves_up_and_keeps_a_zero_step",
    ], generated
    assert result.outcome is PipelineOutcome.MERGED, (result.outcome, result.regression)
    assert result.b1.coverage is not None and result.b2 is not None and result.b2.coverage is not None
    assert result.b2.coverage.line_pct > result.b1.coverage.line_pct
    print(f"rust coverage: {result.b1.coverage.line_pct} -> {result.b2.coverage.line_pct}")


@needs_java
def test_the_java_loop_refuses_a_write_outside_its_class_repairs_a_compile_error_and_merges(
    make_repo: RepoFactory, llm_env: LLMServer
) -> None:
    plan(llm_env, "src/main/java/org/example/isbn/Isbn.java::Isbn.toIsbn10", "toIsbn10 converts and refuses 979")
    llm_env.reply(
        {
            "files": [
                {"path": "src/main/java/org/example/isbn/Isbn.java", "content": "package org.example.isbn;\n"},
                {"path": JAVA_TEST_FILE, "content": JAVA_BROKEN},
            ]
        }
    )
    llm_env.reply({"files": [{"path": JAVA_TEST_FILE, "content": JAVA_TEST}]})
    files = {k: v for k, v in tree_files(JAVA_EXAMPLE).items() if not k.startswith("target/")}
    result = self_healing_pipeline(repo=str(make_repo(files, name="isbn-llm")), branch="main")
    generated = result.generated
    assert generated is not None and generated.generator == "llm", generated
    reasons = {(d.node_id, d.reason) for d in generated.dropped}
    assert ("src/main/java/org/example/isbn/Isbn.java", DropReason.OUTSIDE_TESTS_DIR) in reasons
    assert (JAVA_TEST_FILE, DropReason.UNPARSABLE) in reasons, generated.dropped
    broken = next(d for d in generated.dropped if d.reason is DropReason.UNPARSABLE)
    assert "does not compile" in broken.detail and "undefinedThing" in broken.detail, broken.detail
    assert generated.repair_rounds == 1
    assert sorted(k.node_id for k in generated.kept) == [
        f"{JAVA_TEST_FILE}::{m}"
        for m in (
            "parseRefusesNull",
            "prefixOfAnIsbn10Is978",
            "toIsbn10DropsThe978PrefixAndRecomputesTheCheckDigit",
            "toIsbn10RefusesA979Isbn",
        )
    ], generated
    assert generated.files == [JAVA_TEST_FILE]
    assert result.outcome is PipelineOutcome.MERGED, (result.outcome, result.regression)
    assert result.b1.coverage is not None and result.b2 is not None and result.b2.coverage is not None
    assert result.b2.status is BuildStatus.PASSED and result.b2.tests.total == 9
    assert result.b2.coverage.line_pct > result.b1.coverage.line_pct
    print(f"java coverage: {result.b1.coverage.line_pct} -> {result.b2.coverage.line_pct}")
