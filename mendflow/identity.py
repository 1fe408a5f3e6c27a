"""A repository's identity: ``owner/name``, the one string artefact keys, events, the index and the webhook share.

Taken, in order, from the repository's ``mendflow.repoid`` git config (a configured id), the URL mendflow
cloned it from, its ``origin`` remote, or else ``local/<directory name>``. A hosted URL gives its path:
``https://host/owner/name.git`` and ``git@host:owner/name.git`` are both ``owner/name`` (GitLab subgroups
keep every segment, as the webhook's ``path_with_namespace`` does).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mendflow.errors import InputError

if TYPE_CHECKING:
    import pygit2

CONFIGURED_ID_KEY = "mendflow.repoid"
SOURCE_URL_KEY = "mendflow.sourceurl"  # set in mendflow's cached clones of a URL
LOCAL_OWNER = "local"
_SCP_LIKE = re.compile(r"^[^/@]+@[^/:]+:(?P<path>.+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def repo_id(repo: pygit2.Repository) -> str:
    """The identity of an opened repository (see the module docstring for the order of sources)."""
    return _identity(lambda key: _config(repo, key), _origin_url(repo), Path(repo.workdir or repo.path))


def work_tree_id(path: Path) -> str | None:
    """The identity of the git work tree holding ``path``, read with the git command; None when there is none.

    For ``mendflow grep``, whose whole answer may take less than importing pygit2 (~50 ms). Values git would
    rewrite (``url.*.insteadOf``) are read raw here, so a caller falls back to ``repo_id`` when this names no
    repository it knows.
    """
    try:  # not shutil.which: shutil's import (bz2, lzma) costs more than the lookup
        where = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if where.returncode != 0 or not where.stdout.strip():
        return None
    keys = f"^({re.escape(CONFIGURED_ID_KEY)}|{re.escape(SOURCE_URL_KEY)}|remote\\.origin\\.url)$"
    found = subprocess.run(["git", "-C", str(path), "config", "--get-regexp", keys], capture_output=True, text=True)
    values = dict(line.partition(" ")[::2] for line in found.stdout.splitlines())
    try:
        return _identity(
            lambda key: values.get(key, ""), values.get("remote.origin.url", ""), Path(where.stdout.strip())
        )
    except InputError:
        return None


def _identity(config: Callable[[str], str], origin: str, where: Path) -> str:
    configured = config(CONFIGURED_ID_KEY)
    if configured:
        return normalize(configured)
    cloned_from = config(SOURCE_URL_KEY)
    for url in (cloned_from, origin):
        if url and (hosted := hosted_path(url)):
            return hosted
    name = cloned_from.rstrip("/").rsplit("/", 1)[-1] if cloned_from else where.resolve().name
    return f"{LOCAL_OWNER}/{_segment(name.removesuffix('.git')) or 'repo'}"


def hosted_path(url: str) -> str | None:
    """``owner/name`` of a URL on a git host; None for local paths and ``file://`` URLs."""
    if match := _SCP_LIKE.match(url):
        path = match["path"]
    else:
        parts = urlsplit(url)
        if parts.scheme in ("", "file") or not parts.netloc:
            return None
        path = parts.path
    segments = [_segment(s) for s in path.strip("/").removesuffix(".git").split("/") if s]
    segments = [s for s in segments if s]
    if not segments:
        return None
    if len(segments) == 1:  # https://host/name: the host stands in for the owner
        segments.insert(0, _segment(urlsplit(url).hostname or LOCAL_OWNER))
    return "/".join(segments)


def normalize(identity: str) -> str:
    """A given id (``owner/name``) checked and made key-safe; one clear error when it is not an id."""
    segments = [_segment(s) for s in identity.strip().strip("/").removesuffix(".git").split("/")]
    if len(segments) < 2 or not all(segments):
        raise InputError(
            f"{identity!r} is not a repository id",
            hint="give it as owner/name, e.g. acme/calc (git config mendflow.repoid acme/calc)",
        )
    return "/".join(segments)


def _segment(text: str) -> str:
    return _UNSAFE.sub("-", text).strip(".-")


def _config(repo: pygit2.Repository, key: str) -> str:
    try:
        return str(repo.config[key])
    except KeyError:
        return ""


def _origin_url(repo: pygit2.Repository) -> str:
    try:
        return str(repo.remotes["origin"].url or "")
    except (KeyError, ValueError):
        return ""
