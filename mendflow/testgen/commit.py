"""Commit kept tests on ``agt/testbuilder/<spec_id>`` with pygit2, idempotently and without a work tree."""

from __future__ import annotations

import pygit2

from mendflow.errors import CommitNotFoundError

_FALLBACK = ("mendflow test builder", "testbuilder@mendflow.invalid")


def branch_for(spec_id: str) -> str:
    return f"agt/testbuilder/{spec_id}"


def _signature(repo: pygit2.Repository) -> pygit2.Signature:
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(*_FALLBACK)


def commit_files(repo: pygit2.Repository, parent_sha: str, branch: str, files: dict[str, str], message: str) -> str:
    """One commit on ``branch`` whose parent is ``parent_sha`` adding ``files``; returns its sha.

    Re-running with the same files returns the existing commit; with different files the branch is moved to
    a new commit on the same parent (replacing the earlier attempt, never stacking on it).
    """
    try:
        parent = repo.revparse_single(parent_sha).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CommitNotFoundError(
            f"parent commit {parent_sha[:12]} is not in the repository",
            hint="run the builder on the repository the TestSpec was planned from",
        ) from exc
    index = pygit2.Index()
    index.read_tree(parent.tree)
    for path, text in sorted(files.items()):
        blob = repo.create_blob(text.encode("utf-8"))
        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
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
