"""``go test -json`` events read into failures: events shaped as the go command prints them (taken from a real run's
log where the case came from one)."""

from __future__ import annotations

import json

from mendflow_go import gotest

GO_INTERNAL = {"github.com/rogpeppe/go-internal": "."}
TESTSCRIPT = "github.com/rogpeppe/go-internal/cmd/testscript"


def _events(package: str, test: str, outputs: list[tuple[str, str]]) -> str:
    """A top-level test's failed run: its output lines (``(test or subtest, text)``), then its end."""
    lines = [{"Action": "run", "Package": package, "Test": test}]
    lines += [{"Action": "output", "Package": package, "Test": name, "Output": text} for name, text in outputs]
    lines += [{"Action": "fail", "Package": package, "Test": test}]
    return "\n".join(json.dumps(line) for line in lines)


# go-internal v1.16.0's cmd/testscript::TestScripts as mendflow's B1 ran it with GOPROXY=off (its runner.log,
# cut): every script logs "testscript.go:609: WORK=$WORK" first; the failed one says where it failed.
SCRIPT = "TestScripts/env_var_with_go"
FAILED_SCRIPT = _events(
    TESTSCRIPT,
    "TestScripts",
    [
        ("TestScripts", "=== RUN   TestScripts\n"),
        (SCRIPT, "    testscript.go:609: WORK=$WORK\n"),
        (SCRIPT, "        GOPROXY=off\n"),
        (SCRIPT, "        > stdout ^GOPROXY=https://proxy.golang.org,direct$\n"),
        (
            SCRIPT,
            "        FAIL: testdata/env_var_with_go.txt:16: no match for `^GOPROXY=https://proxy.golang.org,direct$`"
            " found in stdout\n",
        ),
        (SCRIPT, "        \n"),
        (SCRIPT, "--- FAIL: TestScripts/env_var_with_go (0.23s)\n"),
        ("TestScripts", "--- FAIL: TestScripts (0.05s)\n"),
    ],
)


def test_a_failed_testscript_is_located_at_its_scripts_line_in_the_repository() -> None:
    failure = gotest.read_events(FAILED_SCRIPT, GO_INTERNAL).failures[0]
    assert failure["location"] == "cmd/testscript/testdata/env_var_with_go.txt:16"


def test_a_failed_testscript_says_what_its_script_did_not_find() -> None:
    failure = gotest.read_events(FAILED_SCRIPT, GO_INTERNAL).failures[0]
    assert failure["message"] == "no match for `^GOPROXY=https://proxy.golang.org,direct$` found in stdout"


def test_a_failed_test_that_did_not_panic_is_a_test_failure_not_a_panic() -> None:
    events = _events(
        "example.com/m",
        "TestQuiet",
        [("TestQuiet", "=== RUN   TestQuiet\n"), ("TestQuiet", "--- FAIL: TestQuiet (0.00s)\n")],
    )
    failure = gotest.read_events(events, {"example.com/m": "."}).failures[0]
    assert (failure["node_id"], failure["exception"]) == (".::TestQuiet", "TestFailure")


def test_a_passing_subtests_log_line_is_not_taken_for_the_failures_place() -> None:
    # the go command's events for a test whose first subtest logs with t.Logf and passes, and whose second fails
    events = [
        ("run", "TestParse", ""),
        ("run", "TestParse/empty", ""),
        ("output", "TestParse/empty", '    parse_test.go:12: parsing ""\n'),
        ("output", "TestParse/empty", "--- PASS: TestParse/empty (0.00s)\n"),
        ("pass", "TestParse/empty", ""),
        ("run", "TestParse/comma", ""),
        ("output", "TestParse/comma", "    parse_test.go:19: got [a b], want [a,b]\n"),
        ("output", "TestParse/comma", "--- FAIL: TestParse/comma (0.00s)\n"),
        ("fail", "TestParse/comma", ""),
        ("output", "TestParse", "--- FAIL: TestParse (0.00s)\n"),
        ("fail", "TestParse", ""),
    ]
    text = "\n".join(
        json.dumps({"Action": action, "Package": "example.com/m", "Test": test, **({"Output": out} if out else {})})
        for action, test, out in events
    )
    failure = gotest.read_events(text, {"example.com/m": "."}).failures[0]
    assert (failure["location"], failure["message"]) == ("parse_test.go:19", "got [a b], want [a,b]")
