"""A run's source, resolved once: every stage of a run receives this one value.

Resolving opens the repository (for a URL: one fetch into the cache mirror), fixes the commit, names the
repository by its identity and freezes the commit as a tarball in the artefact store — the only way source
reaches a job. Later stages open the repository at ``path`` locally and never fetch again.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pygit2
from pydantic import BaseModel, ConfigDict

from mendflow import gitversion, identity, languages, snapshot
from mendflow.contracts import Language
from mendflow.keys import RepoKeys
from mendflow.settings import Settings
from mendflow.store.base import ArtefactStore


class Source(BaseModel):
    """One commit of one repository, frozen in the store."""

    model_config = ConfigDict(frozen=True)

    location: str  # what the caller gave: a path or a clone URL
    repo_id: str  # owner/name: artefact keys, events, the index and the webhook all use it
    path: str  # the local repository: the work tree, or the cache mirror of a URL
    commit_sha: str
    branch: str
    archive_key: str
    languages: tuple[Language, ...] = ()  # mendflow.languages.detect at this commit: most source files first
    version: str = ""  # what the commit's tags make it (mendflow.gitversion): jobs get no .git to read them from

    @property
    def language(self) -> Language:
        """What this commit builds as (a repository with no manifest mendflow knows builds as Python)."""
        return self.languages[0] if self.languages else Language.PYTHON

    @property
    def artefacts(self) -> RepoKeys:
        return RepoKeys(self.repo_id)

    @property
    def label(self) -> str:
        """``owner/name@abc1234``: flow-run names and log lines."""
        return f"{self.repo_id}@{self.commit_sha[:7]}"

    def open(self) -> pygit2.Repository:
        """The repository, opened locally (no fetch)."""
        return snapshot.resolve_repo(self.path)


def resolve(
    location: str,
    commit: str | None,
    branch: str | None,
    store: ArtefactStore,
    settings: Settings,
    repo_id: str | None = None,
) -> Source:
    """Open (or fetch) ``location`` once, fix the commit and snapshot it; ``repo_id`` overrides the identity."""
    source = locate(location, commit, branch, settings, repo_id)
    return _frozen(source, source.open(), store, settings)


def locate(
    location: str, commit: str | None, branch: str | None, settings: Settings, repo_id: str | None = None
) -> Source:
    """``resolve`` without the snapshot (``archive_key`` empty): for work that reads git itself, like indexing."""
    repo = snapshot.resolve_repo(location, settings)
    sha, resolved_branch = snapshot.resolve_commit(repo, commit or branch)
    name = identity.normalize(repo_id) if repo_id else identity.repo_id(repo)
    path = str(repo.workdir or repo.path)
    return Source(
        location=location, repo_id=name, path=path, commit_sha=sha, branch=branch or resolved_branch, archive_key=""
    )


def at(source: Source, sha: str, branch: str, store: ArtefactStore, settings: Settings) -> Source:
    """Another commit of the same repository (e.g. the generated tests' commit), without a new fetch."""
    moved = source.model_copy(update={"commit_sha": sha, "branch": branch, "archive_key": ""})
    return _frozen(moved, source.open(), store, settings)


def as_language(source: Source, language: Language) -> Source:
    """``source`` built as ``language`` (a repository with several: each is its own job on the same snapshot)."""
    rest = tuple(lang for lang in source.languages if lang is not language)
    return source.model_copy(update={"languages": (language, *rest)})


def is_root(source: Source) -> bool:
    """Whether the commit has no parent at all (a repository's first commit, or history imported as one)."""
    commit = source.open().get(source.commit_sha)
    return isinstance(commit, pygit2.Commit) and not commit.parent_ids


def parent(source: Source, store: ArtefactStore, settings: Settings) -> Source | None:
    """The commit's first parent, frozen like ``at``; None for a root commit or a parent this clone lacks
    (a shallow fetch)."""
    repo = source.open()
    commit = repo.get(source.commit_sha)
    first = commit.parent_ids[0] if isinstance(commit, pygit2.Commit) and commit.parent_ids else None
    if first is None or repo.get(first) is None:
        return None
    return at(source, str(first), source.branch, store, settings)


def _frozen(source: Source, repo: pygit2.Repository, store: ArtefactStore, settings: Settings) -> Source:
    key = source.artefacts.source(source.commit_sha)
    if not store.exists(key):  # content-addressed by commit: a retry or a re-run reuses it
        publish_snapshot(repo, source.commit_sha, store, key, settings)
    found = tuple(languages.detect(snapshot.file_paths(repo, source.commit_sha)))
    version = gitversion.version_of(repo, source.commit_sha)
    return source.model_copy(update={"archive_key": key, "languages": found, "version": version})


def publish_snapshot(repo: pygit2.Repository, sha: str, store: ArtefactStore, key: str, settings: Settings) -> None:
    """Archive ``sha`` into a temporary file and stream it to ``key``: the snapshot is never held in memory."""
    with tempfile.NamedTemporaryFile(prefix="mendflow-snapshot-", suffix=".tar.gz") as spool:
        snapshot.archive_to(repo, sha, spool, snapshot.SnapshotLimits.from_settings(settings))
        spool.flush()
        store.put_file(key, Path(spool.name))
