"""The runner's reading of failures and selections, without a build: caps, order, what a node id may be."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mendflow.contracts import TestFailure
from tests.images.mendflow_runner.helpers import RUNNER_DIR

sys.path.insert(0, str(RUNNER_DIR))
from mendflow_runner.testing import MAX_FAILURES, TEXT_MAX, SelectionError, check_selection, failure, failures


def test_a_long_traceback_keeps_its_last_4_kib() -> None:
    text = "x" * 10_000 + "\nE   ValueError: the end"
    kept = failure("t.py::test_a", {"when": "call", "text": text})["traceback"]
    assert len(kept.encode()) == TEXT_MAX and kept.endswith("E   ValueError: the end")


def test_details_stop_at_200_failures_in_failed_order() -> None:
    failed = [f"t.py::test_{i}" for i in range(MAX_FAILURES + 50)]
    listed = failures(failed, {})
    assert [f["node_id"] for f in listed] == failed[:MAX_FAILURES]


def test_without_an_exception_event_the_exception_is_read_from_the_text() -> None:
    detail = {"when": "setup", "text": "    def f():\n>       raise KeyError(1)\nE       KeyError: 1\n"}
    f = TestFailure.model_validate(failure("t.py::test_a", detail))
    assert (f.kind.value, f.exception, f.message) == ("error", "KeyError", "1")


def test_a_missing_fixture_says_so_in_its_message() -> None:
    detail = {"when": "setup", "text": "  def test_a(db):\nE       fixture 'db' not found\n"}
    assert failure("t.py::test_a", detail)["message"] == "fixture 'db' not found"


def test_a_teardown_error_is_an_error() -> None:
    assert failure("t.py::test_a", {"when": "teardown"})["kind"] == "error"


@pytest.mark.parametrize(
    "node",
    ["-p", "--rootdir=/", "@argv", "/abs/test_a.py", "../test_a.py", "tests/../../x.py::t", " t.py", "t.py\n-x", ""],
)
def test_a_selection_outside_the_repository_or_an_option_is_refused(node: str, tmp_path: Path) -> None:
    with pytest.raises(SelectionError):
        check_selection(tmp_path, [node])


def test_a_selection_through_a_symlink_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "out").symlink_to(tmp_path)
    with pytest.raises(SelectionError):
        check_selection(tmp_path / "repo", ["out/test_x.py::test_a"])


def test_node_ids_with_classes_and_parameters_are_kept_as_given(tmp_path: Path) -> None:
    nodes = ["tests/test_a.py::TestA::test_b[1-../x]", "tests/test_a.py"]
    assert check_selection(tmp_path, nodes) == nodes
