"""Each coverage importer on the real output of the real tool (Go's coverprofile, Node's LCOV, coverage.py's
Cobertura XML, JaCoCo's XML), read into the one Coverage contract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mendflow_runner import coverage_formats
from mendflow_runner.coverage_report import to_report

from mendflow.contracts import Coverage, CoverageFormat
from tests.fixtures.cache import build_cache
from tests.images.mendflow_go.helpers import EXAMPLE

# Maven's local repository, kept between runs like the rest of mendflow's heavy downloads (.ci/run caches it).
MAVEN_REPO = build_cache() / "m2"


def _run(argv: list[str], cwd: Path, **env: str) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env={**os.environ, **env}, timeout=600)


# --- Go -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def go_profile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    if shutil.which("go") is None:
        pytest.skip("needs the Go toolchain")
    root = tmp_path_factory.mktemp("go") / "repo"
    shutil.copytree(EXAMPLE, root)
    cache = {"GOCACHE": str(root.parent / "build"), "GOFLAGS": "-modcacherw", "GOPROXY": "off"}
    _run(["go", "test", "-covermode=atomic", "-coverprofile=cover.out", "./..."], root, **cache)
    funcs = subprocess.run(
        ["go", "tool", "cover", "-func=cover.out"], cwd=root, check=True, capture_output=True, text=True,
        env={**os.environ, **cache},
    ).stdout  # fmt: skip
    return root, (root / "cover.out").read_text(), funcs


def test_go_lines_are_the_code_lines_of_each_block(go_profile: tuple[Path, str, str]) -> None:
    root, profile, funcs = go_profile
    cov = Coverage.model_validate(coverage_formats.from_go(profile, funcs, {"example.com/ratelimit": "."}, root))
    limit = cov.file("limit.go")
    assert limit is not None
    source = (root / "limit.go").read_text().splitlines()
    unknown_unit = source.index('\t\treturn Limit{}, fmt.Errorf("%w: unit %q", ErrBadLimit, unit)') + 1
    assert unknown_unit in limit.missing_lines  # the example's tests never give an unknown unit
    assert all(source[n - 1].strip() not in ("", "}") for n in limit.missing_lines)


def test_go_functions_carry_their_receiver_and_span(go_profile: tuple[Path, str, str]) -> None:
    root, profile, funcs = go_profile
    cov = Coverage.model_validate(coverage_formats.from_go(profile, funcs, {"example.com/ratelimit": "."}, root))
    bucket = cov.file("bucket.go")
    assert bucket is not None
    names = [s.name for s in bucket.symbols]
    assert names == ["NewBucket", "Bucket.refill", "Bucket.Allow", "Bucket.Reserve", "Bucket.Tokens"]
    source = (root / "bucket.go").read_text().splitlines()
    reserve = bucket.symbols[3]
    assert source[reserve.start_line - 1].startswith("func (b *Bucket) Reserve()")  # type: ignore[operator]
    assert source[reserve.end_line - 1] == "}"  # type: ignore[operator]


def test_go_has_no_branch_data_and_says_so(go_profile: tuple[Path, str, str]) -> None:
    root, profile, funcs = go_profile
    cov = Coverage.model_validate(coverage_formats.from_go(profile, funcs, {"example.com/ratelimit": "."}, root))
    assert (cov.format, cov.branch_data, cov.branch_pct, cov.num_branches) == (CoverageFormat.GO, False, None, 0)


def test_go_files_of_other_modules_are_dropped(go_profile: tuple[Path, str, str]) -> None:
    root, profile, funcs = go_profile
    assert coverage_formats.from_go(profile, funcs, {"example.com/other": "."}, root)["files"] == []


def test_a_file_that_is_no_coverprofile_is_refused() -> None:
    with pytest.raises(coverage_formats.CoverageFormatError, match="mode:"):
        coverage_formats.from_go("hello\n", "", {}, Path("."))


# --- LCOV from Node's own test runner ---------------------------------------------------------------------------

SIGN_JS = """\
export function sign(x) {
  if (x < 0) {
    return "negative";
  }
  return "non-negative";
}

export function unused(a) {
  return a * 2;
}
"""
SIGN_TEST_JS = """\
import { test } from "node:test";
import assert from "node:assert";
import { sign } from "./sign.mjs";

test("positive", () => {
  assert.strictEqual(sign(3), "non-negative");
});
"""


@pytest.fixture(scope="module")
def lcov(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if shutil.which("node") is None:
        pytest.skip("needs Node.js")
    root = tmp_path_factory.mktemp("node")
    (root / "sign.mjs").write_text(SIGN_JS)
    (root / "sign.test.mjs").write_text(SIGN_TEST_JS)
    argv = ["node", "--test", "--experimental-test-coverage", "--test-reporter=lcov"]
    _run([*argv, "--test-reporter-destination=lcov.info", "sign.test.mjs"], root)
    return root, (root / "lcov.info").read_text()


def test_lcov_lines_branches_and_functions(lcov: tuple[Path, str]) -> None:
    root, text = lcov
    cov = Coverage.model_validate(coverage_formats.from_lcov(text, root))
    sign = cov.file("sign.mjs")
    assert sign is not None
    assert sign.missing_lines == [3, 4, 9, 10]
    assert (sign.num_branches, sign.missing_branches) == (3, [(2, 0)])  # `if (x < 0)` never taken
    assert [(s.name, s.start_line, s.end_line, s.line_pct) for s in sign.symbols] == [
        ("sign", 1, 7, 71.43),
        ("unused", 8, 10, 33.33),
    ]
    assert (cov.format, cov.branch_data) == (CoverageFormat.LCOV, True)


def test_lcov_totals_match_the_tools_own_counts(lcov: tuple[Path, str]) -> None:
    root, text = lcov
    cov = coverage_formats.from_lcov(text, root)
    lf = sum(int(line[3:]) for line in text.splitlines() if line.startswith("LF:"))
    lh = sum(int(line[3:]) for line in text.splitlines() if line.startswith("LH:"))
    assert (cov["statements"], cov["covered_lines"]) == (lf, lh)


def test_lcov_files_outside_the_repository_are_dropped(lcov: tuple[Path, str], tmp_path: Path) -> None:
    _, text = lcov
    absolute = text.replace("SF:sign.mjs", "SF:/usr/lib/node/sign.mjs").replace("SF:sign.test.mjs", "SF:../x.mjs")
    assert coverage_formats.from_lcov(absolute, tmp_path)["files"] == []


NEGATIVE_TEST_JS = """\
import { test } from "node:test";
import assert from "node:assert";
import { sign } from "./sign.mjs";

test("negative", () => {
  assert.strictEqual(sign(-3), "negative");
});
"""


def test_two_runs_tracefiles_one_after_the_other_read_as_their_union(lcov: tuple[Path, str]) -> None:
    """A test script's second suite, measured apart (pino's `npm run borp && jest test/jest`): each line and
    function once, covered where either run covered it."""
    root, first = lcov
    (root / "negative.test.mjs").write_text(NEGATIVE_TEST_JS)
    argv = ["node", "--test", "--experimental-test-coverage", "--test-reporter=lcov"]
    _run([*argv, "--test-reporter-destination=second.info", "negative.test.mjs"], root)
    cov = Coverage.model_validate(coverage_formats.from_lcov(first + (root / "second.info").read_text(), root))
    sign = cov.file("sign.mjs")
    assert sign is not None
    assert sign.missing_lines == [9, 10]
    assert [(s.name, s.line_pct) for s in sign.symbols] == [("sign", 100.0), ("unused", 33.33)]


def test_a_branch_recorded_twice_counts_once(lcov: tuple[Path, str]) -> None:
    root, text = lcov
    sign = Coverage.model_validate(coverage_formats.from_lcov(text + text, root)).file("sign.mjs")
    assert sign is not None
    assert (sign.num_branches, sign.missing_branches) == (3, [(2, 0)])


def test_an_lcov_tracefile_without_a_file_record_is_no_coverage(tmp_path: Path) -> None:
    """c8's report of processes it measured no file of (tap 18's own, npm's): not 100 % of nothing."""
    for text in ("", "TN:\n"):
        with pytest.raises(coverage_formats.NoCoverageError, match="no SF record"):
            coverage_formats.from_lcov(text, tmp_path)


# --- Cobertura from coverage.py -------------------------------------------------------------------------------

SIGN_PY = """\
def sign(x):
    if x < 0:
        return "negative"
    return "non-negative"


def unused(a):
    return a * 2
"""


def test_cobertura_agrees_with_coverage_pys_own_json(tmp_path: Path) -> None:
    (tmp_path / "sign.py").write_text(SIGN_PY)
    (tmp_path / "test_sign.py").write_text("from sign import sign\n\n\ndef test_positive():\n    assert sign(3)\n")
    python = [sys.executable, "-m"]
    _run([*python, "coverage", "run", "--branch", "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
    _run([*python, "coverage", "xml", "-o", "coverage.xml"], tmp_path)
    _run([*python, "coverage", "json", "-o", "coverage.json"], tmp_path)
    cobertura = Coverage.model_validate(
        coverage_formats.from_cobertura((tmp_path / "coverage.xml").read_text(), tmp_path)
    )
    native = Coverage.model_validate(to_report(json.loads((tmp_path / "coverage.json").read_text()), tmp_path))
    for path in ("sign.py", "test_sign.py"):
        ours, theirs = cobertura.file(path), native.file(path)
        assert ours is not None and theirs is not None
        assert (ours.statements, ours.missing_lines) == (theirs.statements, theirs.missing_lines)
        assert ours.num_branches == theirs.num_branches
        assert len(ours.missing_branches) == len(theirs.missing_branches)
    assert cobertura.format is CoverageFormat.COBERTURA


def test_xml_that_is_not_cobertura_is_refused(tmp_path: Path) -> None:
    with pytest.raises(coverage_formats.CoverageFormatError, match="root element <report>"):
        coverage_formats.from_cobertura("<report/>", tmp_path)
    with pytest.raises(coverage_formats.CoverageFormatError, match="well-formed"):
        coverage_formats.from_cobertura("<coverage>", tmp_path)


# --- JaCoCo from Maven ------------------------------------------------------------------------------------------

POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId>
  <artifactId>sign</artifactId>
  <version>0.1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version></plugin>
      <plugin>
        <groupId>org.jacoco</groupId><artifactId>jacoco-maven-plugin</artifactId><version>0.8.15</version>
        <executions>
          <execution><goals><goal>prepare-agent</goal></goals></execution>
          <execution><id>report</id><phase>test</phase><goals><goal>report</goal></goals></execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"""
SIGN_JAVA = """\
package demo;

public final class Sign {
    private Sign() {}

    public static String of(int x) {
        if (x < 0) {
            return "negative";
        }
        return "non-negative";
    }

    public static int twice(int a) {
        return a * 2;
    }
}
"""
SIGN_TEST_JAVA = """\
package demo;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class SignTest {
    @Test
    public void positive() {
        assertEquals("non-negative", Sign.of(3));
    }
}
"""
JAVA_SOURCES = "src/main/java"


@pytest.fixture(scope="module")
def jacoco(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if shutil.which("mvn") is None:
        pytest.skip("needs Maven")
    root = tmp_path_factory.mktemp("java")
    for path, text in {
        "pom.xml": POM,
        f"{JAVA_SOURCES}/demo/Sign.java": SIGN_JAVA,
        "src/test/java/demo/SignTest.java": SIGN_TEST_JAVA,
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    _run(["mvn", "-q", "-B", f"-Dmaven.repo.local={MAVEN_REPO}", "test"], root)
    return root, (root / "target" / "site" / "jacoco" / "jacoco.xml").read_text()


def test_jacoco_lines_branches_and_methods(jacoco: tuple[Path, str]) -> None:
    root, text = jacoco
    cov = Coverage.model_validate(coverage_formats.from_jacoco(text, root, [JAVA_SOURCES]))
    sign = cov.file(f"{JAVA_SOURCES}/demo/Sign.java")
    assert sign is not None
    source = SIGN_JAVA.splitlines()
    assert [source[n - 1].strip() for n in sign.missing_lines] == ['return "negative";', "return a * 2;"]
    assert (sign.num_branches, len(sign.missing_branches)) == (2, 1)
    assert [(s.name, s.line_pct) for s in sign.symbols] == [("Sign.of", 66.67), ("Sign.twice", 0.0)]
    assert (cov.format, cov.branch_data) == (CoverageFormat.JACOCO, True)


def test_jacoco_totals_match_its_own_line_and_branch_counters(jacoco: tuple[Path, str]) -> None:
    root, text = jacoco
    cov = coverage_formats.from_jacoco(text, root, [JAVA_SOURCES])
    counters = {c.get("type"): c for c in ET.fromstring(text).findall("counter")}
    lines, branches = counters["LINE"], counters["BRANCH"]
    assert cov["covered_lines"] == int(lines.get("covered", "")) and cov["statements"] == int(
        lines.get("covered", "")
    ) + int(lines.get("missed", ""))
    assert cov["covered_branches"] == int(branches.get("covered", ""))


def test_jacoco_sources_outside_the_named_directories_are_dropped(jacoco: tuple[Path, str]) -> None:
    root, text = jacoco
    assert coverage_formats.from_jacoco(text, root, ["src/other"])["files"] == []
