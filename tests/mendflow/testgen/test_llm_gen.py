"""Checks on what the LLM proposes, before anything reaches the sandbox."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from mendflow.contracts import DropReason, HealMethod
from mendflow.testgen.layout import MAX_FILE_BYTES
from mendflow.testgen.llm_gen import FileDraft, TestDraft, materialise, repair_messages
from tests.fixtures.repos import RepoFactory

EXISTING = "def test_one():\n    assert 1\n"


@pytest.fixture
def tree(make_repo: RepoFactory) -> pygit2.Tree:
    path: Path = make_repo({"half.py": "x = 1\n", "tests/test_half.py": EXISTING})
    (path / "tests" / "linked").symlink_to("/etc")
    repo = pygit2.Repository(str(path))
    repo.index.add_all()
    repo.index.write()
    tree_id = repo.index.write_tree()
    sig = pygit2.Signature("t", "t@t")
    repo.create_commit("HEAD", sig, sig, "a symlinked dir under tests/", tree_id, [repo.head.target])
    return repo.head.peel(pygit2.Commit).tree


@pytest.mark.parametrize(
    "path",
    [
        "half.py",
        "../tests/test_x.py",
        "/tmp/tests/test_x.py",
        "tests/../half.py",
        "tests/linked/test_x.py",
        "tests/data.json",
        "src/tests/test_x.py",
    ],
)
def test_files_outside_the_tests_dir_are_rejected(tree: pygit2.Tree, path: str) -> None:
    files, rejected = materialise(
        TestDraft(files=[FileDraft(path=path, content="def test_a(): pass\n")]), tree, "tests"
    )
    assert files == {}
    assert [r.reason for r in rejected] == [DropReason.OUTSIDE_TESTS_DIR]


def test_oversize_files_are_rejected(tree: pygit2.Tree) -> None:
    big = "x = 1\n" * (MAX_FILE_BYTES // 6 + 10)
    _, rejected = materialise(TestDraft(files=[FileDraft(path="tests/test_big.py", content=big)]), tree, "tests")
    assert [r.reason for r in rejected] == [DropReason.OVERSIZE]


def test_a_unified_diff_adding_and_editing_test_files_is_applied(tree: pygit2.Tree) -> None:
    diff = (
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    assert True\n"
        "--- a/tests/test_half.py\n+++ b/tests/test_half.py\n@@ -1,2 +1,2 @@\n def test_one():\n-    assert 1\n"
        "+    assert 1 == 1\n"
    )
    files, rejected = materialise(TestDraft(diff=diff), tree, "tests")
    assert rejected == []
    assert files == {
        "tests/test_new.py": "def test_new():\n    assert True\n",
        "tests/test_half.py": "def test_one():\n    assert 1 == 1\n",
    }


def test_a_diff_touching_source_code_is_rejected(tree: pygit2.Tree) -> None:
    diff = "--- a/half.py\n+++ b/half.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    files, rejected = materialise(TestDraft(diff=diff), tree, "tests")
    assert files == {} and [r.reason for r in rejected] == [DropReason.OUTSIDE_TESTS_DIR]


def test_a_diff_that_does_not_match_the_file_is_unparsable(tree: pygit2.Tree) -> None:
    diff = "--- a/tests/test_half.py\n+++ b/tests/test_half.py\n@@ -1,1 +1,1 @@\n-def test_other():\n+def test_x():\n"
    _, rejected = materialise(TestDraft(diff=diff), tree, "tests")
    assert [r.reason for r in rejected] == [DropReason.UNPARSABLE]


# -- repairs ------------------------------------------------------------------------------------------------

WRONG = "import pytest\n\nfrom half import half\n\n\ndef test_half_of_four():\n    assert half(4) == 3\n"


def test_a_repair_ask_shows_the_feedback_the_numbered_file_and_the_method() -> None:
    system, user = repair_messages(
        "tests/t.py", WRONG, "tests/t.py::test_half_of_four fails", "# half.py", HealMethod.PATCH, "it was refused"
    )
    assert "Never test less" in system["content"]
    text = user["content"]
    assert "tests/t.py::test_half_of_four fails" in text and "   7 |     assert half(4) == 3" in text
    assert "THE PREVIOUS ATTEMPT FAILED" in text and "it was refused" in text and '"patch" payload' in text
