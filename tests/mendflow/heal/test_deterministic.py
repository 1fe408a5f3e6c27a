"""The offline healers on real breaks: a git repo, a commit that changes source only, the real pytest failure,
the analyzer, the fix applied with ``str.replace(old, new, 1)``, and pytest run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pygit2

from mendflow.contracts import ErrorCategory, FailureKind, TestFailure
from mendflow.heal.analyzer import analyze, read_failure
from mendflow.heal.changes import CommitChanges, commit_changes
from mendflow.heal.deterministic import Fix, deterministic_fixes, fix_signature
from tests.fixtures.repos import commit_files

# What the runner's plugin journals for each failure (mendflow_runner): the exception behind a collection
# error, its first line, the deepest frame inside the repository.
CAPTURE = """\
import json, os, traceback

def _cause(exc):
    if type(exc).__name__ == "CollectError":
        return exc.__cause__ or exc.__context__ or exc
    return exc

def pytest_exception_interact(node, call, report):
    if call.excinfo is None or not report.failed:
        return
    exc = _cause(call.excinfo.value)
    root = os.environ["MF_ROOT"]
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(root + os.sep):
            where = f"{os.path.relpath(frame.filename, root)}:{frame.lineno}"
    kind = "failed" if call.when == "call" and "::" in report.nodeid else "error"
    record = {"node_id": report.nodeid, "kind": kind, "exception": type(exc).__name__,
              "message": (str(exc).splitlines() or [""])[0], "location": where}
    with open(os.environ["MF_OUT"], "a") as out:
        out.write(json.dumps(record) + "\\n")
"""

CALC = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""


@dataclass
class Broken:
    repo: Path
    changes: CommitChanges
    test_path: str

    @property
    def test_text(self) -> str:
        return (self.repo / self.test_path).read_text()


def broken(tmp_path: Path, source: dict[str, str], test_path: str, test: str, after: dict[str, str | None]) -> Broken:
    """A repo whose test passes on the first commit; the second commit changes source files only."""
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo), initial_head="main")
    parent = commit_files(repo, {"pytest.ini": "[pytest]\n", **source, test_path: test}, "as shipped")
    assert run_pytest(repo, test_path)[0] == 0, "the test must pass before the change"
    commit = commit_files(repo, dict(after), "refactor")
    return Broken(repo, commit_changes(repo, parent, commit), test_path)


def run_pytest(repo: Path, test_path: str) -> tuple[int, list[TestFailure]]:
    plugin_dir = repo.parent / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "mf_capture.py").write_text(CAPTURE)
    out = repo.parent / "failures.jsonl"
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(repo), str(repo / "src")]),
        "MF_ROOT": str(repo),
        "MF_OUT": str(out),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mf_capture", test_path]
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    lines = out.read_text().splitlines() if out.exists() else []
    return done.returncode, [TestFailure(**json.loads(line)) for line in lines]


def first_failure(case: Broken) -> TestFailure:
    code, failures = run_pytest(case.repo, case.test_path)
    assert code != 0 and failures, "the change must break the test"
    return failures[0]


def apply(fix: Fix, text: str) -> str:
    for edit in fix.edits:
        assert edit.update is not None and edit.file_to_patch
        assert text.count(edit.update.old_str) == 1, edit.update.old_str
        text = text.replace(edit.update.old_str, edit.update.new_str, 1)
    return text


def heal(case: Broken) -> tuple[TestFailure, list[Fix], int]:
    """Analyze the real failure, apply the first fix to the real test file, run pytest again."""
    failure = first_failure(case)
    text = case.test_text
    assessment = analyze(failure, case.changes, text)
    fixes = deterministic_fixes(failure, assessment, case.changes, case.test_path, text)
    if fixes:
        (case.repo / case.test_path).write_text(apply(fixes[0], text))
    return failure, fixes, run_pytest(case.repo, case.test_path)[0]


TEST_RENAME = """\
from calc import add, sub


def test_add():
    assert add(1, 2) == 3


def test_add_again():
    assert add(2, 2) == 4 and sub(2, 2) == 0
"""


def test_renamed_function_import_and_uses_are_healed(tmp_path: Path) -> None:
    case = broken(
        tmp_path, {"calc.py": CALC}, "tests/test_calc.py", TEST_RENAME, {"calc.py": CALC.replace("add", "plus")}
    )
    failure, fixes, code = heal(case)
    assert read_failure(failure).category is ErrorCategory.IMPORT
    assert [f.rule for f in fixes] == ["rename"]
    assert len(fixes[0].edits) == 3  # the import, and each use
    assert code == 0
    assert "from calc import plus, sub" in case.test_text


def test_renamed_function_through_module_attribute_is_healed(tmp_path: Path) -> None:
    test = "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, {"calc.py": CALC.replace("add", "plus")})
    failure, fixes, code = heal(case)
    assert failure.exception == "AttributeError"
    assert [f.rule for f in fixes] == ["rename"] and code == 0
    assert "calc.plus(1, 2)" in case.test_text


def test_moved_function_import_is_split_to_its_new_module(tmp_path: Path) -> None:
    after = {"calc.py": "def add(a, b):\n    return a + b\n", "extra.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", TEST_RENAME, after)
    failure, fixes, code = heal(case)
    assert failure.kind is FailureKind.ERROR and failure.exception == "ImportError"
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith("from calc import add\nfrom extra import sub\n")


def test_moved_function_in_src_layout_is_healed(tmp_path: Path) -> None:
    source = {"src/pkg/__init__.py": "", "src/pkg/ops.py": CALC}
    test = "from pkg.ops import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
    after = {
        "src/pkg/ops.py": "def add(a, b):\n    return a + b\n",
        "src/pkg/more.py": "def sub(a, b):\n    return a - b\n",
    }
    case = broken(tmp_path, source, "tests/test_ops.py", test, after)
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith("from pkg.more import sub\n")


def test_moved_function_used_through_its_module_gets_the_new_module(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = "import pkg.ops\n\n\ndef test_sub():\n    assert pkg.ops.sub(3, 1) == 2 and pkg.ops.add(1, 1) == 2\n"
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    failure, fixes, code = heal(case)
    assert read_failure(failure).category is ErrorCategory.NAME
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert "import pkg.ops\nimport pkg.more\n" in case.test_text
    assert "pkg.more.sub(3, 1) == 2 and pkg.ops.add(1, 1)" in case.test_text


def test_moved_function_reached_through_its_package_gets_the_new_module(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "from pkg import ops\n", "pkg/ops.py": CALC}
    test = "import pkg\n\n\ndef test_sub():\n    assert pkg.ops.sub(3, 1) == 2\n"
    after = {
        "pkg/__init__.py": "from pkg import more, ops\n",
        "pkg/ops.py": "def add(a, b):\n    return a + b\n",
        "pkg/more.py": "def sub(a, b):\n    return a - b\n",
    }
    case = broken(tmp_path, source, "test_ops.py", test, after)
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith("import pkg\nimport pkg.more\n")
    assert "pkg.more.sub(3, 1) == 2" in case.test_text


MANY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(6))
TEST_MANY = """\
from pkg.ops import (f0, f1,
                     f2, f3, f4,
                     f5)  # the ops


def test_all():
    assert [f(0) for f in (f0, f1, f2, f3, f4, f5)] == [0, 1, 2, 3, 4, 5]
"""


def moved_out(name: str) -> dict[str, str | None]:
    """``pkg.ops.<name>`` moved to ``pkg.more``."""
    body = f"def {name}(x):\n    return x + {name[1:]}\n"
    return {"pkg/ops.py": MANY.replace(body, ""), "pkg/more.py": body}


def ruff_clean(text: str) -> bool:
    check = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E4,E7,E9,F,W", "--no-cache", "-"]
    return subprocess.run(check, input=text, capture_output=True, text=True).returncode == 0


def test_moved_name_leaves_a_parenthesised_import_and_gets_its_own(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": MANY}
    case = broken(tmp_path, source, "test_ops.py", TEST_MANY, moved_out("f3"))
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith(
        "from pkg.ops import (f0, f1,\n                     f2, f4,\n                     f5)  # the ops\n"
        "from pkg.more import f3\n\n"
    )
    assert len(fixes[0].edits) == 2 and ruff_clean(case.test_text)  # one line changed, one line added


def test_moved_name_alone_on_its_line_takes_the_line_with_it(tmp_path: Path) -> None:
    imports = "from pkg.ops import (\n    f0,\n    f1,\n    f2,\n    f3,\n    f4,\n    f5,\n)\n"
    test = imports + TEST_MANY.split(")  # the ops\n", 1)[1]
    case = broken(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": MANY}, "test_ops.py", test, moved_out("f4"))
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith(imports.replace("    f4,\n", "") + "from pkg.more import f4\n\n")
    assert ruff_clean(case.test_text)


def test_moved_function_used_through_a_from_imported_module_gets_the_new_module(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = "from pkg import ops\n\n\ndef test_sub():\n    assert ops.sub(3, 1) == 2\n"
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    failure, fixes, code = heal(case)
    assert read_failure(failure).category is ErrorCategory.NAME
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text == test.replace("import ops", "import more").replace("ops.sub", "more.sub")  # ops unused


def test_from_imported_module_still_used_stays_next_to_the_new_one(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = "from pkg import ops\n\n\ndef test_ops():\n    assert ops.sub(3, 1) == 2 and ops.add(1, 1) == 2\n"
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text.startswith("from pkg import ops, more\n")
    assert "more.sub(3, 1) == 2 and ops.add(1, 1)" in case.test_text and ruff_clean(case.test_text)


def test_module_looked_up_with_import_module_gets_the_new_module(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = "import importlib\n\n\ndef test_sub():\n    ops = importlib.import_module('pkg.ops')\n"
    test += "    assert ops.sub(3, 1) == 2\n"
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text == test.replace("'pkg.ops'", "'pkg.more'")  # ops only reached sub: one line changes


def test_import_module_lookup_still_used_keeps_the_old_module(tmp_path: Path) -> None:
    source = {"pkg/__init__.py": "", "pkg/ops.py": CALC}
    test = (
        "import importlib\n\n\ndef test_sub(monkeypatch):\n    ops = importlib.import_module('pkg.ops')\n"
        "    monkeypatch.setattr(ops, 'add', None)\n    assert ops.sub(3, 1) == 2\n"
    )
    after = {"pkg/ops.py": "def add(a, b):\n    return a + b\n", "pkg/more.py": "def sub(a, b):\n    return a - b\n"}
    case = broken(tmp_path, source, "test_ops.py", test, after)
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["moved_import"] and code == 0
    assert case.test_text == test.replace("ops.sub", "importlib.import_module('pkg.more').sub")


def test_renamed_keyword_argument_is_healed(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(a=1, b=2) == 3\n    assert add(1, b=5) == 6\n"
    after = {"calc.py": CALC.replace("def add(a, b):\n    return a + b", "def add(x, y):\n    return x + y")}
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, after)
    failure, fixes, code = heal(case)
    assert read_failure(failure).category is ErrorCategory.SIGNATURE
    assert [f.rule for f in fixes] == ["param_rename"] and code == 0
    assert "add(x=1, y=2)" in case.test_text and "add(1, y=5)" in case.test_text


def test_reordered_parameters_become_keywords(tmp_path: Path) -> None:
    source = {"seq.py": "def take(items, n):\n    return items[:n]\n"}
    test = "from seq import take\n\n\ndef test_take():\n    assert take([1, 2, 3], 2) == [1, 2]\n"
    case = broken(tmp_path, source, "test_seq.py", test, {"seq.py": "def take(n, items):\n    return items[:n]\n"})
    failure, fixes, code = heal(case)
    assert failure.exception == "TypeError"  # the body failed on the swapped values, not the call
    assert [f.rule for f in fixes] == ["signature"] and code == 0
    assert "take(items=[1, 2, 3], n=2)" in case.test_text


def test_removed_default_is_passed_explicitly(tmp_path: Path) -> None:
    source = {"m.py": "def power(x, n=2):\n    return x**n\n"}
    test = "from m import power\n\n\ndef test_square():\n    assert power(3) == 9\n"
    case = broken(tmp_path, source, "test_m.py", test, {"m.py": "def power(x, n):\n    return x**n\n"})
    _, fixes, code = heal(case)
    assert [f.rule for f in fixes] == ["signature"] and code == 0
    assert "power(3, n=2)" in case.test_text


def test_renamed_method_is_healed(tmp_path: Path) -> None:
    cls = "class Calc:\n    def add(self, a, b):\n        return a + b\n"
    test = "from calc import Calc\n\n\ndef test_add():\n    c = Calc()\n    assert c.add(1, 2) == 3\n"
    case = broken(tmp_path, {"calc.py": cls}, "test_calc.py", test, {"calc.py": cls.replace("def add", "def plus")})
    failure, fixes, code = heal(case)
    assert read_failure(failure).owner == "Calc"
    assert [f.rule for f in fixes] == ["rename"] and code == 0
    assert "c.plus(1, 2)" in case.test_text


def test_parameter_added_with_default_needs_nothing(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    after = {"calc.py": CALC.replace("def add(a, b):", "def add(a, b, c=0):").replace("a + b\n", "a + b + c\n", 1)}
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, after)
    assert case.changes.signature_change("add") is not None
    assert (
        fix_signature(read_failure(TestFailure(node_id="x", kind=FailureKind.FAILED)), case.changes, "t", test) is None
    )
    assert run_pytest(case.repo, case.test_path)[0] == 0


def test_removed_parameter_still_passed_is_ambiguous_no_fix(tmp_path: Path) -> None:
    source = {"m.py": "def area(w, h, unit):\n    return f'{w * h}{unit}'\n"}
    test = "from m import area\n\n\ndef test_area():\n    assert area(2, 3, 'm') == '6m'\n"
    case = broken(tmp_path, source, "test_m.py", test, {"m.py": "def area(w, h):\n    return f'{w * h}m'\n"})
    failure = first_failure(case)
    assessment = analyze(failure, case.changes, case.test_text)
    assert assessment.category is ErrorCategory.SIGNATURE and assessment.explained_by_change
    assert deterministic_fixes(failure, assessment, case.changes, case.test_path, case.test_text) == []


def test_behaviour_change_gets_no_fix(tmp_path: Path) -> None:
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, {"calc.py": CALC.replace("a + b", "a + b + 1")})
    failure = first_failure(case)
    assessment = analyze(failure, case.changes, case.test_text)
    assert deterministic_fixes(failure, assessment, case.changes, case.test_path, case.test_text) == []


def test_old_str_repeated_elsewhere_is_made_unique_with_its_neighbours(tmp_path: Path) -> None:
    test = (
        "import calc\n\n\ndef test_one():\n    x = calc.add(1, 2)\n    assert x == 3\n\n\n"
        "def test_two():\n    x = calc.add(1, 2)\n    assert x == 3 + 0\n"
    )
    case = broken(tmp_path, {"calc.py": CALC}, "test_calc.py", test, {"calc.py": CALC.replace("add", "plus")})
    _, fixes, code = heal(case)
    assert len(fixes[0].edits) == 2 and code == 0
    olds = [e.update.old_str for e in fixes[0].edits if e.update is not None]
    assert olds[0].count("\n") > 1  # the repeated line, with enough context to be unique
    assert olds[1] == "    x = calc.add(1, 2)\n"  # unique once the other one is healed
