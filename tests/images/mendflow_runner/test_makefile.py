"""What ``make test`` runs, read from the repository's Makefile."""

from __future__ import annotations

from pathlib import Path

from mendflow_runner.makefile import commands_for_tests, exported

# aiomultiprocess 0.9.1's, as published.
AIOMULTIPROCESS = """\
PKG:=aiomultiprocess

.venv:
\tpython -m venv .venv

test:
\tpython -m coverage run -m $(PKG).tests
\tpython -m coverage combine
"""


def _recipes(tmp_path: Path, text: str, name: str = "Makefile") -> list[str]:
    (tmp_path / name).write_text(text)
    return commands_for_tests(tmp_path)


def test_a_test_targets_lines_are_its_commands_with_variables_expanded(tmp_path: Path) -> None:
    expected = ["python -m coverage run -m aiomultiprocess.tests", "python -m coverage combine"]
    assert _recipes(tmp_path, AIOMULTIPROCESS) == expected


def test_make_marks_and_continued_lines_are_read_as_make_runs_them(tmp_path: Path) -> None:
    text = "PYTHON ?= python3\nARGS = -q\nARGS += -x\ntest:\n\t@$(PYTHON) -m pytest ${ARGS} \\\n\t  tests\n"
    assert _recipes(tmp_path, text) == ["python3 -m pytest -q -x tests"]


def test_a_prerequisite_named_for_tests_runs_first_and_others_are_left_out(tmp_path: Path) -> None:
    text = ".PHONY: test\ntest: lint test-unit\n\tpytest tests/e2e\nlint:\n\truff check .\n"
    text += "test-unit:\n\tpytest tests/unit\n"
    assert _recipes(tmp_path, text, "makefile") == ["pytest tests/unit", "pytest tests/e2e"]


def test_a_blank_or_comment_line_goes_on_with_the_rule(tmp_path: Path) -> None:
    assert _recipes(tmp_path, "test:\n\tpytest unit\n\n# then\n\tpytest e2e\nlint:\n\truff .\n") == [
        "pytest unit",
        "pytest e2e",
    ]


def test_a_line_of_several_commands_is_each_of_them(tmp_path: Path) -> None:
    assert _recipes(tmp_path, "tests:\n\tcd src && python -m unittest discover\n") == [
        "cd src",
        "python -m unittest discover",
    ]


def test_a_line_only_make_can_evaluate_is_left_out(tmp_path: Path) -> None:
    text = "test:\n\t$(shell ./find-tests) | xargs pytest\n\tpytest $@.py\n\techo $$HOME\n"
    assert _recipes(tmp_path, text) == ["echo $HOME"]


def test_no_makefile_runs_nothing(tmp_path: Path) -> None:
    assert commands_for_tests(tmp_path) == []


def test_the_variables_a_makefile_exports_are_read_expanded(tmp_path: Path) -> None:
    # django-formtools 2.7's Makefile
    text = "APP = tests\nexport DJANGO_SETTINGS_MODULE = $(APP).settings\nLOCAL = x\n\ntest:\n\tdjango-admin test\n"
    (tmp_path / "Makefile").write_text(text)
    assert exported(tmp_path) == {"DJANGO_SETTINGS_MODULE": "tests.settings"}
