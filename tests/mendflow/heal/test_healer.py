"""One healing round (``mendflow/heal/healer.py``) on a real two-commit repository, with the scripted LLM.

The commit turns ``area(width, height)`` into ``area(size)``: no deterministic rule maps that call, so the LLM
is asked, and what it answers is applied, escalated, gated and recorded as the seed says.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2
import pytest

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    CheckStatus,
    ErrorCategory,
    FailureKind,
    HealAttempt,
    HealMethod,
    Scope,
    TestFailure,
    is_test_file,
)
from mendflow.errors import HealError
from mendflow.heal.audit import AuditTrail
from mendflow.heal.changes import commit_changes
from mendflow.heal.checklist import checklist_from
from mendflow.heal.healer import Files, Healer
from mendflow.heal.knowledge import KnowledgeBase
from mendflow.keys import RepoKeys
from mendflow.llm import LLMClient
from mendflow.store.file import FileStore
from tests.fixtures.llm_server import LLMServer, llm_settings
from tests.fixtures.repos import commit_files

TEST = "tests/test_shapes.py"
TESTS = (
    "from shapes import area\n\n\ndef test_area() -> None:\n    assert area(2, 3) == 6\n\n\n"
    "def test_square() -> None:\n    assert area(2, 2) == 4\n"
)
BEFORE = "def area(width: float, height: float) -> float:\n    return width * height\n"
AFTER = "def area(size: tuple[float, float]) -> float:\n    return size[0] * size[1]\n"
FAILURE = TestFailure(
    node_id=f"{TEST}::test_area",
    kind=FailureKind.FAILED,
    exception="TypeError",
    message="area() takes 1 positional argument but 2 were given",
    location=f"{TEST}:5",
)


@pytest.fixture
def healer(make_repo: Any, tmp_path: Path, scripted_llm: LLMServer) -> Healer:
    path = make_repo({"shapes.py": BEFORE, TEST: TESTS}, name="shapes")
    sha = commit_files(path, {"shapes.py": AFTER}, "area takes a pair")
    store = FileStore(tmp_path / "store")
    kb = KnowledgeBase(store, rng=random.Random(7))
    audit = AuditTrail(store, RepoKeys("local/shapes"), sha, "B1")
    files = Files(pygit2.Repository(str(path)), sha, is_test_file)
    changes = commit_changes(path, str(files.repo[sha].peel(pygit2.Commit).parent_ids[0]), sha)
    return Healer(files, changes, kb, audit, "local/shapes", LLMClient(llm_settings(scripted_llm)))


def failed_report(sha: str) -> BuildReport:
    return BuildReport(
        repo="local/shapes", commit_sha=sha, stage="B1", status=BuildStatus.FAILED,
        failed_tests=[FAILURE.node_id], failures=[FAILURE],
    )  # fmt: skip


def methods_asked(server: LLMServer) -> list[str]:
    return [r["messages"][1]["content"].rsplit("Answer with a ", 1)[1].split(" ", 1)[0] for r in server.chat_requests()]


def test_an_update_whose_old_str_is_not_unique_escalates_to_a_patch(healer: Healer, scripted_llm: LLMServer) -> None:
    checklist = checklist_from(failed_report(healer.files.commit))
    scripted_llm.reply({"file_to_patch": TEST, "update": {"old_str": "assert area(", "new_str": "assert area(("}})
    patch = f"--- a/{TEST}\n+++ b/{TEST}\n@@ -5 +5 @@\n-    assert area(2, 3) == 6\n+    assert area((2, 3)) == 6\n"
    scripted_llm.reply({"file_to_patch": TEST, "patch": patch})

    repairs = healer.repair(checklist, {FAILURE.node_id: FAILURE})

    history = checklist.entries[0].history
    assert "occurs 2 times" in history[0].error and history[0].method is HealMethod.UPDATE
    assert [r.attempt.method for r in repairs] == [HealMethod.PATCH]
    assert "assert area((2, 3)) == 6" in healer.files.changed[TEST]


def test_a_patch_that_does_not_apply_escalates_to_a_rewrite(healer: Healer, scripted_llm: LLMServer) -> None:
    checklist = checklist_from(failed_report(healer.files.commit))
    stale = f"--- a/{TEST}\n+++ b/{TEST}\n@@ -5 +5 @@\n-    assert area(2, 3) == 7\n+    assert area((2, 3)) == 6\n"
    scripted_llm.reply({"file_to_patch": TEST, "update": {"old_str": "assert area(", "new_str": "x"}})
    scripted_llm.reply({"file_to_patch": TEST, "patch": stale})
    scripted_llm.reply({"file_to_patch": TEST, "new_content": TESTS.replace("area(2, 3)", "area((2, 3))")})

    repairs = healer.repair(checklist, {FAILURE.node_id: FAILURE})

    assert [a.method for a in checklist.entries[0].history] == [HealMethod.UPDATE, HealMethod.PATCH]
    assert "does not apply" in checklist.entries[0].history[1].error
    assert [r.attempt.method for r in repairs] == [HealMethod.REWRITE]


def test_each_retry_tells_the_llm_why_the_last_one_failed(healer: Healer, scripted_llm: LLMServer) -> None:
    checklist = checklist_from(failed_report(healer.files.commit))
    scripted_llm.reply({"file_to_patch": TEST, "update": {"old_str": "assert area(", "new_str": "x"}})
    scripted_llm.reply({"file_to_patch": TEST, "new_content": TESTS.replace("area(2, 3)", "area((2, 3))")})

    healer.repair(checklist, {FAILURE.node_id: FAILURE})

    assert "occurs 2 times" in scripted_llm.chat_requests()[1]["messages"][1]["content"]


def test_the_learned_method_is_asked_for_first(healer: Healer, scripted_llm: LLMServer) -> None:
    model = f"llm:{healer.llm.settings.model if healer.llm else ''}"
    outcomes = ((HealMethod.PATCH, True), (HealMethod.UPDATE, False), (HealMethod.REWRITE, False))
    for i in range(20):  # patches have always worked for signature breaks with this model; the others never
        for method, success in outcomes:
            attempt = HealAttempt(
                repo="acme/x", commit_sha="c", test_id=f"t{i}", category=ErrorCategory.SIGNATURE,
                scope=Scope.LOCAL, healer=model, method=method, success=success, at=datetime.now(UTC),
            )  # fmt: skip
            healer.kb.record(attempt)
    scripted_llm.reply({"file_to_patch": TEST, "new_content": TESTS.replace("area(2, 3)", "area((2, 3))")})

    healer.repair(checklist_from(failed_report(healer.files.commit)), {FAILURE.node_id: FAILURE})

    assert methods_asked(scripted_llm) == ['"patch"']


def test_a_passing_rerun_heals_the_test_and_teaches_the_knowledge_base(healer: Healer, scripted_llm: LLMServer) -> None:
    checklist = checklist_from(failed_report(healer.files.commit))
    scripted_llm.reply({"file_to_patch": TEST, "new_content": TESTS.replace("area(2, 3)", "area((2, 3))")})
    repairs = healer.repair(checklist, {FAILURE.node_id: FAILURE})
    rerun = BuildReport(
        repo="local/shapes", commit_sha="healed", stage="B1-H1", status=BuildStatus.PASSED, selected=[FAILURE.node_id]
    )

    healer.judge(checklist, repairs, rerun)

    assert checklist.entries[0].status is CheckStatus.HEALED
    assert [(a.category, a.success) for a in healer.kb.attempts()] == [(ErrorCategory.SIGNATURE, True)]


# -- what healing may read and change: the failing commit's blobs, never the work tree ---------------------------


@pytest.fixture
def files(make_repo: Any) -> Files:
    path = make_repo({"shapes.py": BEFORE, TEST: TESTS, "tests/big_test.py": "x = 1\n" + "#" * 300_000})
    repo = pygit2.Repository(str(path))
    (path / "tests" / "test_link.py").symlink_to(path / "shapes.py")
    sha = commit_files(path, {}, "a link")  # git records it as a link, whatever it points at
    return Files(repo, sha, is_test_file)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../x.py", "must be normalised"),
        ("tests/../../x.py", "must be normalised"),
        ("./tests/test_shapes.py", "must be normalised"),
        ("/etc/passwd", "must be relative"),
        ("tests/test_missing.py", "is not in commit"),
        ("shapes.py", "not a file healing may change"),
        ("tests/big_test.py", "larger than 256 KiB"),
        ("tests/test_link.py", "not a regular file"),
    ],
)
def test_a_path_outside_the_policy_or_the_commit_is_refused(files: Files, path: str, reason: str) -> None:
    with pytest.raises(HealError, match=reason):
        files.read(path)


def test_a_repaired_file_is_read_back_as_repaired(files: Files) -> None:
    files.write(TEST, "def test_area() -> None:\n    assert True\n")
    assert files.read(TEST).startswith("def test_area")
