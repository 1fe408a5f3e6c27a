"""Snapshots: opening repositories, resolving revisions, and the deterministic commit archive."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pygit2
import pytest

from mendflow.errors import CommitNotFoundError, RepoNotFoundError
from mendflow.identity import repo_id
from mendflow.settings import Settings
from mendflow.snapshot import archive, resolve_commit, resolve_repo
from tests.fixtures.repos import SIGNATURE, RepoFactory, commit_files

FILES = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n", "README.md": "# demo\n"}


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


def _unpack(data: bytes, dest: Path) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
    return {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()}


def _settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache", state_dir=tmp_path / "state")


# -- archive -------------------------------------------------------------------------------------------


def test_archive_holds_exactly_the_committed_files(make_repo: RepoFactory, tmp_path: Path) -> None:
    path = make_repo(FILES)
    (path / "README.md").write_text("uncommitted edit\n")
    (path / "untracked.py").write_text("x = 1\n")
    repo = resolve_repo(path)
    sha, _ = resolve_commit(repo)
    unpacked = _unpack(archive(repo, sha), tmp_path / "out")
    assert unpacked == {name: text.encode() for name, text in FILES.items()}


def test_archive_has_no_git_directory(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo(FILES))
    names = _members(archive(repo, resolve_commit(repo)[0]))
    assert not [n for n in names if n == ".git" or n.startswith(".git/")]


def test_archive_is_byte_identical_for_identical_trees(make_repo: RepoFactory) -> None:
    first = resolve_repo(make_repo(FILES, name="one", message="first"))
    second = resolve_repo(make_repo(FILES, name="two", message="a different commit, same tree"))
    sha1, sha2 = resolve_commit(first)[0], resolve_commit(second)[0]
    assert sha1 != sha2
    assert archive(first, sha1) == archive(second, sha2)


def test_archive_differs_when_a_file_changes(make_repo: RepoFactory) -> None:
    path = make_repo(FILES)
    repo = resolve_repo(path)
    before = archive(repo, resolve_commit(repo)[0])
    after_sha = commit_files(path, {"README.md": "# changed\n"})
    assert archive(repo, after_sha) != before


def test_archive_of_an_older_commit_has_that_commits_content(make_repo: RepoFactory, tmp_path: Path) -> None:
    path = make_repo(FILES)
    repo = resolve_repo(path)
    old_sha = resolve_commit(repo)[0]
    commit_files(path, {"README.md": "# new\n", "extra.txt": "x"})
    unpacked = _unpack(archive(repo, old_sha), tmp_path / "out")
    assert unpacked["README.md"] == b"# demo\n" and "extra.txt" not in unpacked


def test_archive_keeps_the_executable_bit(make_repo: RepoFactory) -> None:
    path = make_repo({"run.sh": "#!/bin/sh\necho hi\n", "data.txt": "x"})
    os.chmod(path / "run.sh", 0o755)
    sha = commit_files(path, {})
    members = _members(archive(resolve_repo(path), sha))
    assert (members["run.sh"].mode, members["data.txt"].mode) == (0o755, 0o644)


def test_archive_stores_symlinks_as_symlinks(make_repo: RepoFactory) -> None:
    path = make_repo({"target.txt": "x"})
    os.symlink("target.txt", path / "link.txt")
    sha = commit_files(path, {})
    link = _members(archive(resolve_repo(path), sha))["link.txt"]
    assert link.issym() and link.linkname == "target.txt"


def test_archive_uses_fixed_mtimes_and_owners(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo(FILES))
    members = _members(archive(repo, resolve_commit(repo)[0])).values()
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(315_532_800, 0, 0, "", "")}


def test_archive_skips_submodules(make_repo: RepoFactory) -> None:
    path = make_repo(FILES)
    repo = resolve_repo(path)
    builder = repo.TreeBuilder(repo.head.peel(pygit2.Tree))
    builder.insert("vendored", repo.head.target, 0o160000)  # a gitlink entry, as a submodule makes
    sha = repo.create_commit("HEAD", SIGNATURE, SIGNATURE, "add submodule", builder.write(), [repo.head.target])
    names = _members(archive(repo, str(sha)))
    assert "vendored" not in names and "pkg/calc.py" in names


def test_archive_of_an_unknown_sha_raises_commit_not_found(make_repo: RepoFactory) -> None:
    with pytest.raises(CommitNotFoundError):
        archive(resolve_repo(make_repo(FILES)), "0" * 40)


# -- resolve_commit ------------------------------------------------------------------------------------


def test_none_resolves_head_and_its_branch(make_repo: RepoFactory) -> None:
    path = make_repo(FILES)
    repo = resolve_repo(path)
    assert resolve_commit(repo, None) == (str(repo.head.target), "main")


def test_branch_resolves_to_its_tip_and_name(make_repo: RepoFactory) -> None:
    path = make_repo(FILES)
    repo = resolve_repo(path)
    feature_tip = str(repo.branches.local.create("feature", repo.head.peel(pygit2.Commit)).target)
    commit_files(path, {"new.txt": "x"})  # main moves on; feature stays
    assert resolve_commit(repo, "feature") == (feature_tip, "feature")


def test_annotated_tag_resolves_to_the_commit_with_no_branch(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo(FILES))
    head = repo.head.target
    repo.create_tag("v1.0", head, pygit2.enums.ObjectType.COMMIT, SIGNATURE, "release")
    assert resolve_commit(repo, "v1.0") == (str(head), "")


def test_short_sha_resolves_to_the_full_sha(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo(FILES))
    full = str(repo.head.target)
    assert resolve_commit(repo, full[:8]) == (full, "")


def test_missing_revision_raises_commit_not_found_with_a_hint(make_repo: RepoFactory) -> None:
    repo = resolve_repo(make_repo(FILES))
    with pytest.raises(CommitNotFoundError, match="no-such-branch") as info:
        resolve_commit(repo, "no-such-branch")
    assert info.value.hint


def test_head_of_an_empty_repository_raises_commit_not_found(tmp_path: Path) -> None:
    pygit2.init_repository(str(tmp_path / "empty"))
    with pytest.raises(CommitNotFoundError, match="no commits"):
        resolve_commit(resolve_repo(tmp_path / "empty"))


# -- resolve_repo / repo_id --------------------------------------------------------------------------


def test_unknown_path_raises_repo_not_found(tmp_path: Path) -> None:
    with pytest.raises(RepoNotFoundError, match="does not exist"):
        resolve_repo(tmp_path / "nowhere")


def test_plain_directory_raises_repo_not_found(tmp_path: Path) -> None:
    with pytest.raises(RepoNotFoundError, match="not a git repository"):
        resolve_repo(tmp_path)


def test_subdirectory_of_a_repository_is_not_taken_for_it(make_repo: RepoFactory) -> None:
    path = make_repo(FILES)
    with pytest.raises(RepoNotFoundError, match="not a git repository"):
        resolve_repo(path / "pkg")


def test_bare_repository_opens(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES)
    bare = pygit2.clone_repository(source.as_uri(), str(tmp_path / "demo.git"), bare=True)
    repo = resolve_repo(tmp_path / "demo.git")
    assert (resolve_commit(repo)[0], repo_id(repo)) == (str(bare.head.target), "local/demo")


def test_local_repo_id_is_the_directory_name_made_key_safe(make_repo: RepoFactory) -> None:
    assert repo_id(resolve_repo(make_repo(FILES, name="my repo!"))) == "local/my-repo"


def test_file_url_is_cloned_into_the_cache(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES, name="upstream")
    settings = _settings(tmp_path)
    repo = resolve_repo(source.as_uri(), settings)
    assert Path(repo.path).resolve().is_relative_to((tmp_path / "cache" / "repos").resolve())
    assert resolve_commit(repo, "main")[0] == str(pygit2.Repository(str(source)).head.target)


def test_cached_clone_fetches_new_commits_and_branches(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES, name="upstream")
    settings = _settings(tmp_path)
    resolve_repo(source.as_uri(), settings)
    new_sha = commit_files(source, {"later.txt": "x"})
    upstream = pygit2.Repository(str(source))
    upstream.branches.local.create("feature", upstream.head.peel(pygit2.Commit))
    repo = resolve_repo(source.as_uri(), settings)
    assert resolve_commit(repo, "main") == (new_sha, "main")
    assert resolve_commit(repo, "feature") == (new_sha, "feature")


def test_cloned_repository_head_follows_the_remote_default_branch(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES, name="upstream")
    repo = resolve_repo(source.as_uri(), _settings(tmp_path))
    assert resolve_commit(repo)[1] == "main"


def test_cloned_repository_is_named_after_the_url(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES, name="upstream")
    assert repo_id(resolve_repo(source.as_uri(), _settings(tmp_path))) == "local/upstream"


def test_unreachable_url_raises_repo_not_found_and_leaves_no_cache_entry(tmp_path: Path) -> None:
    with pytest.raises(RepoNotFoundError, match="cannot fetch"):
        resolve_repo((tmp_path / "missing").as_uri(), _settings(tmp_path))
    assert list((tmp_path / "cache" / "repos").iterdir()) == []


def test_a_refetch_prunes_branches_deleted_upstream_but_keeps_mendflows(make_repo: RepoFactory, tmp_path: Path) -> None:
    source = make_repo(FILES, name="upstream")
    upstream = pygit2.Repository(str(source))
    upstream.branches.local.create("feature", upstream.head.peel(pygit2.Commit))
    settings = _settings(tmp_path)
    mirror = resolve_repo(source.as_uri(), settings)
    mirror.branches.local.create("agt/testbuilder/ts-1", mirror.head.peel(pygit2.Commit))
    upstream.branches.local.delete("feature")
    mirror = resolve_repo(source.as_uri(), settings)
    assert sorted(mirror.branches.local) == ["agt/testbuilder/ts-1", "main"]
