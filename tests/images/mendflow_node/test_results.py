"""Reading what the test runners print and write, without running them (their real output, captured)."""

from __future__ import annotations

from pathlib import Path

from mendflow_node import results

# tap 18.8.0's closing lines of a run with one failing file (`tap pass/ fail/`, CI=true): assertion counts, the
# fields after pass only when not zero and in no fixed order; no "# failed N of M tests" (tap 14 and older).
TAP18_FAILED = """\
not ok 1 - fail/b.test.js # time=2195.488ms
ok 2 - pass/a.test.js # time=2717.139ms

# { total: 6, pass: 3, fail: 1, todo: 1, skip: 1 }
# time=4992.435ms
"""


def test_taps_closing_summary_is_read_as_counts() -> None:
    run = results.from_tap(TAP18_FAILED, Path())
    assert run.read
    assert run.counts == {"total": 6, "passed": 3, "failed": 1, "skipped": 2, "errors": 0}


# uvu 0.5.6's close, piped (its colours stay on): one test passed, one failed, one skipped.
UVU_FAILED = (
    '  \x1b[1m\x1b[41m FAIL \x1b[22m\x1b[49m "bad"\n\n'
    "  Total:     2\x1b[31m\n  Passed:    1\x1b[39m\n  Skipped:   \x1b[33m1\x1b[39m\n  Duration:  1.79ms\n\n"
)


def test_uvus_closing_counts_are_read() -> None:
    run = results.from_tap(UVU_FAILED, Path())
    assert run.read
    assert run.counts == {"total": 3, "passed": 1, "failed": 1, "skipped": 1, "errors": 0}


def test_tap_output_without_a_summary_is_not_read() -> None:
    assert not results.from_tap("ok 1 - a.test.js\n1..1\n# No coverage generated\n", Path()).read


# tap 16.3.10's stream (`CI=true tap --no-coverage -j1 test/zz.test.js test/yy.test.js`, stdout, some YAML lines
# left out): a failing subtest in a subtest beside a passing one, a t.skip beside them, and a file that does not
# load.
TAP16_NESTED = """\
TAP version 13
# Subtest: test/zz.test.js
    # Subtest: outer
        # Subtest: inner
            not ok 1 - should be equal
              ---
              compare: ===
              at:
                line: 2
                column: 61
                file: test/zz.test.js
                type: Test
              stack: |
                Test.<anonymous> (test/zz.test.js:2:61)
                Object.<anonymous> (test/zz.test.js:2:3)
              diff: |
                --- expected
                +++ actual
              ...

            1..1
            # failed 1 test
        not ok 1 - inner # time=16.878ms

        # Subtest: fine
            ok 1 - expect truthy value
            1..1
        ok 2 - fine # time=0.551ms

        1..2
        # failed 1 of 2 tests
    not ok 1 - outer # time=21.957ms

    ok 2 - later # SKIP
    1..2
    # failed 1 of 2 tests
    # skip: 1
    # time=25.151ms
not ok 1 - test/zz.test.js # time=25.151ms
  ---
  file: test/zz.test.js
  exitCode: 1
  ...

# Subtest: test/yy.test.js
    1..0 # no tests found
not ok 2 - test/yy.test.js # time=70.532ms
  ---
  file: test/yy.test.js
  exitCode: 1
  ...

1..2
# failed 2 of 2 tests
"""


def _tap16(tmp_path: Path) -> results.TestRun:
    for name in ("test/zz.test.js", "test/yy.test.js"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    return results.from_tap(TAP16_NESTED, tmp_path)


def test_taps_innermost_subtests_are_the_tests(tmp_path: Path) -> None:
    run = _tap16(tmp_path)
    assert run.read
    assert run.counts == {"total": 3, "passed": 1, "failed": 1, "skipped": 1, "errors": 1}


def test_a_tap_test_is_named_by_its_file_and_titles(tmp_path: Path) -> None:
    assert _tap16(tmp_path).failed == ["test/zz.test.js::outer inner", "test/yy.test.js"]


def test_a_tap_file_that_fails_before_asserting_is_an_error(tmp_path: Path) -> None:
    assert [f["kind"] for f in _tap16(tmp_path).failures] == ["failed", "error"]


def test_a_tap_failure_says_which_assertion_failed_and_where(tmp_path: Path) -> None:
    failure = _tap16(tmp_path).failures[0]
    assert (failure["message"], failure["location"]) == ("should be equal", "test/zz.test.js:2")
    assert "--- expected" in failure["traceback"]


# tap 12.7.0 running two files in parallel (`CI=true tap -j2 --no-coverage t2/*.js`, some YAML lines left out):
# each file's subtests in braces, after its point, or on a line of their own after its YAML block.
TAP12_BUFFERED = """\
TAP version 13
ok 1 - t2/a.js # time=221.744ms {
    # Subtest: a
        ok 1 - expect truthy value
        1..1
    ok 1 - a # time=3.506ms

    1..1
    # time=9.964ms
}

not ok 2 - t2/b.js # time=244.181ms
  ---
  file: t2/b.js
  exitCode: 1
  ...
{
    # Subtest: b
        not ok 1 - expect truthy value
          ---
          at:
            line: 2
          ...

        1..1
        # failed 1 test
    not ok 1 - b # time=8.622ms

    1..1
    # failed 1 test
}

1..2
# failed 1 of 2 tests
"""


def test_a_bare_frame_in_taps_stack_is_the_location(tmp_path: Path) -> None:
    # light-my-request 6.3.0's failing `t.strictSame` at the top level of its test file.
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "index.test.js").write_text("", encoding="utf-8")
    stream = TAP16_NESTED.replace("Test.<anonymous> (test/zz.test.js:2:61)", "test/index.test.js:1566:7")
    stream = stream.replace("Object.<anonymous> (test/zz.test.js:2:3)", "lib/response.js:36:28")
    assert results.from_tap(stream, tmp_path).failures[0]["location"] == "test/index.test.js:1566"


def test_taps_buffered_subtests_are_read(tmp_path: Path) -> None:
    (tmp_path / "t2").mkdir()
    for name in ("a.js", "b.js"):
        (tmp_path / "t2" / name).write_text("", encoding="utf-8")
    run = results.from_tap(TAP12_BUFFERED, tmp_path)
    assert (run.counts["passed"], run.failed) == (1, ["t2/b.js::b"])


def test_a_tap_stream_without_subtests_is_read_by_its_summary() -> None:
    tape = "TAP version 13\n# adds\nok 1 should be equal\nok 2 should be equal\n\n1..2\n# tests 2\n# pass  2\n"
    run = results.from_tap(tape, Path())
    assert run.counts == {"total": 2, "passed": 2, "failed": 0, "skipped": 0, "errors": 0}
    assert run.read


def _tape_failed(root: Path) -> str:
    """tape 5.10.2's stream: a failing test, a test whose t.comment() and t.test() print comments too, a TODO."""
    return f"""\
TAP version 13
# adds
ok 1 should be strictly equal
not ok 2 one is two
  ---
    operator: equal
    expected: 2
    actual:   1
    at: Test.<anonymous> ({root}/test/calc.js:2:40)
    stack: |-
      Error: one is two
          at Test.assert [as _assert] ({root}/node_modules/tape/lib/test.js:548:48)
  ...
not ok 3 should be truthy
  ---
    at: Test.<anonymous> ({root}/test/calc.js:3:5)
  ...
# outer
# a note
ok 4 should be truthy
# inner
not ok 5 should be truthy
  ---
    at: {root}/node_modules/helper/index.js:3:74
  ...
# TODO todo one
not ok 6 should be truthy # TODO
  ---
    at: Test.<anonymous> ({root}/test/calc.js:5:45)
  ...

1..6
# tests 6
# pass  2
# fail  3
# todo  1
"""


def test_tapes_failing_tests_are_named_by_the_comment_before_them(tmp_path: Path) -> None:
    run = results.from_tap(_tape_failed(tmp_path), tmp_path)
    assert run.failed == ["test/calc.js::adds", "inner"]


def test_tapes_counts_stay_its_summarys(tmp_path: Path) -> None:
    counts = results.from_tap(_tape_failed(tmp_path), tmp_path).counts
    assert counts == {"total": 6, "passed": 2, "failed": 3, "skipped": 1, "errors": 0}


def test_a_tape_failure_says_its_first_failing_assertion(tmp_path: Path) -> None:
    failure = results.from_tap(_tape_failed(tmp_path), tmp_path).failures[0]
    assert (failure["message"], failure["location"]) == ("one is two", "test/calc.js:2")


# node 20's spec reporter closing a run (borp prints it): one passing and one failing test.
SPEC_FAILED = """\
\u2714 adds (1.415552ms)
\u2716 fails (0.29527ms)
  Error: lookup failed

\u2139 tests 2
\u2139 suites 0
\u2139 pass 1
\u2139 fail 1
\u2139 cancelled 0
\u2139 skipped 0
\u2139 todo 0
\u2139 duration_ms 111.68558
"""


# @jsumners/line-reporter 1.0.1's close (node --test --test-reporter=@jsumners/line-reporter, two files): a file's
# failing test, and the counts, a skipped test among those passed.
LINE_REPORTER_FAILED = """\
failed: /tmp/lr/t/a.test.js (153.4 ms)
passed: /tmp/lr/t/b.test.js (173.9 ms)


Failed tests:

/tmp/lr/t/a.test.js
\tline: 4, column: 1
\t\tAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:


Passed: 3
Failed: 1
Total: 4
"""


def test_line_reporters_closing_counts_are_read() -> None:
    run = results.from_tap(LINE_REPORTER_FAILED, Path())
    assert run.read
    assert run.counts == {"total": 4, "passed": 3, "failed": 1, "skipped": 0, "errors": 0}


def test_node_tests_spec_summary_is_read_as_counts() -> None:
    run = results.from_tap(SPEC_FAILED, Path())
    assert run.read
    assert run.counts == {"total": 2, "passed": 1, "failed": 1, "skipped": 0, "errors": 0}
