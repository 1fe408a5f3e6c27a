"""Which lint findings a commit brought: file, code and message compared, lines not, counts kept."""

from __future__ import annotations

from mendflow.findings import parse, split_new

UNUSED = "pkg/a.py:3:8 F401 `os` imported but unused"


def test_a_finding_that_moved_lines_is_pre_existing() -> None:
    assert split_new(["pkg/a.py:9:8 F401 `os` imported but unused"], [UNUSED]) == (
        [],
        ["pkg/a.py:9:8 F401 `os` imported but unused"],
    )


def test_a_second_identical_finding_is_new() -> None:
    again = "pkg/a.py:4:8 F401 `os` imported but unused"
    assert split_new([UNUSED, again], [UNUSED]) == ([again], [UNUSED])


def test_the_same_code_in_another_file_is_new() -> None:
    other = "pkg/b.py:3:8 F401 `os` imported but unused"
    assert split_new([other], [UNUSED]) == ([other], [])


def test_a_line_in_no_known_shape_is_compared_whole() -> None:
    assert split_new(["garbled", "garbled"], ["garbled"]) == (["garbled"], ["garbled"])


def test_a_mypy_finding_parses_with_its_code() -> None:
    found = parse("src/m.py:12:5 mypy[arg-type] Argument 1 has incompatible type")
    assert found is not None and (found.path, found.code) == ("src/m.py", "mypy[arg-type]")
