"""Branch, switch and rebase helpers over real pygit2 repositories (commits via tests.fixtures.repos)."""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.fixtures.repos import SIGNATURE


def create_branch(repo_path: Path, name: str, at: str | None = None) -> None:
    repo = pygit2.Repository(str(repo_path))
    commit = repo.revparse_single(at or "HEAD").peel(pygit2.Commit)
    repo.branches.local.create(name, commit, force=True)


def switch(repo_path: Path, name: str) -> None:
    """git switch NAME: HEAD, index and work tree follow the branch."""
    repo = pygit2.Repository(str(repo_path))
    ref = repo.branches.local[name]
    repo.checkout(ref, strategy=pygit2.enums.CheckoutStrategy.FORCE)
    repo.set_head(ref.name)


def rebase_onto(repo_path: Path, branch: str, onto: str) -> str:
    """Replay ``branch``'s last commit (its diff against its parent) on top of ``onto``; move the branch."""
    repo = pygit2.Repository(str(repo_path))
    tip = repo.branches.local[branch].peel(pygit2.Commit)
    base = repo.revparse_single(onto).peel(pygit2.Commit)
    index = repo.merge_trees(tip.parents[0].tree, base.tree, tip.tree)
    assert not index.conflicts, "test rebase must not conflict"
    tree = index.write_tree(repo)
    oid = repo.create_commit(None, SIGNATURE, SIGNATURE, tip.message, tree, [base.id])
    repo.branches.local[branch].set_target(oid)
    return str(oid)
