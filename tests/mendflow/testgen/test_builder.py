"""build_tests end to end: scripted LLM answers, the real local launcher running the gates in the sandbox,
a real file store and a real git repository."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from mendflow.contracts import BuildStatus, DropReason, GeneratedTests, TestSpec
from mendflow.launcher.local import LocalLauncher
from mendflow.llm import LLMClient
from mendflow.plan import plan_tests
from mendflow.settings import Settings
from mendflow.store.file import FileStore
from mendflow.testgen import build_tests
from mendflow.testgen.commit import branch_for
from tests.fixtures.listener import Listener
from tests.fixtures.llm_server import LLMServer, llm_settings
from tests.mendflow.plan.helpers import measured_report, new_repo

pytestmark = pytest.mark.slow

SOURCE = """\
def half(x):
    if x % 2:
        raise ValueError("odd")
    return x // 2


def twice(x):
    return 2 * x
"""
EXISTING = "from half import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"
GENERATED = """\
from pathlib import Path

import pytest

from half import half, twice


def test_half_of_an_odd_number_raises():
    with pytest.raises(ValueError):
        half(3)


def test_half_of_four_is_two():
    assert half(4) == 2


def test_half_of_four_repeated():
    assert half(4) == 2, "adds nothing beyond test_half_of_four_is_two"


def test_twice_of_three():
    assert twice(3) == 6, "twice is covered already"


def test_half_flips():
    flag = Path(__file__).with_name(".mendflow-flip")  # /tmp is fresh per run in the sandbox; the source is not
    n = int(flag.read_text()) if flag.exists() else 0
    flag.write_text(str(n + 1))
    assert n % 2 == 0 and half(8) == 4


def test_half_is_wrong():
    assert half(6) == 4
"""
SECRET = (
    GENERATED.split("\n\n\ndef test_half_of_four_repeated")[0]
    + '\n\n\nAWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\n'  # after the imports: lint-clean, so only the scan stops it
)


@dataclass
class Setup:
    repo: Path
    spec: TestSpec
    settings: Settings
    store: FileStore


def _setup(root: Path, files: dict[str, str] | None = None) -> Setup:
    repo = new_repo(root / "repo", files or {"half.py": SOURCE, "tests/test_half.py": EXISTING})
    report = measured_report(repo)
    shutil.rmtree(repo / ".coverage-data")
    settings = Settings(_env_file=None, state_dir=root / "state", cache_dir=root / "cache")  # type: ignore[call-arg]
    return Setup(repo, plan_tests(report, repo, None, settings), settings, FileStore(root / "store"))


def _build(s: Setup, server: LLMServer, answer: str) -> GeneratedTests:
    server.reply({"files": [{"path": "tests/test_half_mendflow.py", "content": answer}]})
    return _build_with(s, server)


def _build_with(s: Setup, server: LLMServer) -> GeneratedTests:
    """build_tests with the answers ``server`` has queued (the draft first, then the repairs)."""
    llm = LLMClient(llm_settings(server, max_retries=0))
    return build_tests(s.spec, s.repo, s.settings, llm=llm, store=s.store, launcher=LocalLauncher(s.settings))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, llm_server: LLMServer) -> Iterator[tuple[Setup, GeneratedTests]]:
    llm_server.reset()
    s = _setup(tmp_path_factory.mktemp("builder"))
    # test_half_is_wrong fails, so round 1 asks for its repair: no answer is scripted, the LLM error ends the
    # repairs and round 0's outcome stands.
    yield s, _build(s, llm_server, GENERATED)
    llm_server.reset()


def _reasons(result: GeneratedTests) -> dict[str, DropReason]:
    return {d.node_id.rsplit("::", 1)[-1]: d.reason for d in result.dropped}


def test_a_good_test_is_kept_and_committed_on_the_spec_branch(built: tuple[Setup, GeneratedTests]) -> None:
    s, result = built
    repo = pygit2.Repository(str(s.repo))
    commit = repo.revparse_single(branch_for(s.spec.id)).peel(pygit2.Commit)

    assert result.precheck is BuildStatus.PASSED
    assert {k.node_id.rsplit("::", 1)[-1] for k in result.kept} == {
        "test_half_of_an_odd_number_raises",
        "test_half_of_four_is_two",
    }
    assert str(commit.id) == result.commit_sha
    assert [str(p.id) for p in commit.parents] == [s.spec.parent_commit_sha]
    assert s.spec.id in commit.message and "half.py::half: +" in commit.message
    committed = commit.tree["tests/test_half_mendflow.py"].data.decode()
    assert "def test_half_of_four_is_two" in committed and "test_half_flips" not in committed


def test_a_flaky_test_is_dropped_as_flaky(built: tuple[Setup, GeneratedTests]) -> None:
    assert _reasons(built[1])["test_half_flips"] is DropReason.FLAKY


def test_a_failing_test_is_dropped_as_failing(built: tuple[Setup, GeneratedTests]) -> None:
    assert _reasons(built[1])["test_half_is_wrong"] is DropReason.FAILS


def test_tests_adding_no_coverage_are_dropped(built: tuple[Setup, GeneratedTests]) -> None:
    reasons = _reasons(built[1])
    assert reasons["test_twice_of_three"] is DropReason.NO_COVERAGE_GAIN  # covers nothing the build missed
    assert reasons["test_half_of_four_repeated"] is DropReason.NO_COVERAGE_GAIN  # nothing beyond a kept test


def test_rebuilding_the_same_spec_does_not_add_a_commit(
    built: tuple[Setup, GeneratedTests], llm_server: LLMServer
) -> None:
    s, first = built
    again = _build(s, llm_server, GENERATED)

    assert again.commit_sha == first.commit_sha
    repo = pygit2.Repository(str(s.repo))
    walker = repo.walk(repo.revparse_single(branch_for(s.spec.id)).id)
    assert len(list(walker)) == 2  # the repo's one commit + ours


def test_a_secret_in_generated_tests_blocks_the_commit(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path)
    result = _build(s, scripted_llm, SECRET)

    assert result.precheck is BuildStatus.FAILED and result.commit_sha == ""
    assert any("secret found, commit blocked: tests/test_half_mendflow.py:" in n for n in result.notes)
    assert DropReason.SECRET in {d.reason for d in result.dropped}
    assert branch_for(s.spec.id) not in pygit2.Repository(str(s.repo)).branches.local
    assert "AKIA" not in result.model_dump_json()  # the finding is reported, never the secret


def test_an_answer_writing_outside_tests_is_rejected_after_the_repair_rounds(
    tmp_path: Path, scripted_llm: LLMServer
) -> None:
    s = _setup(tmp_path)
    for _ in range(3):
        scripted_llm.reply({"files": [{"path": "half.py", "content": "def half(x):\n    return 0\n"}]})
    result = build_tests(
        s.spec,
        s.repo,
        s.settings,
        llm=LLMClient(llm_settings(scripted_llm)),
        store=s.store,
        launcher=LocalLauncher(s.settings),
    )

    assert result.precheck is BuildStatus.FAILED and result.repair_rounds == 2
    assert {d.reason for d in result.dropped} == {DropReason.OUTSIDE_TESTS_DIR}
    feedback = scripted_llm.chat_requests()[1]["messages"][-1]["content"]
    assert "outside_tests_dir" in feedback


PROPOSED = "tests/test_half_mendflow.py"
WRONG = "from half import half\n\n\ndef test_half_of_four():\n    assert half(4) == 3\n"
RIGHT = WRONG.replace("== 3", "== 2")


def _edit(payload: dict[str, object], path: str = PROPOSED) -> dict[str, object]:
    """A HealEdit answer: reasoning, file_to_patch and the one payload."""
    return {"reasoning": "half(4) is 2", "file_to_patch": path, **payload}


def _repair_requests(server: LLMServer) -> list[str]:
    """The user messages of the repair asks (each after the first draft), in order."""
    return [r["messages"][-1]["content"] for r in server.chat_requests()[1:]]


def _committed(s: Setup, result: GeneratedTests) -> str:
    commit = pygit2.Repository(str(s.repo)).revparse_single(result.commit_sha).peel(pygit2.Commit)
    return str(commit.tree[PROPOSED].data.decode())


def test_a_failing_candidate_repaired_by_an_update_in_round_one_is_kept(
    tmp_path: Path, scripted_llm: LLMServer
) -> None:
    s = _setup(tmp_path)
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": WRONG}]})
    scripted_llm.reply(_edit({"update": {"old_str": "half(4) == 3", "new_str": "half(4) == 2"}}))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.PASSED and result.repair_rounds == 1, result.notes
    assert [k.node_id for k in result.kept] == [f"{PROPOSED}::test_half_of_four"]
    assert "assert half(4) == 2" in _committed(s, result)
    (ask,) = _repair_requests(scripted_llm)
    assert "test_half_of_four fails" in ask and "assert 2 == 3" in ask  # the gates' feedback
    assert '"update" payload' in ask and "   5 |     assert half(4) == 3" in ask  # the file, numbered
    assert f"repair round 1: {PROPOSED}: update applied" in result.notes


def test_an_update_whose_old_str_is_not_unique_escalates_to_a_patch_at_once(
    tmp_path: Path, scripted_llm: LLMServer
) -> None:
    s = _setup(tmp_path)
    wrong = WRONG.replace("of_four():\n", "of_four():\n    assert half(6) == 3\n")  # "== 3" twice
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": wrong}]})
    scripted_llm.reply(_edit({"update": {"old_str": "== 3", "new_str": "== 2"}}))
    patch = "@@ -6 +6 @@\n-    assert half(4) == 3\n+    assert half(4) == 2\n"  # line 5 is half(6)
    scripted_llm.reply(_edit({"patch": patch}))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.PASSED and result.repair_rounds == 1, result.notes  # one gate round
    assert "assert half(6) == 3\n    assert half(4) == 2\n" in _committed(s, result)
    first, second = _repair_requests(scripted_llm)
    assert '"update" payload' in first
    assert '"patch" payload' in second and "old_str occurs 2 times" in second  # the failed attempt, fed back
    (note,) = [n for n in result.notes if n.startswith("repair round 1:")]
    assert "update refused" in note and note.endswith("patch applied")


def test_a_patch_that_does_not_apply_escalates_to_a_rewrite_at_once(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path)
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": WRONG}]})
    scripted_llm.reply(_edit({"update": {"old_str": "half(4) == 5", "new_str": "half(4) == 2"}}))  # not in it
    scripted_llm.reply(_edit({"patch": "@@ -5 +5 @@\n-    assert half(4) == 5\n+    assert half(4) == 2\n"}))
    scripted_llm.reply(_edit({"new_content": RIGHT}))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.PASSED and result.repair_rounds == 1, result.notes
    asks = _repair_requests(scripted_llm)
    assert len(asks) == 3 and '"new_content" payload' in asks[2] and "does not apply" in asks[2]
    (note,) = [n for n in result.notes if n.startswith("repair round 1:")]
    assert "patch refused: hunk 1" in note and note.endswith("rewrite applied")


def test_an_edit_of_a_file_the_builder_did_not_propose_is_refused(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path)
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": WRONG}]})
    existing = "tests/test_half.py"  # in the repository, but not a candidate of this build
    scripted_llm.reply(_edit({"update": {"old_str": "twice(2) == 4", "new_str": "True"}}, existing))
    scripted_llm.reply(_edit({"patch": "@@ -5 +5 @@\n-    assert twice(2) == 4\n+    assert True\n"}, existing))
    scripted_llm.reply(_edit({"new_content": "def test_twice():\n    assert True\n"}, existing))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.FAILED and not result.kept and result.repair_rounds == 1
    (note,) = [n for n in result.notes if n.startswith("repair round 1:")]
    assert note.count(f"only {PROPOSED}, the failing candidate shown, may be edited") == 3
    assert all(not d.detail.startswith("round 1:") for d in result.dropped)  # nothing changed: no second gate run


def test_a_repair_that_deletes_the_asserts_is_refused(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path)
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": WRONG}]})
    scripted_llm.reply(_edit({"update": {"old_str": "    assert half(4) == 3", "new_str": "    half(4)"}}))
    scripted_llm.reply(_edit({"patch": "@@ -5 +5 @@\n-    assert half(4) == 3\n+    half(4)\n"}))
    scripted_llm.reply(_edit({"new_content": WRONG.replace("assert half(4) == 3", "half(4)")}))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.FAILED and not result.kept
    (note,) = [n for n in result.notes if n.startswith("repair round 1:")]
    assert note.count(f"{PROPOSED}::test_half_of_four: fewer assertions (1 → 0)") == 3


def test_offline_generation_with_pynguin_keeps_tests_that_gain_coverage(tmp_path: Path) -> None:
    s = _setup(tmp_path)
    result = build_tests(s.spec, s.repo, s.settings, use_llm=False, store=s.store, launcher=LocalLauncher(s.settings))

    assert result.generator == "pynguin"
    assert result.precheck is BuildStatus.PASSED, result.notes
    assert result.kept and all(k.target == "half.py::half" for k in result.kept)
    committed = pygit2.Repository(str(s.repo)).revparse_single(result.commit_sha).peel(pygit2.Commit)
    text = committed.tree["tests/test_half_mendflow.py"].data.decode()
    assert "def test_half_" in text  # named after what it calls, not test_0


POLLUTING_SOURCE = """\
FACTOR = 2


def twice(x):
    return FACTOR * x


def half(x):
    if x % FACTOR:
        raise ValueError("odd")
    return x // FACTOR
"""
POLLUTING_EXISTING = "import half\n\n\ndef test_twice_by_three():\n    half.FACTOR = 3\n    assert half.twice(2) == 6\n"


def test_a_test_that_fails_only_after_the_existing_suite_is_dropped(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path, {"half.py": POLLUTING_SOURCE, "tests/test_half.py": POLLUTING_EXISTING})

    answer = "from half import half\n\n\ndef test_half_of_four():\n    assert half(4) == 2\n"
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": answer}]})
    # Each repair round applies an edit that leaves the test as polluted as before: round 1 an update, round 2
    # (escalated) a patch.
    scripted_llm.reply(_edit({"update": {"old_str": "half(4) == 2\n", "new_str": 'half(4) == 2, "four"\n'}}))
    scripted_llm.reply(
        _edit({"patch": '@@ -5 +5 @@\n-    assert half(4) == 2, "four"\n+    assert half(4) == 2, "4"\n'})
    )
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.FAILED and not result.kept
    drops = [(d.reason, d.detail) for d in result.dropped if d.node_id.endswith("test_half_of_four")]
    assert len(drops) == 3  # the first answer and both repair rounds
    assert [n.rsplit(": ", 1)[-1] for n in result.notes if n.startswith("repair round")] == [
        "update applied",
        "patch applied",
    ]
    assert all(r is DropReason.FAILS and d.endswith("fails when run with the whole suite") for r, d in drops)


CLAMP_SOURCE = """\
def clamp(x, hi):
    if x > hi:
        x = hi
    return x
"""
CLAMP_EXISTING = "from clamp import clamp\n\n\ndef test_clamp_high():\n    assert clamp(5, 3) == 3\n"
CLAMP_GENERATED = """\
from clamp import clamp


def test_clamp_leaves_a_low_value_alone():
    assert clamp(1, 3) == 1


def test_clamp_caps_a_high_value():
    assert clamp(9, 3) == 3
"""


def test_a_test_taking_only_a_branch_the_build_missed_is_kept(tmp_path: Path, scripted_llm: LLMServer) -> None:
    s = _setup(tmp_path, {"clamp.py": CLAMP_SOURCE, "tests/test_clamp.py": CLAMP_EXISTING})
    assert [(t.ref, t.missing_lines, t.missing_branches) for t in s.spec.targets] == [("clamp.py", [], [(2, 4)])]

    scripted_llm.reply({"files": [{"path": "tests/test_clamp_mendflow.py", "content": CLAMP_GENERATED}]})
    result = build_tests(
        s.spec, s.repo, s.settings, llm=LLMClient(llm_settings(scripted_llm, max_retries=0)), store=s.store,
        launcher=LocalLauncher(s.settings),
    )  # fmt: skip

    assert result.precheck is BuildStatus.PASSED, result.notes
    assert [(k.node_id, k.target, k.lines_gained, k.branches_gained) for k in result.kept] == [
        ("tests/test_clamp_mendflow.py::test_clamp_leaves_a_low_value_alone", "clamp.py", 0, 1)
    ]
    assert _reasons(result) == {"test_clamp_caps_a_high_value": DropReason.NO_COVERAGE_GAIN}
    message = pygit2.Repository(str(s.repo)).revparse_single(result.commit_sha).peel(pygit2.Commit).message
    assert "- clamp.py: +0 line(s), +1 branch(es)" in message


def test_pytest_cov_options_in_the_repos_addopts_do_not_fail_the_gates(tmp_path: Path, scripted_llm: LLMServer) -> None:
    # pytest-cov is not installed in the repo's venv: left in, "--cov" would make every gate a usage error.
    pyproject = '[tool.pytest.ini_options]\naddopts = "--cov=half --cov-report term-missing"\n'
    s = _setup(tmp_path, {"pyproject.toml": pyproject, "half.py": SOURCE, "tests/test_half.py": EXISTING})
    answer = "from half import half\n\n\ndef test_half_of_four_is_two():\n    assert half(4) == 2\n"
    result = _build(s, scripted_llm, answer)
    assert result.precheck is BuildStatus.PASSED, result.notes
    assert [k.node_id for k in result.kept] == ["tests/test_half_mendflow.py::test_half_of_four_is_two"]


def test_repairs_that_keep_fewer_tests_than_an_earlier_round_leave_that_rounds_tests(
    tmp_path: Path, scripted_llm: LLMServer
) -> None:
    s = _setup(tmp_path)
    half_right_and_wrong = RIGHT + "\n\ndef test_half_of_three():\n    assert half(3) == 1\n"  # half(3) raises
    scripted_llm.reply({"files": [{"path": PROPOSED, "content": half_right_and_wrong}]})
    scripted_llm.reply(_edit({"update": {"old_str": "import half\n", "new_str": "import halve\n"}}))  # breaks both
    scripted_llm.reply(_edit({"patch": "@@ -1 +1 @@\n-from half import halve\n+from half import halved\n"}))
    result = _build_with(s, scripted_llm)

    assert result.precheck is BuildStatus.PASSED and result.repair_rounds == 2, result.notes
    assert [k.node_id for k in result.kept] == [f"{PROPOSED}::test_half_of_four"]  # round 0's
    assert "from half import half\n" in _committed(s, result)
    assert "round 2 kept fewer tests than round 0: round 0 is used" in result.notes


def test_a_generated_test_runs_offline_in_the_gates(tmp_path: Path, scripted_llm: LLMServer) -> None:
    # what an LLM writes (or a repo's conftest) runs in the gates job: no host loopback, nothing left in /tmp
    listener = Listener()
    marker = Path("/tmp") / f"mendflow-gates-probe-{os.getpid()}"  # no random text: the secrets scan would see one
    probe = (
        "import socket\nfrom pathlib import Path\n\nfrom half import half\n\n\ndef test_half_of_four():\n"
        f"    Path({str(marker)!r}).write_text('x')\n"
        "    with socket.socket() as s:\n        s.settimeout(2)\n"
        f"        s.connect_ex(('127.0.0.1', {listener.port}))\n"
        "    assert half(4) == 2\n"
    )
    result = _build(_setup(tmp_path), scripted_llm, probe)

    assert result.precheck is BuildStatus.PASSED, result.notes
    assert listener.connections == 0 and not marker.exists()
    listener.sock.close()


TYPED = 'def half(x: int) -> int:\n    if x % 2:\n        raise ValueError("odd")\n    return x // 2\n'
ONE_MISTYPED = """\
import pytest

from half import half


def test_half_of_an_odd_number_raises() -> None:
    with pytest.raises(ValueError):
        half(3)


def test_half_of_a_string() -> None:
    with pytest.raises(TypeError):
        half("4")
"""


def test_a_test_the_repos_mypy_rejects_is_dropped_alone(tmp_path: Path, scripted_llm: LLMServer) -> None:
    files = {
        "pyproject.toml": "[tool.mypy]\n",
        "half.py": TYPED,
        "tests/test_half.py": "def test_nothing():\n    pass\n",
    }
    result = _build(_setup(tmp_path, files), scripted_llm, ONE_MISTYPED)
    assert [k.node_id for k in result.kept] == ["tests/test_half_mendflow.py::test_half_of_an_odd_number_raises"]
    [drop] = [d for d in result.dropped if d.node_id.endswith("::test_half_of_a_string")]
    assert drop.reason is DropReason.LINT and "mypy[arg-type]" in drop.detail
