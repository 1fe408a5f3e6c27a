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
