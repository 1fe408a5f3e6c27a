"""commit_changes on real git repositories: one commit, one kind of change, read back with pygit2 and ast."""

from __future__ import annotations

from pathlib import Path

import pygit2

from mendflow.heal.changes import CommitChanges, commit_changes, module_name
from tests.fixtures.repos import commit_files

CALC = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""


def change(tmp_path: Path, before: dict[str, str | None], after: dict[str, str | None]) -> CommitChanges:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo), initial_head="main")
    parent = commit_files(repo, dict(before), "before")
    commit = commit_files(repo, dict(after), "after")
    return commit_changes(repo, parent, commit)


def test_function_renamed_in_its_module(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": CALC.replace("def add", "def plus")})
    assert got.renamed_to("calc", "add") == "plus"
    assert [r.describe() for r in got.renames] == ["calc.add renamed to calc.plus"]
    assert got.removed == ()


def test_recursive_function_renamed_with_its_own_calls(tmp_path: Path) -> None:
    fact = "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n"
    got = change(tmp_path, {"m.py": fact}, {"m.py": fact.replace("fact", "factorial")})
    assert got.renamed_to("m", "fact") == "factorial"


def test_changed_body_with_new_name_is_a_removal_not_a_rename(tmp_path: Path) -> None:
    after = CALC.replace("def add(a, b):\n    return a + b", "def plus(a, b):\n    return a + b + 1")
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": after})
    assert got.renames == ()
    assert got.removed_names() == {"add"}


def test_function_moved_to_another_module(tmp_path: Path) -> None:
    got = change(
        tmp_path,
        {"calc.py": CALC},
        {"calc.py": "def add(a, b):\n    return a + b\n", "extra.py": "def sub(a, b):\n    return a - b\n"},
    )
    assert got.moved_to("calc", "sub") == "extra"
    assert [m.describe() for m in got.moves] == ["calc.sub moved to extra.sub"]


def test_move_in_src_layout_uses_package_modules(tmp_path: Path) -> None:
    got = change(
        tmp_path,
        {"src/pkg/__init__.py": "", "src/pkg/ops.py": CALC},
        {
            "src/pkg/ops.py": "def add(a, b):\n    return a + b\n",
            "src/pkg/more.py": "def sub(a, b):\n    return a - b\n",
        },
    )
    assert got.moved_to("pkg.ops", "sub") == "pkg.more"
    assert got.modules["pkg.more"] == "src/pkg/more.py"


def test_module_renamed_moves_all_its_symbols(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": None, "arith.py": CALC})
    assert {(m.name, m.old_module, m.new_module) for m in got.moves} == {
        ("add", "calc", "arith"),
        ("sub", "calc", "arith"),
    }


def test_parameter_renamed(tmp_path: Path) -> None:
    got = change(
        tmp_path,
        {"calc.py": CALC},
        {"calc.py": CALC.replace("def add(a, b):\n    return a + b", "def add(x, b):\n    return x + b")},
    )
    assert got.param_renames("add") == {"a": "x"}
    assert got.signature_changes == ()


def test_parameters_swapped_is_a_reorder_not_a_rename(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": CALC.replace("def sub(a, b)", "def sub(b, a)")})
    sc = got.signature_change("sub")
    assert sc is not None and sc.reordered
    assert got.param_renames("sub") == {}


def test_parameter_added_with_default(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": CALC.replace("def add(a, b)", "def add(a, b, c=0)")})
    sc = got.signature_change("add")
    assert sc is not None
    assert [(p.name, p.default) for p in sc.added] == [("c", "0")]
    assert not sc.reordered and sc.removed == ()


def test_default_removed_is_a_signature_change(tmp_path: Path) -> None:
    before = "def power(x, n=2):\n    return x**n\n"
    got = change(tmp_path, {"m.py": before}, {"m.py": before.replace("n=2", "n")})
    sc = got.signature_change("power")
    assert sc is not None and sc.describe() == "signature of m.power changed: (x, n=2) → (x, n)"


def test_method_renamed_on_a_class(tmp_path: Path) -> None:
    cls = "class Calc:\n    def add(self, a, b):\n        return a + b\n"
    got = change(tmp_path, {"calc.py": cls}, {"calc.py": cls.replace("def add", "def plus")})
    assert got.renamed_to("calc", "Calc.add") == "Calc.plus"
    assert got.renames[0].kind == "method"


def test_class_renamed_takes_its_methods_along(tmp_path: Path) -> None:
    cls = "class Calc:\n    def add(self, a, b):\n        return a + b\n"
    got = change(tmp_path, {"calc.py": cls}, {"calc.py": cls.replace("class Calc", "class Calculator")})
    assert got.renamed_to("calc", "Calc") == "Calculator"
    assert got.removed == ()


def test_removed_function_is_reported(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": "def add(a, b):\n    return a + b\n"})
    assert got.removed_names() == {"sub"}
    assert got.moves == () and got.renames == ()


def test_file_that_does_not_parse_is_ignored(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC, "b.py": "x = 1\n"}, {"calc.py": "def plus(:\n", "b.py": "x = 2\n"})
    assert got.empty


def test_changed_line_ranges_per_file(tmp_path: Path) -> None:
    got = change(tmp_path, {"calc.py": CALC}, {"calc.py": CALC.replace("a - b", "b - a")})
    assert got.changed_lines == {"calc.py": ((6, 6),)}
    assert got.touches("calc.py", 6) and not got.touches("calc.py", 2)


def test_same_commit_changes_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo), initial_head="main")
    sha = commit_files(repo, {"calc.py": CALC})
    assert commit_changes(repo, sha, sha).empty


def test_module_names_are_src_layout_aware() -> None:
    assert module_name("src/pkg/mod.py") == "pkg.mod"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("calc.py") == "calc"
