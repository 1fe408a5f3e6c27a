"""Repositories and commit snapshots, with pygit2 only (no ``git`` subprocess, no work-tree checkout).

A snapshot is a deterministic .tar.gz of one commit's tree: what jobs build. It is made from git objects,
so uncommitted work-tree changes, the .git directory and anything in it (remote URLs with credentials,
hooks) never reach a job.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit, urlunsplit

import pygit2
from pygit2.enums import FetchPrune, RepositoryOpenFlag

from mendflow.contracts import MENDFLOW_BRANCH_PREFIX
from mendflow.errors import CommitNotFoundError, RepoNotFoundError, TooLargeError
from mendflow.identity import SOURCE_URL_KEY
from mendflow.settings import Settings, get_settings

log = logging.getLogger(__name__)

# 1980-01-01: a fixed mtime so identical trees give identical bytes (and tools that dislike 1970 are happy).
ARCHIVE_MTIME = 315_532_800
_MODE_TREE = 0o040000
_MODE_EXEC = 0o100755
_MODE_LINK = 0o120000
_MODE_SUBMODULE = 0o160000
_URL_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://|^[^/]+@[^/:]+:")  # scheme://… or scp-like user@host:path


def is_url(location: str) -> bool:
    """Whether ``location`` is a clone URL (served from a cache mirror) rather than a local path."""
    return bool(_URL_RE.match(location))


def resolve_repo(path_or_url: str | Path, settings: Settings | None = None) -> pygit2.Repository:
    """Open a local repository (work tree or bare) or clone/fetch a URL into the cache."""
    text = str(path_or_url)
    if is_url(text):
        return _cached_clone(text, (settings or get_settings()).cache_dir / "repos")
    return _open_local(Path(text).expanduser())


def resolve_commit(repo: pygit2.Repository, rev: str | None = None) -> tuple[str, str]:
    """``(full sha, branch name)`` for a sha (full or short), branch, tag or None (HEAD).

    The branch name is '' when ``rev`` is not a branch (a sha, a tag, a detached HEAD).
    """
    if rev is None:
        return _resolve_head(repo)
    try:
        commit = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise CommitNotFoundError(
            f"{rev!r} is not a commit, branch or tag in {_describe(repo)}",
            hint="check the spelling; for a remote repository make sure the commit was pushed",
        ) from exc
    return str(commit.id), _branch_of(repo, rev)


def archive(repo: pygit2.Repository, sha: str, limits: SnapshotLimits | None = None) -> bytes:
    """A deterministic .tar.gz of the commit's tree, in memory: for small trees (tests, tools)."""
    raw = io.BytesIO()
    archive_to(repo, sha, raw, limits)
    return raw.getvalue()


def archive_to(repo: pygit2.Repository, sha: str, dest: IO[bytes], limits: SnapshotLimits | None = None) -> int:
    """Stream the commit's tree to ``dest`` as a deterministic .tar.gz, like ``git archive``; submodules skipped.

    The sizes are read from object headers and checked against ``limits`` before any content is read, so a
    repository with a huge blob is refused without the trusted process ever holding it. Returns the bytes of
    content archived.
    """
    try:
        tree = repo.revparse_single(sha).peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        hint = "pass a sha returned by resolve_commit"
        raise CommitNotFoundError(f"{sha!r} is not a commit in {_describe(repo)}", hint=hint) from exc
    entries = list(_walk(repo, tree, ""))
    total = _check_sizes(repo, entries, limits or SnapshotLimits(), sha)
    # filename='' and mtime=0 keep the gzip header free of names and clocks.
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=dest, mtime=0, compresslevel=6) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar,
    ):
        for path, mode, oid in entries:
            _add_entry(repo, tar, path, mode, oid)
    return total


# -- opening and cloning -----------------------------------------------------------------------------


def read_files(location: str, sha: str, paths: list[str]) -> dict[str, str]:
    """The text of ``paths`` at commit ``sha`` (for showing what a stage wrote), read from git objects."""
    tree = resolve_repo(location).revparse_single(sha).peel(pygit2.Commit).tree
    blobs = {p: tree[p] for p in paths if p in tree}
    return {p: b.data.decode("utf-8", errors="replace") for p, b in blobs.items() if isinstance(b, pygit2.Blob)}


def _open_local(path: Path) -> pygit2.Repository:
    if not path.exists():
        raise RepoNotFoundError(f"{path} does not exist", hint="pass the path of a git repository or its URL")
    try:
        # NO_SEARCH: a sub-directory of some other repository must not silently stand for it.
        return pygit2.Repository(str(path), RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError as exc:
        raise RepoNotFoundError(
            f"{path} is not a git repository",
            hint="pass the repository's top-level directory or a bare repository ('git init' makes one)",
        ) from exc


def _cached_clone(url: str, cache_root: Path) -> pygit2.Repository:
    """A bare mirror of ``url`` under the cache: cloned once, fetched every later time."""
    target = cache_root / f"{_url_name(url)}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"
    if target.exists():
        repo = pygit2.Repository(str(target), RepositoryOpenFlag.NO_SEARCH)
        _fetch(repo, url)
        return repo
    cache_root.mkdir(parents=True, exist_ok=True)
    # Clone beside the target and rename: a crash or a concurrent clone never leaves half a mirror.
    staging = Path(tempfile.mkdtemp(dir=cache_root, prefix=".clone-"))
    try:
        repo = pygit2.init_repository(str(staging), bare=True)
        repo.remotes.create("origin", url, "+refs/heads/*:refs/heads/*")
        repo.remotes.add_fetch("origin", "+refs/tags/*:refs/tags/*")
        repo.config[SOURCE_URL_KEY] = _strip_credentials(url)
        _fetch(repo, url)
        _point_head_at_default_branch(repo)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.exists():
                raise
            return _cached_clone(url, cache_root)  # another process won the race; use its mirror
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return pygit2.Repository(str(target), RepositoryOpenFlag.NO_SEARCH)


def _fetch(repo: pygit2.Repository, url: str) -> None:
    """Fetch, then prune the branches the remote deleted, except mendflow's own (``MENDFLOW_BRANCH_PREFIX``):
    the mirror is where a run's builder and healer branches live until they are merged."""
    try:
        origin = repo.remotes["origin"]
        origin.fetch(prune=FetchPrune.NO_PRUNE)
        remote = {h.name for h in origin.list_heads() if h.name and h.name.startswith("refs/heads/")}
    except (pygit2.GitError, KeyError) as exc:
        raise RepoNotFoundError(
            f"cannot fetch {_strip_credentials(url)}: {exc}",
            hint="check the URL, the network and the credentials for the repository",
        ) from exc
    for name in list(repo.branches.local):
        if f"refs/heads/{name}" not in remote and not name.startswith(MENDFLOW_BRANCH_PREFIX):
            repo.branches.local.delete(name)


def _point_head_at_default_branch(repo: pygit2.Repository) -> None:
    try:
        heads = repo.remotes["origin"].list_heads()
    except pygit2.GitError:
        heads = []
    default = next((h.symref_target for h in heads if h.name == "HEAD" and h.symref_target), None)
    if default and default in repo.references:
        repo.set_head(default)
    elif repo.branches.local:
        repo.set_head(f"refs/heads/{sorted(repo.branches.local)[0]}")


def _url_name(url: str) -> str:
    """Last path segment of a URL, scp-like address or directory, without '.git', made key-safe."""
    base = url.rstrip("/").replace(":", "/").rsplit("/", 1)[-1].removesuffix(".git")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip(".-") or "repo"


def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


# -- commits ------------------------------------------------------------------------------------------


def _resolve_head(repo: pygit2.Repository) -> tuple[str, str]:
    if repo.head_is_unborn:
        raise CommitNotFoundError(f"{_describe(repo)} has no commits yet", hint="commit something first")
    head = repo.head
    branch = "" if repo.head_is_detached else head.shorthand
    return str(head.peel(pygit2.Commit).id), branch


def _branch_of(repo: pygit2.Repository, rev: str) -> str:
    name = rev.removeprefix("refs/heads/")
    return name if f"refs/heads/{name}" in repo.references else ""


def _describe(repo: pygit2.Repository) -> str:
    try:
        return str(repo.config[SOURCE_URL_KEY])
    except KeyError:
        return str(repo.workdir or repo.path).rstrip("/")


# -- archive ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotLimits:
    """What a snapshot may hold; past either, the commit is refused before its content is read."""

    max_bytes: int = 2048 * 1024 * 1024
    max_file_bytes: int = 100 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> SnapshotLimits:
        mib = 1024 * 1024
        return cls(settings.limits.snapshot_mb * mib, settings.limits.snapshot_file_mb * mib)


def file_paths(repo: pygit2.Repository, sha: str) -> list[str]:
    """Every file the snapshot of ``sha`` holds, relative to the root."""
    tree = repo.revparse_single(sha).peel(pygit2.Tree)
    return [path for path, mode, _ in _walk(repo, tree, "") if mode != _MODE_TREE]


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, int, pygit2.Oid]]:
    """``(path, mode, oid)`` of every entry to archive, parents before children; unsafe names skipped."""
    for entry in tree:
        name = (entry.raw_name or b"").decode("utf-8", "surrogateescape")
        if name in ("", ".", "..") or "/" in name or name.lower() == ".git":
            log.warning("snapshot: skipped unsafe tree entry %r", name)
            continue
        path = f"{prefix}{name}"
        if entry.filemode == _MODE_SUBMODULE:
            log.warning("snapshot: skipped submodule %s (submodules are not part of the archive)", path)
            continue
        yield path, entry.filemode, entry.id
        if entry.filemode == _MODE_TREE:
            yield from _walk(repo, repo[entry.id].peel(pygit2.Tree), f"{path}/")


def _check_sizes(
    repo: pygit2.Repository, entries: list[tuple[str, int, pygit2.Oid]], limits: SnapshotLimits, sha: str
) -> int:
    total = 0
    hint = "raise MENDFLOW_LIMITS__SNAPSHOT_MB / MENDFLOW_LIMITS__SNAPSHOT_FILE_MB, or keep large files out of git"
    for path, mode, oid in entries:
        if mode == _MODE_TREE:
            continue
        size = repo.odb.read_header(oid)[1]  # header only: the content is not inflated
        if size > limits.max_file_bytes:
            raise TooLargeError(
                f"{path} at {sha[:12]} is {_mib(size)}, over the {_mib(limits.max_file_bytes)} a file may be",
                hint=hint,
            )
        total += size
        if total > limits.max_bytes:
            raise TooLargeError(
                f"the tree of {sha[:12]} is over the {_mib(limits.max_bytes)} a snapshot may hold", hint=hint
            )
    return total


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB"


def _add_entry(repo: pygit2.Repository, tar: tarfile.TarFile, path: str, mode: int, oid: pygit2.Oid) -> None:
    if mode == _MODE_TREE:
        tar.addfile(_info(path, tarfile.DIRTYPE, 0o755))
    elif mode == _MODE_LINK:
        info = _info(path, tarfile.SYMTYPE, 0o777)
        info.linkname = _blob_data(repo, oid).decode("utf-8", "surrogateescape")
        tar.addfile(info)
    else:
        data = _blob_data(repo, oid)
        info = _info(path, tarfile.REGTYPE, 0o755 if mode == _MODE_EXEC else 0o644)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def _blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    blob = repo[oid]
    if not isinstance(blob, pygit2.Blob):
        raise TypeError(f"tree entry {oid} is a {blob.type_str}, not a blob")
    return blob.data


def _info(path: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(path)
    info.type = kind
    info.mode = mode
    info.mtime = ARCHIVE_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
