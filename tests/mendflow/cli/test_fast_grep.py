"""The fast grep's argument reading: the plain forms it answers, and everything it leaves to argparse."""

from __future__ import annotations

import pytest

from mendflow.cli.fast_grep import plain_args


@pytest.mark.parametrize(
    ("args", "read"),
    [
        (["float"], ("float", False, False, None, None, None)),
        (["-i", "--regex", "a.b"], ("a.b", True, True, None, None, None)),
        (
            ["x", "--repo", "acme/calc", "--ref=main", "--path", "pkg/"],
            ("x", False, False, "acme/calc", "main", "pkg/"),
        ),
        (["--", "-x"], ("-x", False, False, None, None, None)),
    ],
)
def test_plain_forms_are_read(args: list[str], read: tuple[object, ...]) -> None:
    given = plain_args(args)
    assert given is not None
    assert (given.pattern, given.ignore_case, given.regex, given.repo, given.ref, given.path) == read


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["-h"],
        ["--bogus", "x"],
        ["a", "b"],
        [""],
        ["x", "--repo"],
        ["x", "--ref="],
        ["-ix"],
        ["--", "a", "b"],
    ],
)
def test_other_forms_go_to_argparse(args: list[str]) -> None:
    assert plain_args(args) is None
