"""Reading what the test runners print and write, without running them (their real output, captured)."""

from __future__ import annotations

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
    run = results.from_tap(TAP18_FAILED)
    assert run.read
    assert run.counts == {"total": 6, "passed": 3, "failed": 1, "skipped": 2, "errors": 0}


def test_tap_output_without_a_summary_is_not_read() -> None:
    assert not results.from_tap("ok 1 - a.test.js\n1..1\n# No coverage generated\n").read


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


def test_node_tests_spec_summary_is_read_as_counts() -> None:
    run = results.from_tap(SPEC_FAILED)
    assert run.read
    assert run.counts == {"total": 2, "passed": 1, "failed": 1, "skipped": 0, "errors": 0}
