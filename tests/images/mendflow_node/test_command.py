"""Which runner a package.json's test script runs, with the repository's own arguments."""

from __future__ import annotations

import pytest
from mendflow_node import borp, command


@pytest.mark.parametrize(
    ("script", "runner", "args"),
    [
        ("jest", "jest", []),
        ("jest --runInBand --coverage", "jest", ["--runInBand"]),
        ("vitest run", "vitest", []),
        ("vitest --watch=false src", "vitest", ["--watch=false", "src"]),
        ("node --test test/", "node", ["test/"]),
        (
            "node --test --test-reporter=cleaner-spec-reporter --test-reporter-destination stdout test/",
            "node",
            ["test/"],
        ),
        ("mocha 'test/**/*.spec.js'", "mocha", ["test/**/*.spec.js"]),
        ("NODE_ENV=test mocha -w test/", "mocha", ["test/"]),
        ("vitest -w src", "vitest", ["src"]),
        ("jest -w 2", "jest", ["-w", "2"]),
        ("c8 --reporter=lcov mocha -r ts-node/register", "mocha", ["-r", "ts-node/register"]),
        ("c8 -r lcov -c test/c8.json node --test 'test/*.test.js'", "node", ["test/*.test.js"]),
        ("nyc --reporter text --check-coverage mocha", "mocha", []),
        ("npx jest", "jest", []),
        ("./node_modules/.bin/jest --ci", "jest", ["--ci"]),
        ("borp -C --check-coverage --reporter=@jsumners/line-reporter", "borp", []),
        (
            "borp --coverage --timeout 60000 --lines=90 -r tap test/*.test.js",
            "borp",
            ["--timeout", "60000", "test/*.test.js"],
        ),
        ("borp -p 'test/**/*.js' --watch --no-timeout", "borp", ["-p", "test/**/*.js", "--no-timeout"]),
    ],
)
def test_the_runner_and_its_arguments_are_the_scripts(script: str, runner: str, args: list[str]) -> None:
    read = command.read(script)
    assert (read.runner, read.args) == (runner, args)


def test_borps_coverage_excludes_are_kept_apart_from_its_arguments() -> None:
    read = command.read("borp -C -X 'fixtures/**/*' --coverage-exclude=test*/** --ignore 'fixtures/**/*'")
    assert (read.args, read.coverage_exclude) == (["--ignore", "fixtures/**/*"], ["fixtures/**/*", "test*/**"])


def test_a_borp_configurations_entries_are_left_out_whole() -> None:
    yaml = "# borp\ncoverage:\n  lines: 100\nfiles:\n- 'test/*.test.js'\n- 'test/*.test.mjs'\ntimeout: 60000\n"
    assert borp.without_keys(yaml, {"coverage", "files"}) == "# borp\ntimeout: 60000\n"


def test_a_borp_configuration_left_with_no_entry_is_an_empty_mapping() -> None:
    assert borp.without_keys("# borp\ncoverage: true\n", {"coverage"}) == "{}\n"


def test_a_build_before_the_tests_is_passed_over_for_the_runner() -> None:
    assert command.read("tsc -p . && jest --ci").runner == "jest"


def test_environment_assignments_go_with_the_runner() -> None:
    read = command.read("cross-env NODE_ENV=test TZ=UTC jest")
    assert (read.runner, read.env) == ("jest", {"NODE_ENV": "test", "TZ": "UTC"})


def test_an_unknown_command_runs_as_the_script() -> None:
    assert command.read("make test").runner == "script"


def test_node_without_test_is_not_node_test() -> None:
    assert command.read("node scripts/test.js").runner == "script"


def test_no_script_is_no_tests() -> None:
    assert command.read(None).runner == "none"


def test_npm_inits_placeholder_is_no_tests() -> None:
    assert command.read('echo "Error: no test specified" && exit 1').runner == "none"


def test_an_unbalanced_quote_runs_as_the_script() -> None:
    assert command.read("jest 'oops").runner == "script"


def test_a_script_that_runs_another_is_followed_to_its_runner() -> None:
    scripts = {"test": "npm run lint && npm run test:unit", "lint": "eslint .", "test:unit": "c8 --100 node --test"}
    assert command.read(scripts["test"], scripts).runner == "node"


def test_pnpm_and_yarn_name_scripts_without_run() -> None:
    scripts = {"test": "pnpm unit", "unit": "yarn run spec", "spec": "vitest --run"}
    assert command.read(scripts["test"], scripts).runner == "vitest"


def test_a_script_that_runs_itself_ends() -> None:
    scripts = {"test": "npm test"}
    assert command.read(scripts["test"], scripts).runner == "script"


def test_a_script_run_under_a_coverage_wrapper_is_followed_to_its_runner() -> None:
    # json-schema-traverse 1.0.0 as published: nyc wraps `npm run test-spec`, which runs mocha.
    scripts = {"test": "npm run lint && nyc npm run test-spec", "lint": "eslint .", "test-spec": "mocha spec -R spec"}
    read = command.read(scripts["test"], scripts)
    assert (read.runner, read.args) == ("mocha", ["spec", "-R", "spec"])


def test_assignments_before_a_script_go_with_the_runner_it_runs() -> None:
    scripts = {"test": "cross-env TZ=UTC npm run unit", "unit": "jest"}
    read = command.read(scripts["test"], scripts)
    assert (read.runner, read.env) == ("jest", {"TZ": "UTC"})


def test_what_the_script_chains_after_the_runner_runs_after_the_tests() -> None:
    # process-warning 5.0.0 as published: node --test, then jest, then tsd.
    scripts = {
        "test": "npm run test:unit && npm run test:jest && npm run test:typescript",
        "test:unit": "c8 --100 node --test",
        "test:jest": "jest jest.test.js",
        "test:typescript": "tsd",
    }
    read = command.read(scripts["test"], scripts)
    assert (read.runner, read.then) == ("node", [["npm", "run", "test:jest"], ["npm", "run", "test:typescript"]])


def test_a_suite_of_another_runner_before_the_runner_runs_after_the_tests() -> None:
    # process-warning 4.0.0 as published: tap, then jest, then tsd.
    scripts = {
        "test": "npm run test:unit && npm run test:jest && npm run test:typescript",
        "test:unit": "tap",
        "test:jest": "jest jest.test.js",
        "test:typescript": "tsd",
    }
    read = command.read(scripts["test"], scripts)
    assert (read.runner, read.then) == ("jest", [["npm", "run", "test:unit"], ["npm", "run", "test:typescript"]])


def test_a_type_check_before_the_runner_is_left_to_mendflows_own() -> None:
    assert command.read("tsc -p . && npx tsc --noEmit && jest --ci").then == []


def test_a_chain_inside_the_runners_own_script_comes_first() -> None:
    scripts = {"test": "npm run unit && tsd", "unit": "node --test && node check.js"}
    assert command.read(scripts["test"], scripts).then == [["node", "check.js"], ["tsd"]]


def test_linters_chained_after_the_runner_are_left_to_the_lint_step() -> None:
    scripts = {"test": "jest && eslint . && npm run lint:types && tsd", "lint:types": "tsc"}
    assert command.read(scripts["test"], scripts).then == [["tsd"]]


def test_a_coverage_threshold_chained_after_the_runner_is_left_to_mendflows_coverage() -> None:
    assert command.read("c8 mocha && c8 check-coverage --lines 100 && npx nyc report").then == []


def test_a_coverage_wrapper_running_an_unread_runner_runs_it() -> None:
    """@fastify/proxy-addr 5.0.0 as published: its tape suite ran not at all, only the type test after it."""
    scripts = {"test": "npm run test:unit && npm run test:typescript", "test:unit": "c8 tape test/**/*.js"}
    scripts["test:typescript"] = "tsd"
    assert command.read_test(scripts) == command.TestCommand("script")  # the script runs whole


@pytest.mark.parametrize("script", ["jest || true", "jest ; tsd", "jest | tee out.txt"])
def test_only_an_and_chain_runs_after_the_tests(script: str) -> None:
    assert command.read(script).then == []


MINIMIST = {
    "pretest": "npm run lint",
    "lint": "eslint --ext=js,mjs .",
    "test": "npm run tests-only",
    "tests-only": "nyc tape 'test/**/*.js'",
    "posttest": "aud --production",
    "version": "auto-changelog",
    "postversion": "git tag",
}


def test_a_script_run_as_it_is_runs_its_hooks_apart_and_leaves_their_linters_and_audit() -> None:
    read = command.read_test(MINIMIST)
    assert (read.runner, read.hooks_apart, read.before, read.then) == ("script", True, [], [])


def test_a_posttest_runs_after_what_the_test_script_chains() -> None:
    assert command.read_test({"test": "node --test && tsd", "posttest": "attw --pack"}).then == [
        ["tsd"],
        ["attw", "--pack"],
    ]


@pytest.mark.parametrize(
    "audit",
    [
        "aud --production",
        "npx aud",
        "npm audit --omit=dev",
        "audit-ci --high",
        "npx npm@'>=10.2' audit",
        "npm run audit",
    ],
)
def test_an_audit_after_the_tests_is_left_out(audit: str) -> None:
    assert command.read_test({"test": "jest", "posttest": audit, "audit": "npm audit"}).then == []


def test_a_script_that_runs_a_hooked_script_keeps_npms_hooks() -> None:
    read = command.read_test({**MINIMIST, "pretests-only": "npm run build", "build": "tsc"})
    assert (read.runner, read.hooks_apart, read.before, read.then) == ("script", False, [], [])


def test_a_script_npm_runs_for_the_tests_runs_its_own_hooks_around_them() -> None:
    scripts = {"test": "npm run unit", "preunit": "npm run build", "build": "tsc", "unit": "mocha", "postunit": "tsd"}
    read = command.read_test(scripts)
    assert (read.runner, read.before, read.then) == ("mocha", [["npm", "run", "build"]], [["tsd"]])


def test_a_script_pnpm_runs_runs_without_hooks() -> None:
    read = command.read_test({"test": "pnpm run unit", "preunit": "tsc", "unit": "mocha"})
    assert (read.runner, read.before) == ("mocha", [])


def test_a_pretest_build_runs_before_the_runner() -> None:
    read = command.read_test({"test": "jest", "pretest": "npm run lint && tsc -p .", "lint": "eslint ."})
    assert (read.runner, read.before) == ("jest", [["tsc", "-p", "."]])


def test_a_hook_of_other_operators_runs_whole() -> None:
    read = command.read_test({"test": "jest", "pretest": "tsc || true"})
    assert read.before == [["npm", "run-script", "pretest"]]


def test_without_hooks_the_script_runs_as_npm_runs_it() -> None:
    read = command.read_test({"test": "make test"})
    assert (read.runner, read.hooks_apart, read.before) == ("script", False, [])


def test_a_lint_script_run_with_npms_options_is_left_to_the_lint_step() -> None:
    scripts = {"test": "jest", "pretest": "npm run --silent lint", "lint": "eslint ."}
    assert command.read_test(scripts).before == []


def test_a_build_the_script_chains_before_the_runner_runs_before_the_tests() -> None:
    read = command.read("tsc && node --test dist/")
    assert (read.runner, read.before) == ("node", [["tsc"]])


def test_the_build_steps_own_type_check_is_not_run_again() -> None:
    assert command.read("tsc --noEmit && jest").before == []


def test_builds_before_a_runner_in_another_script_run_first_in_order() -> None:
    scripts = {"test": "npm run build && npm run unit", "build": "rollup -c", "unit": "tsc -p test && mocha"}
    assert command.read(scripts["test"], scripts).before == [["npm", "run", "build"], ["tsc", "-p", "test"]]


def test_a_chain_of_other_operators_is_read_for_its_runner_alone() -> None:
    assert command.read("rimraf dist; tsc && jest").before == []


def test_a_script_that_only_lints_is_left_to_the_lint_step_whatever_its_name() -> None:
    # fast-deep-equal 3.1.3's `npm run build && npm run eslint && npm run test-ts && npm run test-cov`
    scripts = {"test": "npm run eslint && npm run check && mocha", "eslint": "eslint *.js"}
    scripts["check"] = "standard | snazzy"
    assert command.read(scripts["test"], scripts).before == []


def test_a_glob_the_script_leaves_unquoted_is_for_the_shell_to_expand() -> None:
    read = command.read("node --test test/*.test.js 'lib/**/*.test.js' && tap \"x/*.js\"")
    assert (read.args, read.globs) == (["test/*.test.js", "lib/**/*.test.js"], ["test/*.test.js"])


def test_the_globs_of_a_script_the_test_script_runs_are_read_with_it() -> None:
    assert command.read_test({"test": "npm run unit", "unit": "mocha test/*.spec.js"}).globs == ["test/*.spec.js"]


def test_a_script_run_as_it_is_runs_its_chain_without_its_linter() -> None:
    # safe-buffer 5.2.1: standard's findings, there before the commit, failed its tests.
    assert command.read("standard && tape test/*.js").script == [["tape", "test/*.js"]]


def test_a_script_run_as_it_is_runs_its_chain_without_a_pipeline_of_linters() -> None:
    # pino-abstract-transport 2.0.0: snazzy prints what standard found; the pair ran beside the lint step.
    script = "standard | snazzy && tap test/*.test.js  && tsd"
    assert command.read(script).script == [["tap", "test/*.test.js"], ["tsd"]]


@pytest.mark.parametrize(
    "script", ["standard | tee lint.txt && tape", "tape | tee out.tap && standard", "tape | tap-spec | tee x"]
)
def test_a_script_whose_pipe_joins_a_command_it_keeps_runs_whole(script: str) -> None:
    assert command.read(script).script == []


@pytest.mark.parametrize(
    ("script", "kept"),
    [
        ("standard && tape test.js | tap-spec", [["tape", "test.js"]]),  # tinysonic 2.0.1
        ("tape test/*.js | npx faucet", [["tape", "test/*.js"]]),
        ("tap test/*.js | tap-mocha-reporter spec | tap-bail && tsd", [["tap", "test/*.js"], ["tsd"]]),
    ],
)
def test_a_script_run_as_it_is_runs_its_runner_without_the_tap_reporters_it_pipes_into(
    script: str, kept: list[list[str]]
) -> None:
    assert command.read(script).script == kept


@pytest.mark.parametrize("script", ["standard || tape", "tape && make", "standard"])
def test_a_script_leaving_nothing_out_or_joined_otherwise_runs_whole(script: str) -> None:
    assert command.read(script).script == []


def test_a_redirection_before_the_runner_stays_the_shells() -> None:
    # @fastify/flash 6.0.5: the key the tests read was never written; `>` went to secure-session as a word
    before = command.read("npx -p x secure-session > secret-key && borp --coverage").before
    assert [command.shell_line(words, []) for words in before] == ["npx -p x secure-session > secret-key"]


def test_a_redirection_to_a_descriptor_is_one_word_not_an_ampersand() -> None:
    script = command.read("tape test.js 2>&1 | tap-spec").script
    assert [command.shell_line(words, []) for words in script] == ["tape test.js 2>&1"]


def test_a_runners_output_redirected_is_not_its_arguments() -> None:
    assert command.read("mocha test/ > out.txt 2>&1").args == ["test/"]


def test_a_shell_line_quotes_an_assignments_value_and_leaves_the_scripts_globs() -> None:
    words = ["NAME=a b", "tape", "test/*.js", "it's"]
    assert command.shell_line(words, ["test/*.js"]) == "NAME='a b' tape test/*.js 'it'\"'\"'s'"


PINO_SCRIPTS = {
    "borp": "borp --timeout 60000 --coverage",
    "test-types": "tsc && tstyche && ts-node test/types/pino.ts",
}


@pytest.mark.parametrize(
    ("words", "runs"),
    [(["npm", "run", "borp"], True), (["jest", "test/jest"], True), (["npm", "run", "test-types"], False)],
)
def test_a_chained_command_runs_tests_where_it_or_its_script_runs_a_runner(words: list[str], runs: bool) -> None:
    assert command.runs_tests(words, PINO_SCRIPTS) is runs


@pytest.mark.parametrize(
    ("scripts", "runs"),
    [
        ({"test": "nyc tape test.js"}, True),
        ({"test": "npx nyc --reporter=lcov npm run spec", "spec": "mocha"}, True),
        ({"test": "npm run spec", "spec": "cross-env CI=1 nyc mocha"}, True),
        ({"pretest": "nyc node build.js", "test": "tape test.js"}, True),
        ({"test": "tape test.js | faucet", "coverage": "nyc --reporter=lcov tape test.js"}, False),  # fastparallel
        ({"test": "c8 tape test.js"}, False),
    ],
)
def test_npm_test_runs_a_tool_through_its_scripts_and_hooks_only(scripts: dict[str, str], runs: bool) -> None:
    assert command.npm_test_runs("nyc", scripts) is runs
