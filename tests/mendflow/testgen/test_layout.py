"""Where the test builder writes a target's tests."""

from __future__ import annotations

from pathlib import Path

import pygit2

from mendflow.testgen import layout
from mendflow.testgen.layout import test_file_for as file_for
from tests.mendflow.plan.helpers import new_repo


def tree_of(path: Path, files: dict[str, str | bytes | None]) -> pygit2.Tree:
    repo = pygit2.Repository(str(new_repo(path, files)))
    return repo.head.peel(pygit2.Commit).tree


def test_a_targets_tests_go_to_a_file_named_after_its_module(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"calc.py": "X = 1\n"})
    assert file_for("calc.py", "tests", {}, tree) == "tests/test_calc_mendflow.py"


def test_two_modules_of_one_name_get_their_package_in_the_name(tmp_path: Path) -> None:
    tree, taken = tree_of(tmp_path, {"calc.py": "X = 1\n"}), {}
    assert file_for("calc.py", "tests", taken, tree) == "tests/test_calc_mendflow.py"
    assert file_for("pkg/calc.py", "tests", taken, tree) == "tests/test_pkg_calc_mendflow.py"


def test_earlier_generated_tests_are_never_overwritten(tmp_path: Path) -> None:
    earlier = {"calc.py": "X = 1\n", "tests/test_calc_mendflow.py": "def test_x(): pass\n"}
    tree = tree_of(tmp_path, {**earlier, "tests/test_calc_2_mendflow.py": "def test_y(): pass\n"})
    assert file_for("calc.py", "tests", {}, tree) == "tests/test_calc_3_mendflow.py"


def test_tests_go_where_pytests_testpaths_point(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"tox.ini": "[pytest]\ntestpaths = testing\n", "testing/test_a.py": "", "tests/x.py": ""})
    assert layout.tests_dir(tree) == "testing"


def test_the_first_testpath_that_is_a_directory_counts(tmp_path: Path) -> None:
    config = '[tool.pytest.ini_options]\ntestpaths = ["docs/*.rst", "README.md", "src/pkg/tests"]\n'
    files = {"pyproject.toml": config, "README.md": "", "src/pkg/tests/test_a.py": ""}
    assert layout.tests_dir(tree_of(tmp_path, files)) == "src/pkg/tests"


def test_pytest_ini_wins_over_pyproject_as_in_pytest(tmp_path: Path) -> None:
    files = {
        "pytest.ini": "[pytest]\naddopts = -q\n",
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["testing"]\n',
        "testing/test_a.py": "",
        "test/test_b.py": "",
    }
    assert layout.tests_dir(tree_of(tmp_path, files)) == "test"


def test_without_testpaths_tests_go_to_tests(tmp_path: Path) -> None:
    assert layout.tests_dir(tree_of(tmp_path, {"setup.cfg": "[tool:pytest]\naddopts = -q\n", "calc.py": ""})) == "tests"


def test_a_candidate_under_a_nested_tests_dir_is_accepted(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"src/pkg/tests/test_a.py": ""})
    assert layout.check_candidate("src/pkg/tests/test_b_mendflow.py", "", "src/pkg/tests", tree) is None
    assert layout.check_candidate("src/pkg/test_b_mendflow.py", "", "src/pkg/tests", tree) is not None


def test_a_testpath_named_like_tests_wins_over_a_source_dir(tmp_path: Path) -> None:
    config = '[tool.pytest]\ntestpaths = ["src", "tests"]\n'  # pytest 9's table; src for its doctests
    files = {"pyproject.toml": config, "src/pkg/__init__.py": "", "tests/test_a.py": ""}
    assert layout.tests_dir(tree_of(tmp_path, files)) == "tests"
