"""Merging and pushing a tested branch, with pygit2 (no ``git`` subprocess)."""

from __future__ import annotations

from collections.abc import Mapping

import pygit2
from pygit2.enums import CheckoutStrategy, MergeAnalysis

from mendflow.errors import CommitNotFoundError, MendflowError

_FALLBACK = pygit2.Signature("mendflow", "mendflow@mendflow.invalid")


class MergeError(MendflowError):
    """The tested branch cannot be merged without a human (conflict, unknown branch, unsafe work tree)."""


def _signature(repo: pygit2.Repository) -> pygit2.Signature:
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return _FALLBACK


def _branch(repo: pygit2.Repository, name: str) -> pygit2.Branch:
    branch = repo.branches.local.get(name)
    if branch is None:
        raise MergeError(f"branch {name!r} does not exist in {repo.path}", hint="check the merge target setting")
    return branch


def merge_branch(repo: pygit2.Repository, source: str, target: str, message: str) -> str:
    """Merge ``source`` into ``target`` (fast-forward when possible); idempotent; returns target's new sha.

    When ``target`` is checked out, the work tree is updated with a SAFE checkout first, so local edits are
    never overwritten: a conflict with them raises instead.
    """
    src, dst = _branch(repo, source), _branch(repo, target)
    analysis, _ = repo.merge_analysis(src.target, dst.name)
    if analysis & MergeAnalysis.UP_TO_DATE:
        return str(dst.target)
    if analysis & MergeAnalysis.FASTFORWARD:
        new = src.target
    else:
        index = repo.merge_commits(dst.target, src.target)
        if index.conflicts is not None:
            raise MergeError(f"merging {source} into {target} conflicts", hint="merge it by hand; the branch is kept")
        tree = index.write_tree(repo)
        sig = _signature(repo)
        new = repo.create_commit(None, sig, sig, message, tree, [dst.target, src.target])
    if not repo.is_bare and not repo.head_is_detached and repo.head.name == dst.name:
        try:
            repo.checkout_tree(repo[new], strategy=CheckoutStrategy.SAFE)
        except pygit2.GitError as exc:
            raise MergeError(
                f"the work tree of {target} has local changes in the way: {exc}",
                hint="commit or stash them, then re-run",
            ) from exc
    dst.set_target(new)
    return str(new)


def push_branch(repo: pygit2.Repository, branch: str, remote: str = "origin", force: bool = True) -> None:
    """Push ``branch`` to ``remote`` (credentials come from the trusted side's git configuration); without
    ``force``, only as a fast-forward: a branch that moved on the remote is never overwritten."""
    refspec = f"{'+' if force else ''}refs/heads/{branch}:refs/heads/{branch}"
    try:
        repo.remotes[remote].push([refspec])
    except (KeyError, pygit2.GitError) as exc:
        raise MergeError(
            f"cannot push {branch} to {remote}: {exc}",
            hint="check the remote and its credentials; a branch that moved meanwhile is merged on the next push",
        ) from exc


def delete_branch(repo: pygit2.Repository, branch: str) -> None:
    """Delete the local ``branch`` if it exists (a merged builder or healer branch)."""
    if repo.branches.local.get(branch) is not None:
        repo.branches.local.delete(branch)


def commit_files(
    repo: pygit2.Repository, parent_sha: str, branch: str, files: Mapping[str, str | None], message: str
) -> str:
    """One commit on ``branch`` whose parent is ``parent_sha`` adding or replacing ``files`` (``None``: the file
    is removed); returns its sha.

    Re-running with the same files returns the existing commit; with different files the branch is moved to
    a new commit on the same parent (replacing the earlier attempt, never stacking on it).
    """
    try:
        parent = repo.revparse_single(parent_sha).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CommitNotFoundError(
            f"parent commit {parent_sha[:12]} is not in the repository",
            hint="run the stage on the repository the commit came from",
        ) from exc
    index = pygit2.Index()
    index.read_tree(parent.tree)
    for path, text in sorted(files.items()):
        if text is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(text.encode("utf-8")), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    ref_name = f"refs/heads/{branch}"
    existing = repo.references.get(ref_name)
    if existing is not None:
        tip = existing.peel(pygit2.Commit)
        if tip.tree_id == tree and [p.id for p in tip.parents] == [parent.id]:
            return str(tip.id)
    sig = _signature(repo)
    oid = repo.create_commit(None, sig, sig, message, tree, [parent.id])
    repo.references.create(ref_name, oid, force=True)
    return str(oid)


def diff(repo: pygit2.Repository, old: str, new: str) -> str:
    """The unified diff from commit ``old`` to commit ``new``."""
    before, after = (repo.revparse_single(sha).peel(pygit2.Commit) for sha in (old, new))
    return repo.diff(before, after).patch or ""
