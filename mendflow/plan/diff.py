"""The change under test: base (merge-base with the target branch, else the parent) → head, via pygit2."""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from mendflow.errors import CommitNotFoundError

DEFAULT_TARGET_BRANCHES = ("main", "master")


@dataclass
class FileChange:
    path: str
    status: str  # 'added', 'modified', 'deleted', 'renamed'
    old_path: str | None
    added_lines: set[int] = field(default_factory=set)  # line numbers in the new file
    old_source: str = ""
    new_source: str = ""


@dataclass
class ChangeSet:
    base_sha: str | None
    head_sha: str
    how: str  # 'merge-base with main', 'parent', 'none (root commit)'
    files: dict[str, FileChange] = field(default_factory=dict)

    def touches(self, path: str, start: int, end: int) -> bool:
        change = self.files.get(path)
        return change is not None and any(start <= n <= end for n in change.added_lines)


def _commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise CommitNotFoundError(
            f"commit {rev!r} is not in the repository",
            hint="pass the repository the build report was made from",
        ) from exc


def resolve_base(repo: pygit2.Repository, head: pygit2.Commit, target_branch: str | None) -> tuple[str | None, str]:
    """The merge-base with the target branch when the commit is off it, else the commit's first parent."""
    candidates = [target_branch] if target_branch else list(DEFAULT_TARGET_BRANCHES)
    for name in candidates:
        ref = repo.references.get(f"refs/heads/{name}") or repo.references.get(f"refs/remotes/origin/{name}")
        if ref is None:
            continue
        base = repo.merge_base(head.id, ref.peel(pygit2.Commit).id)
        if base is not None and base != head.id:
            return str(base), f"merge-base with {name}"
    if head.parents:
        return str(head.parents[0].id), "parent commit"
    return None, "none (root commit)"


def _blob_text(repo: pygit2.Repository, oid: pygit2.Oid) -> str:
    if oid == pygit2.Oid(hex="0" * 40):
        return ""
    blob = repo.get(oid)
    if not isinstance(blob, pygit2.Blob) or blob.is_binary:
        return ""
    return blob.data.decode("utf-8", errors="replace")


def changes(repo: pygit2.Repository, head_rev: str, target_branch: str | None = None) -> ChangeSet:
    head = _commit(repo, head_rev)
    base_sha, how = resolve_base(repo, head, target_branch)
    result = ChangeSet(base_sha=base_sha, head_sha=str(head.id), how=how)
    if base_sha is None:
        return result
    base_tree = _commit(repo, base_sha).tree
    diff = base_tree.diff_to_tree(head.tree, context_lines=0)
    diff.find_similar()
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        status = {1: "added", 2: "deleted", 3: "modified", 4: "renamed"}.get(int(delta.status), "modified")
        change = FileChange(
            path=delta.new_file.path,
            status=status,
            old_path=delta.old_file.path if status != "added" else None,
            old_source=_blob_text(repo, delta.old_file.id),
            new_source=_blob_text(repo, delta.new_file.id),
        )
        for hunk in patch.hunks:
            change.added_lines.update(line.new_lineno for line in hunk.lines if line.origin == "+")
        result.files[change.path] = change
    return result


def read_at(repo: pygit2.Repository, rev: str, path: str) -> str:
    """A file's text at a commit; '' when it is absent or binary."""
    tree = _commit(repo, rev).tree
    try:
        entry = tree[path]
    except KeyError:
        return ""
    return _blob_text(repo, entry.id)
