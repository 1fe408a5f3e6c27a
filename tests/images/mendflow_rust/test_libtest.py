"""libtest's output read into ids and failures: a ``harness = false`` target's libtest-mimic lines, as toml 0.8.19's
``tests/decoder_compliance.rs`` printed them (one line of its decoder flipped), colours and padding included."""

from __future__ import annotations

from mendflow_rust import libtest

PAD = " " * 45
MIMIC_RUN = "\n".join(
    [
        "     Running tests/decoder_compliance.rs (target/debug/deps/decoder_compliance-8d1c0f2a)",
        "",
        "running 2 tests",
        f"test valid/newline-lf.toml{PAD}  ... \x1b[0m\x1b[32mok\x1b[0m",
        f"test valid/array/bool.toml{PAD}  ... \x1b[0m\x1b[31mFAILED\x1b[0m",
        "",
        "failures:",
        "",
        "---- valid/array/bool.toml ----",
        "Unexpected decoding.",
        "Expected",
        "{",
        "",
        "failures:",
        "    valid/array/bool.toml",
        "",
        "test result: \x1b[0m\x1b[31mFAILED\x1b[0m. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
    ]
)
FAILED_ID = "tests/decoder_compliance.rs::valid/array/bool.toml"


def test_a_padded_name_is_the_tests_own() -> None:
    run = libtest.read(MIMIC_RUN, {})
    assert run.failed == [FAILED_ID]
    assert (run.counts["passed"], run.counts["failed"]) == (1, 1)


def test_a_failure_headed_without_stdout_keeps_its_words() -> None:
    (failure,) = libtest.read(MIMIC_RUN, {}).failures
    assert (failure["node_id"], failure["message"]) == (FAILED_ID, "Unexpected decoding.")
    assert "Expected" in failure["traceback"]


def test_such_an_id_selects_its_test_by_its_exact_name() -> None:
    assert libtest.selection([FAILED_ID]) == (["--test", "decoder_compliance"], ["valid/array/bool.toml"])


# percent-encoding 2.3.1's `cargo test` (stdout, two of its six doctests): no unit test, its doctests only.
DOCTESTS_ONLY = """\
     Running unittests src/lib.rs (target/debug/deps/percent_encoding-1684a48b729bbd7c)

running 1 test
test tests::ignored_one ... ignored

test result: ok. 0 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests percent_encoding

running 3 tests
test src/lib.rs - (line 31) ... ok
test src/lib.rs - AsciiSet (line 63) ... FAILED
test src/lib.rs - percent_decode (line 349) ... ignored

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.05s
"""


def test_the_doctests_that_ran_are_counted_apart() -> None:
    assert libtest.doctests_ran(DOCTESTS_ONLY) == 2
