"""The Node runner on real projects with real Node, npm, TypeScript, eslint, vitest, jest, mocha and the npm
registry: statuses, ids, coverage."""

from __future__ import annotations

import json
import shutil
import socketserver
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from mendflow_node.installed import KEPT_DIR
from mendflow_node.v8 import own_scripts
from mendflow_runner.proc import EGRESS_SOCKET

from mendflow.contracts import BuildReport, BuildStatus, CoverageFormat, FailReason, FailureKind
from mendflow.jobcode import copy_package
from tests.fixtures.repos import RepoFactory, commit_files
from tests.images.mendflow_node.helpers import (
    EXAMPLE,
    LOCKS,
    USES_IS_NUMBER,
    example_files,
    package_json,
    run_node_runner,
)
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js and npm")

Files = dict[str, str | bytes | None]


def _build(make_repo: RepoFactory, tmp_path: Path, cache: Path, files: Files, *args: str) -> BuildReport:
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    return BuildReport.model_validate(run_node_runner(source, tmp_path / "out", cache, *args))


# -- the TypeScript example: npm ci, tsc, eslint, vitest ----------------------------------------------------


def test_the_example_passes_with_its_tests_and_coverage(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, example_files())
    assert (report.status, report.tests.passed, report.tests.total) == (BuildStatus.PASSED, 6, 6)
    assert report.test_command[0].endswith("node_modules/.bin/vitest") and report.test_command[1] == "run"
    assert report.coverage is not None and 0 < report.coverage.line_pct < 100
    assert (report.coverage.format, report.coverage.branch_data) == (CoverageFormat.LCOV, True)


def test_coverage_names_the_functions_no_test_calls(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    report = _build(make_repo, tmp_path, node_cache, example_files())
    assert report.coverage is not None
    invoice = report.coverage.file("src/invoice.ts")
    assert invoice is not None
    untested = next(s for s in invoice.symbols if s.name == "formatTotals")
    assert untested.line_pct == 0.0 and untested.missing_lines


FAILING = """\
import { describe, expect, it } from "vitest";

import { parseAmount } from "../src/money.js";

describe("amounts", () => {
  it("are cents", () => {
    expect(parseAmount("1.50")).toBe(15);
  });
});
"""


def test_a_failing_test_is_its_file_and_full_name_with_the_line_that_failed(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"tests/wrong.test.ts": FAILING}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.failed_tests == ["tests/wrong.test.ts::amounts are cents"]
    failure = report.failures[0]
    assert (failure.kind, failure.exception, failure.location) == (
        FailureKind.FAILED,
        "AssertionError",
        "tests/wrong.test.ts:7",
    )
    assert failure.message.startswith("expected 150 to be 15")
    assert report.coverage is not None  # written although a test failed


def test_select_runs_exactly_the_named_test(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    files = example_files(**{"tests/wrong.test.ts": FAILING})
    report = _build(
        make_repo,
        tmp_path,
        node_cache,
        files,
        "--select",
        '["tests/money.test.ts::parseAmount reads whole and fractional amounts as cents"]',
    )
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 1, 0)


def test_a_test_file_that_cannot_load_is_an_error_of_that_file(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # Type-checks (tsc runs first), fails as it loads.
    broken = 'import { parseAmount } from "../src/money.js";\n\n'
    broken += 'if (parseAmount("1") === 100) throw new Error("fixture missing.js");\n'
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"tests/broken.test.ts": broken}))
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["tests/broken.test.ts"])
    assert report.failures[0].kind is FailureKind.ERROR and "missing.js" in report.failures[0].message


def test_a_type_error_fails_the_build_in_the_compilers_words(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    wrong = 'import { parseAmount } from "./money.js";\n\nexport const cents: string = parseAmount("1");\n'
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"src/wrong.ts": wrong}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None and "src/wrong.ts:3:14 TS2322" in report.error_reason


def test_a_type_error_leaves_no_result_of_the_tests_that_ran_beside_the_type_check(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    wrong = 'import { parseAmount } from "./money.js";\n\nexport const cents: string = parseAmount("1");\n'
    fails = 'import { it } from "vitest";\n\nit("fails", () => {\n  throw new Error("no");\n});\n'
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"src/wrong.ts": wrong, "tests/f.test.ts": fails}))
    assert (report.fail_reason, report.failed_tests, report.tests.total, report.coverage) == (
        FailReason.BUILD,
        [],
        0,
        None,
    )


def test_a_lint_only_job_of_a_type_error_fails_its_build_and_keeps_its_lint_findings(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    wrong = 'import { parseAmount } from "./money.js";\n\nexport const cents: string = parseAmount("1");\n'
    unused = "export function total(a: number): number {\n  const unused = 1;\n  return a;\n}\n"
    files = example_files(**{"src/wrong.ts": wrong, "src/unused.ts": unused})
    report = _build(make_repo, tmp_path, node_cache, files, "--lint-only")
    assert (report.fail_reason, [line.split(" ", 2)[1] for line in report.lint_errors]) == (
        FailReason.BUILD,
        ["@typescript-eslint/no-unused-vars"],
    )


def test_an_eslint_error_fails_lint_with_its_file_and_rule(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    unused = "export function total(a: number): number {\n  const unused = 1;\n  return a;\n}\n"
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"src/unused.ts": unused}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    assert [line.split(" ", 2)[:2] for line in report.lint_errors] == [
        ["src/unused.ts:2:9", "@typescript-eslint/no-unused-vars"]
    ]


def test_a_standard_finding_fails_lint_with_its_file_and_rule(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # safe-buffer 5.2.1's `test: standard && tape`: the tests run apart, standard in the lint step.
    manifest = {"name": "demo", "version": "1.0.0", "scripts": {"test": "standard && node --test"}}
    files = {
        "package.json": json.dumps({**manifest, "devDependencies": {"standard": "17.1.2"}}),
        "index.js": "const unused = 1\nmodule.exports = 2\n",
        "index.test.js": "require('node:test')('adds', () => {})\n",
    }
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason, report.tests.passed) == (BuildStatus.FAILED, FailReason.LINT, 1)
    assert report.lint_errors == ["index.js:1:7 no-unused-vars 'unused' is assigned a value but never used."]


def test_an_xo_finding_fails_lint_with_its_file_and_rule(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    manifest = {"name": "demo", "version": "1.0.0", "type": "module", "scripts": {"test": "xo && node --test"}}
    files = {
        "package.json": json.dumps({**manifest, "devDependencies": {"xo": "2.0.2"}}),
        "index.js": "const unused = 1;\nexport const two = 2;\n",
        "index.test.js": "import test from 'node:test';\n\ntest('adds', () => {\n\t// Nothing to check.\n});\n",
    }
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.LINT)
    assert [line.split(" ", 2)[:2] for line in report.lint_errors] == [["index.js:1:7", "no-unused-vars"]]


def test_a_lockfile_out_of_step_with_package_json_is_a_deterministic_dependency_error(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    manifest = json.loads(str(example_files()["package.json"]))
    manifest["devDependencies"]["is-number"] = "7.0.0"
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"package.json": json.dumps(manifest)}))
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    assert report.transient is False and "npm ci" in (report.error_reason or "")


def test_a_version_the_registry_lacks_is_a_dependency_error_in_npm_s_words(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """side-channel's `typescript@next`: the reason is npm's error, not its pointer to a debug log."""
    files = {"package.json": package_json("node --test", **{"is-number": "99.0.0"}), "index.js": ""}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    assert "ETARGET" in (report.error_reason or "") and "is-number@99.0.0" in (report.error_reason or "")
    assert "complete log" not in (report.error_reason or "")


def test_a_failing_prepare_script_is_said_with_what_it_printed(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """ret 0.5.0's `prepare: tsc` as published: the reason is the script's last words, not the job's directory."""
    manifest = json.loads(package_json("node --test"))
    manifest["scripts"]["prepare"] = "node -e \"console.error('no tsconfig here'); process.exit(1)\""
    report = _build(make_repo, tmp_path, node_cache, {"package.json": json.dumps(manifest), "index.js": ""})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    reason = report.error_reason or ""
    assert reason.endswith("command failed; command sh -c " + manifest["scripts"]["prepare"] + "; no tsconfig here")
    assert "path /" not in reason


def test_a_prepare_script_that_dies_of_an_error_is_said_with_the_error(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """fast-deep-equal 3.1.3's `prepublish: npm run build` runs a build.js its tarball lacks: the error, not the
    ``Node.js v20…`` banner Node prints after it."""
    manifest = json.loads(package_json("node --test"))
    manifest["scripts"]["prepare"] = "node -e \"throw new Error('no build here')\""
    report = _build(make_repo, tmp_path, node_cache, {"package.json": json.dumps(manifest), "index.js": ""})
    assert (report.error_reason or "").endswith("; Error: no build here"), report.error_reason


NATIVE_ADDON: Files = {
    "package.json": package_json("node --test"),
    "binding.gyp": '{"targets": [{"target_name": "addon", "sources": ["addon.c"]}]}',
    "addon.c": """\
#include <node_api.h>
static napi_value Init(napi_env env, napi_value exports) {
  napi_value answer;
  napi_create_int32(env, 42, &answer);
  return answer;
}
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
""",
    "addon.test.mjs": """\
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

test("the addon answers", () => {
  assert.equal(createRequire(import.meta.url)("./build/Release/addon.node"), 42);
});
""",
}


def test_a_native_addon_builds_against_the_running_nodes_headers(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """iconv-lite 0.7.3's dev dependency iconv 3.0.1: node-gyp would download Node's headers from nodejs.org."""
    report = _build(make_repo, tmp_path, node_cache, NATIVE_ADDON)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason


def test_a_repository_without_package_json_is_bad_input(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, {"index.js": "module.exports = 1;\n"})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert "no package.json" in (report.error_reason or "")


def test_a_bun_project_is_said_unsupported(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    report = _build(make_repo, tmp_path, node_cache, {"package.json": package_json("bun test"), "bun.lock": "{}"})
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert "bun" in (report.error_reason or "")


# -- node --test: no dependencies at all ------------------------------------------------------------------

LIB = "export function add(a, b) {\n  return a + b;\n}\n\nexport function sub(a, b) {\n  return a - b;\n}\n"
NODE_TESTS = """\
import { describe, it } from "node:test";
import assert from "node:assert/strict";

import { add } from "../lib.mjs";

describe("add", () => {
  it("adds", () => {
    assert.equal(add(1, 2), 3);
  });
  it("adds wrongly", () => {
    assert.equal(add(1, 2), 4);
  });
});
"""


def _node_project(**files: str) -> Files:
    return {"package.json": package_json("node --test test/"), "lib.mjs": LIB, "test/add.test.mjs": NODE_TESTS, **files}


def test_node_test_reports_each_test_by_its_suite_and_name(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, _node_project())
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/add.test.mjs::add adds wrongly"])
    assert (report.tests.passed, report.tests.failed) == (1, 1)
    failure = report.failures[0]
    assert (failure.exception, failure.location) == ("AssertionError", "test/add.test.mjs:11")


COLOURLESS_TEST = """\
import { test } from "node:test";
import assert from "node:assert/strict";
import supportsColor from "supports-color";

test("a pipe has no colours", () => {
  assert.equal(supportsColor, false);
});
"""


def test_a_test_sees_no_colour_as_old_supports_color_reads_it(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # supports-color 2 (chalk 1's) takes any FORCE_COLOR, "0" too, for colour: node-tap 2 then printed no TAP
    manifest = package_json("node --test test/", **{"supports-color": "2.0.0"})
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, "test/c.test.mjs": COLOURLESS_TEST})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.failures


def test_node_tests_own_reporters_give_way_to_mendflows(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """Node refuses more reporters than destinations: `--test-reporter=dot` beside mendflow's three failed the run."""
    files = _node_project(**{"package.json": package_json("node --test --test-reporter=dot test/")})
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/add.test.mjs::add adds wrongly"])


PASSING_NODE_TEST = NODE_TESTS.replace("add(1, 2), 4", "add(1, 2), 3")


def test_the_node_a_package_asks_for_and_the_image_lacks_is_said_with_the_release_that_ran(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    manifest = json.loads(package_json("node --test test/")) | {"engines": {"node": ">=99"}}
    files = _node_project(**{"test/add.test.mjs": PASSING_NODE_TEST, ".nvmrc": "v99\n"})
    files["package.json"] = json.dumps(manifest)
    report = _build(make_repo, tmp_path, node_cache, files)
    node = subprocess.run(["node", "-v"], capture_output=True, text=True, check=True).stdout.strip().lstrip("v")
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert [line for line in report.lint_advisory if "Node" in line] == [
        f".nvmrc:0:0 Node 99 is pinned: built and tested with Node {node} (none is downloaded)",
        f"package.json:0:0 engines.node >=99 excludes Node {node}, which built and tested it",
    ]


def test_what_the_test_script_chains_after_the_runner_fails_the_tests_when_it_fails(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # process-warning and fastify-plugin as published: `npm run test:unit && npm run test:typescript`, and tsd fails.
    files = _node_project(**{"test/add.test.mjs": PASSING_NODE_TEST, "check.mjs": "process.exit(3)\n"})
    files["package.json"] = package_json("node --test test/ && node check.mjs")
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason, report.tests.passed) == (BuildStatus.FAILED, FailReason.TESTS, 2)
    assert report.error_reason is not None and report.error_reason.startswith("`node check.mjs`, which the test script")


def test_a_linter_the_test_script_chains_after_the_runner_is_left_to_the_lint_step(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files = _node_project(**{"test/add.test.mjs": PASSING_NODE_TEST})
    files["package.json"] = package_json("node --test test/ && eslint .")  # no eslint installed: it would fail
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason


def _hooked(test: str, **hooks: str) -> Files:
    """The passing node:test project whose test script is ``test``, with npm's hooks around it."""
    runner = SPEC_RUNNER.replace("test/add.test.js", "test/")  # a script mendflow runs as it is
    files = _node_project(**{"test/add.test.mjs": PASSING_NODE_TEST, "run.cjs": runner})
    manifest = json.loads(package_json(test))
    manifest["scripts"] |= hooks
    return {**files, "package.json": json.dumps(manifest)}


def test_a_lint_the_pretest_script_runs_is_left_to_the_lint_step(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # minimist as published: `pretest: npm run lint`; no eslint is installed here, so npm's pretest would fail.
    files = _hooked("node run.cjs", pretest="npm run lint", lint="eslint .")
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason


@pytest.mark.parametrize(
    ("test", "hooks"),
    [("node --test test/", {"pretest": "node build.mjs"}), ("node build.mjs && node --test test/", {})],
    ids=["pretest", "chained before the runner"],
)
def test_what_the_test_command_builds_first_is_there_for_the_tests(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path, test: str, hooks: dict[str, str]
) -> None:
    built = 'import { test } from "node:test";\nimport { readFileSync } from "node:fs";\n'
    built += 'test("was built", () => { readFileSync("built.txt"); });\n'
    files = _hooked(test, **hooks)
    files |= {"build.mjs": 'import { writeFileSync } from "node:fs";\nwriteFileSync("built.txt", "yes");\n'}
    files |= {"test/built.test.mjs": built}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), report.error_reason


def test_a_failing_pretest_script_fails_the_tests_in_its_words(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files = _hooked("node --test test/", pretest="node build.mjs") | {"build.mjs": "process.exit(4)\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason, report.tests.total) == (BuildStatus.FAILED, FailReason.TESTS, 0)
    assert report.error_reason is not None
    assert report.error_reason.startswith("`node build.mjs`, which the test script runs before the tests, exited 4")


def test_a_build_before_the_tests_missing_its_script_fails_in_its_words_not_as_missing_tests(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # js-yaml 5.5.0 as published: `npm run build && … node --test`, its support/build-dist.mjs left out
    files = _hooked("npm run build && node --test test/", build="node support/build-dist.mjs")
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.error_reason is not None
    assert report.error_reason.startswith("`npm run build`, which the test script runs before the tests, exited 1")


def test_node_test_coverage_comes_from_node_itself(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    report = _build(make_repo, tmp_path, node_cache, _node_project())
    assert report.coverage is not None
    lib = report.coverage.file("lib.mjs")
    assert lib is not None and lib.missing_lines == [6, 7]
    assert [f.path for f in report.coverage.files] == ["lib.mjs"]  # the test file it ran is not code under test


def test_node_test_measuring_only_its_test_files_has_no_coverage(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    alone = NODE_TESTS.replace('import { add } from "../lib.mjs";\n', "").replace("add(1, 2)", "1 + 2")
    report = _build(
        make_repo, tmp_path, node_cache, {"package.json": package_json("node --test test/"), "test/one.test.mjs": alone}
    )
    assert (report.tests.passed, report.tests.failed) == (1, 1)
    assert report.coverage is None  # not 100 % of nothing


def test_node_test_select_runs_the_named_test_only(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    report = _build(make_repo, tmp_path, node_cache, _node_project(), "--select", '["test/add.test.mjs::add adds"]')
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 1, 0)


def test_a_node_test_file_that_cannot_load_says_why(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    files = _node_project(**{"test/add.test.mjs": 'import { gone } from "../gone.mjs";\n'})
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/add.test.mjs"])
    assert "gone.mjs" in report.failures[0].traceback


def test_the_runner_placed_under_tmp_still_lends_node_its_reporter(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """The local launcher copies the runner into its base, which may be under /tmp, where each offline step's
    sandbox mounts a fresh /tmp."""
    placed = tmp_path / "runner"
    for package in ("mendflow_runner", "mendflow_node"):
        copy_package(package, placed)
    files = _node_project(**{"test/add.test.mjs": NODE_TESTS.replace("add(1, 2), 4", "add(1, 2), 3")})
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    report = BuildReport.model_validate(run_node_runner(source, tmp_path / "out", node_cache, PYTHONPATH=str(placed)))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason


def test_a_script_mendflow_cannot_read_is_judged_by_its_exit_code(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    check = 'console.log("2 of 5 checks failed");\nprocess.exit(3);\n'
    files = {"package.json": package_json("node check.js"), "check.js": check}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.error_reason is not None and "exited 3" in report.error_reason
    # What the script said (pino-std-serializers' borp prints to stdout), not npm's warnings.
    assert report.error_reason.endswith("2 of 5 checks failed"), report.error_reason
    assert any("judged by its exit code, with no counts" in line for line in report.lint_advisory)


NPM_QUIET = """\
const { spawnSync } = require("node:child_process");
const npm = spawnSync("npm", ["exec", "--", "node", "-e", "0"], { encoding: "utf8" });
process.stdout.write(npm.stderr);
process.exit(npm.status === 0 && npm.stderr === "" ? 0 : 1);
"""


def test_the_npm_an_npm_projects_tests_run_warns_of_nothing_mendflow_set(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """pnpm's store setting stays out of an npm project's jobs: `npm run` and `npm exec` warn of it, into what the
    tests print (thread-stream 3.1.0's `npx pkg` failure)."""
    files = {"package.json": package_json("node check.js"), "check.js": NPM_QUIET}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.status == BuildStatus.PASSED, report.error_reason


SPEC_SUITE = """\
const test = require("node:test");
const assert = require("node:assert");

test("adds", () => assert.strictEqual(1 + 1, 2));

test("fails with an error carrying properties", () => {
  throw Object.assign(new Error("lookup failed"), { code: "ENOTFOUND", hostname: "localhost" });
});
"""
# A runner mendflow does not read that prints node:test's spec report (borp, pino-std-serializers' runner).
SPEC_RUNNER = """\
const { spawnSync } = require("node:child_process");
const args = ["--test", "--test-reporter=spec", "test/add.test.js"];
process.exit(spawnSync(process.execPath, args, { stdio: "inherit" }).status);
"""


def test_a_script_printing_node_tests_spec_report_is_counted_and_names_its_failing_test(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files = {"package.json": package_json("node run.js"), "run.js": SPEC_RUNNER, "test/add.test.js": SPEC_SUITE}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.FAILED, 1, 1)
    assert report.error_reason is not None
    assert report.error_reason.endswith("fails with an error carrying properties: Error: lookup failed"), (
        report.error_reason
    )


def test_a_script_printing_line_reporters_report_is_counted_and_names_its_failing_test(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """@fastify/sensible 6.0.6's `borp --reporter=@jsumners/line-reporter`: 168 tests ran, and the report said
    none, the script judged by its exit code."""
    runner = SPEC_RUNNER.replace("--test-reporter=spec", "--test-reporter=@jsumners/line-reporter")
    manifest = json.loads(package_json("node run.js", **{"@jsumners/line-reporter": "1.0.1"}))
    files = {"package.json": json.dumps(manifest), "run.js": runner, "test/add.test.js": SPEC_SUITE}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.FAILED, 1, 1)
    assert report.error_reason is not None
    assert report.error_reason.endswith("test/add.test.js:6: Error: lookup failed"), report.error_reason


def test_a_script_that_dies_of_an_uncaught_error_is_failed_with_that_error(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """Node ends an uncaught error's stack with its version banner: the reason gives the error, not the banner."""
    check = 'console.error("loading fixtures");\nthrow new Error("EROFS: read-only file system, mkdir \'/x\'");\n'
    files = {"package.json": package_json("node check.js"), "check.js": check}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.error_reason is not None
    assert report.error_reason.endswith("Error: EROFS: read-only file system, mkdir '/x'"), report.error_reason


def test_a_posttest_that_fetches_a_package_offline_leaves_the_tests_to_judge(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """object-inspect's `posttest: npx aud --production`: npx asks for a package the offline step cannot fetch."""
    manifest = json.loads(package_json("tape test.js", tape="5.10.2"))
    manifest["scripts"]["posttest"] = "npx --yes mendflow-no-such-package-0"
    calc = "exports.add = (a, b) => a + b;\n"
    files = {"package.json": json.dumps(manifest), "calc.js": calc, "test.js": TAPE_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2), report.error_reason
    assert any("asked npm for a package offline" in line for line in report.lint_advisory), report.lint_advisory


TAPE_TESTS = """\
const test = require("tape");
const { add } = require("./calc.js");

test("adds", (t) => {
  t.equal(add(1, 2), 3);
  t.equal(add(2, 2), 4);
  t.end();
});
"""


@pytest.mark.parametrize("nyc", ["14.1.1", "10.3.2"])
def test_a_tape_suite_under_an_old_nyc_passes_with_its_tap_counts(
    nyc: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """fast-json-stable-stringify's (nyc 14) and minimist's (nyc 10) shape: their spawn-wrap writes shims under
    $HOME (nyc 10's ignores SPAWN_WRAP_SHIM_ROOT); tape prints TAP, whose closing counts (one per assertion) are
    the report's."""
    calc = "exports.add = (a, b) => a + b;\n"
    files = {"package.json": package_json("nyc tape test.js", tape="5.10.2", nyc=nyc), "calc.js": calc}
    source = snapshot(make_repo({**files, "test.js": TAPE_TESTS}), tmp_path / "src.tar.gz")
    # A home outside /tmp, as the local launcher's is: the tests' sandbox binds it read-only (/tmp is a fresh tmpfs).
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="mendflow-test-home-") as home:
        found = run_node_runner(source, tmp_path / "out", node_cache, HOME=home)
    report = BuildReport.model_validate(found)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert (report.tests.total, report.tests.passed, report.tests.failed) == (2, 2, 0)


@pytest.mark.parametrize(("tool", "version"), [("c8", "10.1.3"), ("nyc", "17.1.0")])
def test_a_tape_suite_gets_the_coverage_its_own_c8_or_nyc_measured(
    tool: str, version: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """@fastify/deepmerge's `c8 tape`, fastq's `nyc tape`: the script's tool measures, mendflow reads it as LCOV."""
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    manifest = package_json(f"{tool} tape test.js", tape="5.10.2", **{tool: version})
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, "calc.js": calc, "test.js": TAPE_TESTS})
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["calc.js"]
    calc_coverage = report.coverage.file("calc.js")
    assert calc_coverage is not None and calc_coverage.missing_lines == [3]


def test_a_suite_under_an_nyc_before_5_gets_the_coverage_it_reported_into_its_own_folder(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """fs-write-stream-atomic 1.0.10's `tap --coverage`: node-tap 2's nyc 3 knows no --report-dir."""
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    files = {"package.json": package_json("nyc tape test.js", tape="5.10.2", nyc="3.2.2"), "calc.js": calc}
    source = snapshot(make_repo({**files, "test.js": TAPE_TESTS}), tmp_path / "src.tar.gz")
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="mendflow-test-home-") as home:
        report = BuildReport.model_validate(run_node_runner(source, tmp_path / "out", node_cache, HOME=home))
    assert report.status is BuildStatus.PASSED, report.error_reason
    calc_coverage = report.coverage.file("calc.js") if report.coverage else None
    assert calc_coverage is not None and calc_coverage.missing_lines == [3]


def test_a_tape_suite_without_c8_or_nyc_gets_v8s_coverage(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """close-with-grace 2.1.0's `tape test/*.js | tap-dot`: no tool of the package's measures; V8 does."""
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    manifest = package_json("tape test.js", tape="5.10.2")
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, "calc.js": calc, "test.js": TAPE_TESTS})
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["calc.js"]
    calc_coverage = report.coverage.file("calc.js")
    assert calc_coverage is not None and calc_coverage.missing_lines == [3]


def test_a_tape_suite_piped_into_a_tap_reporter_is_judged_by_its_own_tap(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """tinysonic 2.0.1's `standard && tape test.js | tap-spec`: tap-spec's report holds no TAP to read."""
    manifest = package_json("tape test.js | tap-spec", tape="5.10.2", **{"tap-spec": "5.0.0"})
    calc = "exports.add = (a, b) => a - b;\n"
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, "calc.js": calc, "test.js": TAPE_TESTS})
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS), report.error_reason
    assert (report.tests.total, report.tests.failed) == (2, 2), report.lint_advisory
    assert report.failed_tests == ["test.js::adds"]


ADDS = """\
const test = require("node:test");
const assert = require("node:assert");
test("adds", () => assert.strictEqual(require("./calc.js").add(1, 2), 3));
"""
READS_MADE = """\
const test = require("node:test");
const assert = require("node:assert");
test("reads", () => assert.equal(require("node:fs").readFileSync("made.txt", "utf8"), "42\\n"));
"""


def test_a_tool_the_script_runs_from_the_kept_install_finds_its_own_package_json(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """@fastify/flash 6.0.5's `borp --coverage && rimraf secret-key`: rimraf 6 reads its package.json from the
    directory below the last node_modules of its real path."""
    manifest = package_json("node --test && rimraf made.txt", rimraf="6.1.4")
    files = {"package.json": manifest, "calc.js": "exports.add = (a, b) => a + b;\n", "calc.test.js": ADDS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason


def test_a_redirection_in_the_script_is_the_shells(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    """@fastify/flash 6.0.5's `secure-session > secret-key && borp`: its tests read the file so made."""
    manifest = package_json("node -p 40+2 > made.txt && node --test")
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, "made.test.js": READS_MADE})
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason


ADD_TEST = """\
const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../calc.js");

test("adds", () => assert.strictEqual(add(1, 2), 3));
"""
SUB_TAPE_TEST = """\
const test = require("tape");
const { sub } = require("../calc.js");

test("subtracts", (t) => {
  t.equal(sub(3, 2), 1);
  t.end();
});
"""
TWO_SUITES = {
    "calc.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n",
    "test/add.test.js": ADD_TEST,
    "test/sub.js": SUB_TAPE_TEST,
}


@pytest.mark.parametrize("tools", [{"c8": "10.1.3"}, {}], ids=["c8", "v8"])
def test_a_suite_the_script_runs_after_the_runner_is_measured_with_it(
    tools: dict[str, str], make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """pino 10.4.0's `npm run borp && jest test/jest`: the runner's coverage and the second suite's, as one, by
    the repository's c8 or from V8's data."""
    manifest = package_json("node --test test/add.test.js && tape test/sub.js", tape="5.10.2", **tools)
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, **TWO_SUITES})
    assert report.status is BuildStatus.PASSED, report.error_reason
    calc = report.coverage.file("calc.js") if report.coverage else None
    assert calc is not None and calc.missing_lines == []


def test_a_suite_after_the_runner_is_measured_with_it_when_the_script_runs_more_after_it(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """process-warning 5.1.1's jest, then tstyche: c8 reports the measured suite beside the command after it."""
    script = "node --test test/add.test.js && tape test/sub.js && node -e 'setTimeout(() => {}, 500)'"
    manifest = package_json(script, tape="5.10.2", c8="10.1.3")
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, **TWO_SUITES})
    calc = report.coverage.file("calc.js") if report.coverage else None
    assert calc is not None and calc.missing_lines == []


def test_a_suite_after_the_runner_that_cannot_be_measured_is_said(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # nyc's data of the suite after the runner is what the script leaves: V8's is not written for it
    manifest = package_json("node --test test/add.test.js && nyc tape test/sub.js", tape="5.10.2", nyc="17.1.0")
    report = _build(make_repo, tmp_path, node_cache, {"package.json": manifest, **TWO_SUITES})
    said = "coverage measures the runner's tests only: `nyc tape test/sub.js`, which the test script runs after them"
    assert any(said in line for line in report.lint_advisory), report.lint_advisory


def test_v8s_data_for_c8_keeps_the_packages_scripts_and_drops_its_dependencies(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "node_modules" / "dep").mkdir(parents=True)
    (package / "node_modules" / "dep" / "index.js").write_text("module.exports = 1;\n")
    (package / "calc.js").write_text('require("dep");\nexports.add = (a, b) => a + b;\n')
    v8 = tmp_path / "v8"
    subprocess.run(["node", "-e", 'require("./calc.js")'], cwd=package, env={"NODE_V8_COVERAGE": str(v8)}, check=True)
    assert own_scripts(v8, package)
    scripts = [s["url"] for f in v8.glob("*.json") for s in json.loads(f.read_text())["result"]]
    assert scripts == [(package / "calc.js").as_uri()]


def test_a_failing_tape_assertion_fails_the_build_and_is_counted(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    calc = "exports.add = (a, b) => a - b;\n"
    files = {"package.json": package_json("tape test.js", tape="5.10.2"), "calc.js": calc, "test.js": TAPE_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert (report.tests.total, report.tests.passed, report.tests.failed) == (2, 0, 2)


def test_a_runner_that_finds_no_test_files_is_no_tests(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # toad-cache 3.7.0 as published: `vitest`, and no test files in its tarball.
    files = example_files(**{"tests/invoice.test.ts": None, "tests/money.test.ts": None})
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert report.error_reason == "`vitest` found no test files: add tests or check its test paths"


def test_a_test_script_that_finds_no_test_files_is_named_by_its_command(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # @fastify/deepmerge 2.0.0 as published: `"test:unit": "tap"`, and no test files in its tarball.
    files = {"package.json": package_json("tap", tap="18.8.0"), "index.js": "module.exports = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert report.error_reason == "`npm run test` found no test files: add tests or check its test paths"


@pytest.mark.parametrize(
    ("script", "dev", "missing"),
    [
        # safe-stable-stringify 2.5.0 as published: no test.js in its tarball (was FAILED tests)
        ("tap test.js", {"tap": "15.2.3"}, "test.js"),
        # json-stringify-safe 5.0.1 as published: Node cannot load the file (was FAILED tests)
        ("node test.js", {}, "test.js"),
        # once 1.4.0 as published: no test/, so the shell passes the pattern on and tap 7 reads TAP from stdin
        ("tap test/*.js", {"tap": "7.1.2"}, "test/*.js"),
        # concat-stream 2.0.0 as published: no test/; tape 4 ran nothing, printed nothing and exited 0 (was PASSED)
        ("tape test/*.js test/server/*.js", {"tape": "4.17.0"}, "test/*.js, test/server/*.js"),
        # isarray 2.0.5 as published: no test.js; tape 2 ran nothing, printed nothing and exited 0 (was PASSED)
        ("tape test.js", {"tape": "2.13.4"}, "test.js"),
    ],
)
def test_a_script_naming_test_files_the_package_lacks_is_no_tests(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path, script: str, dev: dict[str, str], missing: str
) -> None:
    files = {"package.json": package_json(script, **dev), "index.js": "module.exports = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    said = f"`npm run test` names test files the package does not have: {missing}: add tests or check its test paths"
    assert report.error_reason == said


def test_the_shells_test_command_in_a_failing_script_names_no_test_file(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # dynamic-dedupe 0.3.0: `if [ -e $TRAVIS ]; then npm run test-all; else npm run test-main; fi`, test-all failing
    files = {"package.json": package_json("if [ -e index.js ]; then exit 3; fi"), "index.js": "module.exports = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert "names test files" not in (report.error_reason or "")


def test_a_script_running_a_runner_through_another_script_on_files_the_package_lacks_is_no_tests(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """base64-js 1.5.1 as published: `npm run lint && npm run unit`, unit's `tape test/*.js`, and no test/ (was
    PASSED)."""
    manifest = json.loads(package_json("npm run unit", tape="4.17.0"))
    manifest["scripts"]["unit"] = "tape test/*.js"
    files = {"package.json": json.dumps(manifest), "index.js": "exports.a = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS), report.error_reason


def test_a_failing_script_is_said_in_the_packages_paths(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    test = "require(require('path').join(__dirname, 'lib', 'missing.js'));\n"  # Node names the job's path
    files = {"package.json": package_json("node test.js"), "test.js": test}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert report.error_reason == "`npm run test` exited 1: Error: Cannot find module 'lib/missing.js'"


def test_a_failures_words_name_the_package_not_the_jobs_directory(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # @fastify/deepmerge 2.0.2's tsd: "The test file … does not exist in `<the job's directory>`".
    test = 'console.error("no types test in `" + process.cwd() + "`"); process.exit(1);\n'
    files = {"package.json": package_json("node test.js"), "test.js": test}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.error_reason == "`npm run test` exited 1: no types test in `.`"


def test_node_test_runs_the_files_a_glob_of_its_script_matches(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # Node 20's --test takes `test/*.test.js` as one file's name; npm's sh expands it first.
    test = "require('node:test')('adds', () => {})\n"
    files = {"package.json": package_json("node --test test/*.test.js"), "test/a.test.js": test, "test/b.test.js": test}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 2)


def test_a_script_run_as_it_is_leaves_its_linter_to_the_lint_step(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files = {"package.json": package_json("eslint . && node test.js"), "test.js": "process.exitCode = 0\n"}
    report = _build(make_repo, tmp_path, node_cache, files)  # no eslint installed: it would fail
    assert (report.status, report.test_command) == (BuildStatus.PASSED, ["sh", "-c", "node test.js"])


def test_ava_finding_no_test_files_is_no_tests(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    # yocto-queue 1.1.1 as published: `xo && ava && tsd`, and no test files in its tarball.
    files = {"package.json": package_json("ava", ava="3.15.0"), "index.js": "module.exports = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert report.error_reason == "`npm run test` found no test files: add tests or check its test paths"


# vary 1.1.2 as published: `mocha --reporter spec test/` (mocha 2.5.3), and no test/ in its tarball; node-dir 0.1.17:
# `mocha --reporter spec` (mocha 1.13.0, which knows no --reporter-options), and no test/ either.
@pytest.mark.parametrize(
    ("mocha", "script"), [("2.5.3", "mocha --reporter spec test/"), ("1.13.0", "mocha --reporter spec")]
)
def test_an_old_mocha_finding_no_test_path_is_no_tests(
    mocha: str, script: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files = {"package.json": package_json(script, mocha=mocha), "index.js": ""}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)


UVU_TESTS = (
    'const { test } = require("uvu");\nconst assert = require("uvu/assert");\nconst { add } = require("../calc");\n'
    'test("adds", () => assert.is(add(1, 1), 2));\ntest("adds again", () => assert.is(add(1, 2), 4));\n'
    'test.skip("later", () => {});\ntest.run();\n'
)


def test_uvus_counts_are_read(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    calc = "exports.add = (a, b) => a + b;\n"
    files = {"package.json": package_json("uvu test", uvu="0.5.6"), "calc.js": calc, "test/calc.js": UVU_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.TESTS)
    assert (report.tests.total, report.tests.passed, report.tests.failed, report.tests.skipped) == (3, 1, 1, 1)


def test_uvu_finding_no_tests_is_no_tests(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    # kleur 4.1.5 as published: `uvu -r esm -i utils -i xyz`, and no test folder in its tarball (was PASSED).
    files = {"package.json": package_json("uvu -i utils", uvu="0.5.6"), "calc.js": CALC}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)
    assert report.error_reason == "`npm run test` ran no tests at all"


def test_no_test_script_is_no_tests(make_repo: RepoFactory, tmp_path: Path, node_cache: Path) -> None:
    files = {"package.json": json.dumps({"name": "demo", "version": "1.0.0"}), "index.js": "module.exports = 1;\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.NO_TESTS)


# -- pnpm and yarn: each from the registry at the version the lockfile or packageManager asks for ---------------


@pytest.mark.parametrize("lockfile", ["pnpm-lock.yaml", "yarn.lock"])
def test_a_pnpm_or_yarn_lockfile_installs_frozen_with_its_manager(
    lockfile: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files: Files = {
        "package.json": package_json("node --test test/", **{"is-number": "7.0.0"}),
        lockfile: (LOCKS / lockfile).read_text(),
        "test/is.test.mjs": USES_IS_NUMBER,
    }
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason


class _CountingRefuser(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """An egress proxy that refuses every connection and counts them."""

    daemon_threads = True
    asked = 0


class _Refuse(socketserver.BaseRequestHandler):
    server: _CountingRefuser

    def handle(self) -> None:
        self.server.asked += 1
        self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


@pytest.fixture
def refusing_egress(tmp_path: Path) -> Iterator[_CountingRefuser]:
    server = _CountingRefuser(str(tmp_path / "egress.sock"), _Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the dependency phase's egress needs bubblewrap")
@pytest.mark.parametrize("lockfile", ["package-lock.json", "pnpm-lock.yaml", "yarn.lock"])
def test_a_warm_frozen_install_asks_the_registry_nothing(
    lockfile: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path, refusing_egress: _CountingRefuser
) -> None:
    """What a lockfile pins and the cache holds is what gets installed: no request per package through the
    egress proxy (npm otherwise asks again for every tarball, and for the pnpm or yarn it runs)."""
    files: Files = {
        "package.json": package_json("node --test test/", **{"is-number": "7.0.0"}),
        lockfile: (LOCKS / lockfile).read_text(),
        "test/is.test.mjs": USES_IS_NUMBER,
    }
    assert _build(make_repo, tmp_path / "warm", node_cache, files).status == BuildStatus.PASSED
    shutil.rmtree(node_cache / "node" / KEPT_DIR, ignore_errors=True)  # npm's own install, not the kept one
    source = snapshot(make_repo(files), tmp_path / "src.tar.gz")
    egress = str(refusing_egress.server_address)
    report = BuildReport.model_validate(
        run_node_runner(source, tmp_path / "out", node_cache, **{EGRESS_SOCKET: egress})
    )
    assert (report.status, refusing_egress.asked) == (BuildStatus.PASSED, 0), report.error_reason


def test_a_yarn_plug_n_play_project_is_said_unsupported(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files: Files = {"package.json": package_json("jest"), "yarn.lock": "__metadata:\n  version: 8\n"}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.BAD_INPUT)
    assert "nodeLinker: node-modules" in (report.error_reason or "")


# -- jest and mocha, installed from the registry without a lockfile (as a published package ships) -----------

CALC = """\
function div(a, b) {
  if (b === 0) {
    throw new Error("division by zero");
  }
  return a / b;
}
module.exports = { div };
"""
JEST_TESTS = """\
const { div } = require("../calc");

describe("div", () => {
  test("divides", () => {
    expect(div(6, 3)).toBe(2);
  });
  test("divides wrongly", () => {
    expect(div(6, 3)).toBe(3);
  });
});
"""


def test_jest_reports_its_tests_and_coverage_with_repository_paths(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files: Files = {
        "package.json": package_json("jest", jest="30.2.0"),
        "calc.js": CALC,
        "test/calc.test.js": JEST_TESTS,
    }
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/calc.test.js::div divides wrongly"])
    assert report.failures[0].location == "test/calc.test.js:8"
    assert report.coverage is not None
    calc = report.coverage.file("calc.js")
    assert calc is not None and calc.missing_lines == [3]


JEST_PASSING = JEST_TESTS.split('  test("divides wrongly"')[0] + "});\n"


def test_a_coverage_threshold_jest_misses_is_an_advisory_not_a_failure(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    manifest = json.loads(package_json("jest", jest="30.2.0"))
    manifest["jest"] = {"coverageThreshold": {"global": {"lines": 100}}}
    files: Files = {"package.json": json.dumps(manifest), "calc.js": CALC, "test/calc.test.js": JEST_PASSING}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
    said = [a for a in report.lint_advisory if "coverage under the repository's threshold" in a]
    assert said and 'Jest: "global" coverage threshold for lines (100%) not met' in said[0]


def test_a_coverage_threshold_vitest_misses_is_an_advisory_not_a_failure(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    config = "export default { test: { coverage: { thresholds: { lines: 100 } } } };\n"
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"vitest.config.mjs": config}))
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 6), report.error_reason
    said = [a for a in report.lint_advisory if "coverage under the repository's threshold" in a]
    assert said and "ERROR: Coverage for lines" in said[0] and "does not meet global threshold (100%)" in said[0]


def test_vitest_failing_before_any_test_says_why_in_its_words(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # devalue 6.0.3 as published: `vitest run --project unit`, and no vitest config naming that project
    package = (EXAMPLE / "package.json").read_text().replace('"vitest run"', '"vitest run --project unit"')
    report = _build(make_repo, tmp_path, node_cache, example_files(**{"package.json": package}))
    assert report.status is BuildStatus.FAILED
    assert 'Error: No projects matched the filter "unit".' in (report.error_reason or "")


def test_jest_failing_a_run_whose_tests_passed_says_why_in_its_words(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    late = JEST_PASSING.replace("describe(", 'setTimeout(() => console.log("late"), 300);\n\ndescribe(')
    late += 'test("waits", () => new Promise((done) => setTimeout(done, 50)));\n'
    files: Files = {"package.json": package_json("jest", jest="30.2.0"), "calc.js": CALC, "test/calc.test.js": late}
    files["test/slow.test.js"] = 'test("slow", () => new Promise((done) => setTimeout(done, 1500)));\n'
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.fail_reason, report.tests.failed) == (BuildStatus.FAILED, FailReason.TESTS, 0)
    assert "`jest` exited 1: Cannot log after tests are done." in (report.error_reason or "")


MOCHA_TESTS = JEST_TESTS.replace("test(", "it(").replace("expect(div(6, 3)).toBe(2)", "assert.equal(div(6, 3), 2)")
MOCHA_TESTS = 'const assert = require("node:assert");\n' + MOCHA_TESTS.replace(
    "expect(div(6, 3)).toBe(3)", "assert.equal(div(6, 3), 3)"
)


# deep-extend 0.6.0 pins mocha 5.2.0, which knows --reporter-options and refused --reporter-option; node-dir 0.1.17
# pins mocha 1.13.0, which stops at --reporter-options. Their json reporters name no test's file.
@pytest.mark.parametrize(("mocha", "file"), [("1.13.0", "."), ("5.2.0", "."), ("11.7.5", "test/calc.js")])
def test_mocha_without_c8_or_nyc_reports_its_tests_and_v8s_coverage(
    mocha: str, file: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    files: Files = {"package.json": package_json("mocha", mocha=mocha), "calc.js": CALC, "test/calc.js": MOCHA_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, [f"{file}::div divides wrongly"])
    assert (report.tests.passed, report.tests.failed) == (1, 1)
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["calc.js"]
    calc = report.coverage.file("calc.js")
    assert calc is not None and calc.missing_lines == [3, 4]  # as c8 counts: the block's range ends after its brace


# Mocha 8 prints its json reporter's report to stdout (no `output` option): json-schema-traverse 1.0.0 resolves 8.4.0.
@pytest.mark.parametrize("mocha", ["8.4.0", "11.7.5"])
def test_mocha_under_nyc_in_another_script_reports_its_tests_and_nycs_coverage(
    mocha: str, make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    # json-schema-traverse 1.0.0's shape: "nyc npm run test-spec", "mocha spec -R spec", nyc configured in package.json.
    manifest = json.loads(package_json("nyc npm run spec", mocha=mocha, nyc="17.1.0"))
    manifest["scripts"]["spec"] = "mocha test -R spec"
    manifest["nyc"] = {"exclude": ["test/**"]}
    files: Files = {"package.json": json.dumps(manifest), "calc.js": CALC, "test/calc.js": MOCHA_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/calc.js::div divides wrongly"])
    assert (report.tests.passed, report.tests.failed) == (1, 1)
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["calc.js"]
    calc = report.coverage.file("calc.js")
    assert calc is not None and calc.missing_lines == [3]


# A test script of its own that passes and prints a TAP summary.
PASSING_CHECK = 'require("node:assert").equal(1 + 1, 2);\nconsole.log("# tests 1\\n# pass 1");\n'


def test_a_script_whose_c8_measured_no_file_of_the_repository_has_no_coverage(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """c8 leaves out test files and what is outside the repository (npm's own processes): its LCOV of no file
    is no coverage, not 100 % of nothing (avvio under tap 18)."""
    files = {"package.json": package_json("node test/check.js", c8="10.1.3"), "test/check.js": PASSING_CHECK}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is None
    assert any("measured no script of the package: no coverage" in line for line in report.lint_advisory)


def test_a_script_of_a_package_with_nyc_and_no_c8_has_no_v8_coverage_written(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """nyc's data is what such a script leaves (secure-json-parse 2.7.0): V8's would cost time and go unread."""
    files = {"package.json": package_json("nyc node test/check.js", nyc="17.1.0"), "test/check.js": PASSING_CHECK}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert not list((tmp_path / "work" / "results").rglob("coverage-*.json"))


def test_a_tape_suite_gets_v8s_coverage_where_only_another_script_runs_nyc(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """fastparallel 2.4.1: `tape test.js | faucet`, and nyc in its `coverage` script alone: no coverage before."""
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    manifest = json.loads(package_json("tape test.js", tape="5.10.2", nyc="17.1.0"))
    manifest["scripts"]["coverage"] = "nyc --reporter=lcov tape test.js"
    files: Files = {"package.json": json.dumps(manifest), "calc.js": calc, "test.js": TAPE_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.status is BuildStatus.PASSED, report.error_reason
    calc_coverage = report.coverage.file("calc.js") if report.coverage else None
    assert calc_coverage is not None and calc_coverage.missing_lines == [3]


# -- tap 15+: its own TAP summary and its own V8 coverage directory ------------------------------------------

TAP_TESTS = """\
const t = require("tap");
const { add } = require("../calc.js");

t.test("adds", (t) => {
  t.equal(add(1, 2), 3);
  t.equal(add(2, 2), 4);
  t.end();
});
t.todo("subtracts");
"""


@pytest.fixture(scope="module")
def tap_report(tmp_path_factory: pytest.TempPathFactory, node_cache: Path) -> BuildReport:
    """avvio's shape: `"test": "tap"`, tap 18 measuring its test processes into `.tap/coverage` itself."""
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    manifest = json.loads(package_json("tap", tap="18.8.0"))
    manifest["tap"] = {"allow-incomplete-coverage": True}  # tap's own 100 % gate would fail the script
    files: Files = {"package.json": json.dumps(manifest), "calc.js": calc, "test/calc.test.js": TAP_TESTS}
    tmp = tmp_path_factory.mktemp("tap")
    pygit2.init_repository(str(tmp / "repo"), initial_head="main")
    commit_files(tmp / "repo", files)
    source = snapshot(tmp / "repo", tmp / "src.tar.gz")
    return BuildReport.model_validate(run_node_runner(source, tmp / "out", node_cache))


def test_a_tap_suite_is_counted_by_its_subtests(tap_report: BuildReport) -> None:
    """Its TAP stream is read: `adds` (two assertions) is one test, the `t.todo` a skipped one."""
    assert tap_report.status is BuildStatus.PASSED, tap_report.error_reason
    counts = tap_report.tests
    assert (counts.total, counts.passed, counts.failed, counts.skipped) == (2, 1, 0, 1)


def test_a_tap_suite_chained_after_the_runner_counts_with_it(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """process-warning 4.0.0's shape, `tap && <a runner mendflow reads>`: tap's failing subtest fails the build
    by its id, beside node --test's passing test."""
    failing = TAP_TESTS.replace("add(2, 2), 4", "add(2, 2), 5")
    node_test = 'require("node:test")("node adds", () => require("node:assert").equal(1 + 1, 2));\n'
    manifest = json.loads(package_json("tap test/calc.test.js && node --test test/node.test.js", tap="18.8.0"))
    manifest["tap"] = {"allow-incomplete-coverage": True}
    files: Files = {"package.json": json.dumps(manifest), "calc.js": "exports.add = (a, b) => a + b;\n"}
    files |= {"test/calc.test.js": failing, "test/node.test.js": node_test}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/calc.test.js::adds"])
    assert (report.tests.total, report.tests.passed, report.tests.failed) == (3, 1, 1)


def test_a_tap_suite_gets_the_coverage_tap_had_v8_write(tap_report: BuildReport) -> None:
    assert tap_report.coverage is not None and [f.path for f in tap_report.coverage.files] == ["calc.js"]
    calc = tap_report.coverage.file("calc.js")
    assert calc is not None and calc.missing_lines == [3]


def test_a_script_whose_tap_measures_with_nyc_gets_nycs_coverage_and_no_v8_written(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """pino-abstract-transport 2.0.0's shape: tap 16 runs the suite under its own nyc, so V8's data of the same
    processes would be written for nothing (2 s of its 8.7 s `npm test`)."""
    manifest = json.loads(package_json("tap test/calc.test.js", tap="16.3.10"))
    manifest["tap"] = {"check-coverage": False}  # tap's own 100 % gate would fail the script
    calc = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
    files: Files = {"package.json": json.dumps(manifest), "calc.js": calc, "test/calc.test.js": TAP_TESTS}
    report = _build(make_repo, tmp_path, node_cache, files)
    assert report.status is BuildStatus.PASSED, report.error_reason
    calc_coverage = report.coverage.file("calc.js") if report.coverage else None
    assert calc_coverage is not None and calc_coverage.missing_lines == [3]
    assert not list((tmp_path / "work" / "results").rglob("coverage-*.json"))


# -- tsconfig.json: a gate only when the project type-checks with its own TypeScript ---------------------------

EDITOR_TSCONFIG = '{"compilerOptions":{"allowJs":true,"checkJs":true,"strict":true,"noEmit":true,"target":"es2015"}}'


ADD_TEST = """\
import test from "node:test";
import assert from "node:assert";
import { add } from "../src/index.js";

test("adds", () => assert.equal(add(1, 2), 3));
"""


def _checkjs_package(**scripts: str) -> Files:
    """fast-uri's shape (survey 23, D1): JavaScript under an editor's checkJs tsconfig that tsc would reject."""
    manifest = json.loads(package_json("node --test", typescript="5.6.3"))
    manifest["type"] = "module"
    manifest["scripts"].update(scripts)
    return {
        "package.json": json.dumps(manifest),
        "tsconfig.json": EDITOR_TSCONFIG,
        "src/index.js": "export const add = (a, b) => a + b;\n",  # TS7006 under strict checkJs
        "test/add.test.js": ADD_TEST,
    }


def test_a_javascript_package_whose_tsconfig_only_configures_editors_is_not_type_checked(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, _checkjs_package())
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 1, 0), report.error_reason
    assert "tsconfig.json:0:0 tsc no TypeScript sources and no script runs tsc: nothing type-checked" in (
        report.lint_advisory
    )


def test_a_javascript_package_whose_script_runs_tsc_fails_its_build_on_a_type_error(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    report = _build(make_repo, tmp_path, node_cache, _checkjs_package(**{"lint:types": "tsc -p tsconfig.json"}))
    assert (report.status, report.fail_reason) == (BuildStatus.FAILED, FailReason.BUILD)
    assert report.error_reason is not None and "src/index.js:1:21 TS7006" in report.error_reason


# -- borp: run by mendflow, as node --test is ---------------------------------------------------------------

BORP = "0.21.0"  # the last borp whose engines name Node 20
BORP_LIB = "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => {\n  return a - b;\n};\n"
BORP_TESTS = """\
const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../lib.js");

test("adds", () => assert.strictEqual(add(1, 1), 2));
test("adds wrongly", () => assert.strictEqual(add(1, 1), 3));
"""
PASSING_ADD = BORP_TESTS.replace("add(1, 1), 3", "add(1, 1), 2")
BORP_PASSING = """\
const test = require("node:test");
const { sub } = require("../lib.js");

test("subtracts", () => sub(2, 1));
"""


def _borp_project(script: str, **files: str) -> Files:
    return {
        "package.json": package_json(script, borp=BORP),
        "lib.js": BORP_LIB,
        "test/add.test.js": BORP_TESTS,
        "test/sub.test.js": BORP_PASSING,
        **files,
    }


def test_borps_tests_are_read_by_name_in_place_of_its_reporters(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """@fastify/sensible 6.0.6's `borp -C --check-coverage --reporter=@jsumners/line-reporter`."""
    report = _build(make_repo, tmp_path, node_cache, _borp_project("borp -C --check-coverage --reporter=dot"))
    assert (report.status, report.failed_tests) == (BuildStatus.FAILED, ["test/add.test.js::adds wrongly"])
    assert (report.tests.passed, report.tests.failed) == (2, 1)


def test_borps_coverage_is_measured_where_its_own_c8_would_delete_it(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """borp -C points V8 at a directory of its own and deletes it: @fastify/sensible 6.0.6 had no coverage."""
    project = _borp_project("borp -C --check-coverage --lines 100", **{"test/add.test.js": PASSING_ADD})
    report = _build(make_repo, tmp_path, node_cache, project)
    lib = report.coverage.file("lib.js") if report.coverage else None
    assert report.status is BuildStatus.PASSED, report.error_reason  # --check-coverage judges no commit
    assert lib is not None and lib.missing_lines == []


def test_borps_coverage_excludes_are_left_out_of_the_coverage(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """As borp's c8 reads them: they take the place of c8's defaults (borp's own `unit` script names its tests)."""
    generated = "exports.table = [1, 2, 3];\n"
    uses = BORP_PASSING.replace('require("../lib.js")', 'require("../lib.js");\nrequire("../generated.js")')
    files = {"test/sub.test.js": uses, "generated.js": generated}
    project = _borp_project("borp -C -X generated.js -X 'test/**'", **files)
    del project["test/add.test.js"]
    report = _build(make_repo, tmp_path, node_cache, project)
    assert report.coverage is not None and [f.path for f in report.coverage.files] == ["lib.js"]


BORP_YAML = "coverage:\n  check-coverage: true\n  lines: 100\nreporters:\n  - dot\nfiles:\n  - 'test/*.test.js'\n"


def test_a_borp_yaml_that_turns_coverage_on_leaves_mendflows_in_place(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    project = _borp_project("borp", **{".borp.yaml": BORP_YAML, "test/add.test.js": PASSING_ADD})
    report = _build(make_repo, tmp_path, node_cache, project)
    assert report.status is BuildStatus.PASSED, report.error_reason
    assert report.coverage is not None and report.coverage.file("lib.js") is not None


def test_a_borp_selection_runs_the_named_tests_files_only(
    make_repo: RepoFactory, tmp_path: Path, node_cache: Path
) -> None:
    """borp has no test name filter (Node 20 refuses --test-name-pattern in NODE_OPTIONS): the files run whole,
    and not those its .borp.yaml names."""
    project = _borp_project("borp", **{".borp.yaml": BORP_YAML})
    report = _build(make_repo, tmp_path, node_cache, project, "--select", '["test/sub.test.js::subtracts"]')
    assert (report.status, report.tests.passed, report.tests.failed) == (BuildStatus.PASSED, 1, 0), report.error_reason
