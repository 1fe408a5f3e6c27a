"""The version a commit's tags give it, as setuptools-scm's default scheme computes it from ``git describe``: a
job gets the commit's files without ``.git``, so a build backend that reads the version from git (setuptools-scm,
hatch-vcs, pdm-backend, poetry-dynamic-versioning) would refuse to build the project; the runner hands it this
version instead (``mendflow_runner.scmversion``).

A tagged commit is its tag's version (``v1.2.3`` → ``1.2.3``); ``n`` commits after it, the next patch release's
``n``-th development version with the commit as local part (``1.2.4.dev5+gabc1234``); with no version tag,
``0.1.devN+g…`` with ``N`` the commits in its history, as setuptools-scm says of a repository without tags.
"""

from __future__ import annotations

import re

import pygit2
from packaging.version import InvalidVersion, Version
from pygit2.enums import DescribeStrategy

# setuptools-scm's default tag_regex: an optional ``name-`` prefix and ``v``, then the version, no local part
_TAG = re.compile(r"^(?:[\w-]+-)?[vV]?(?P<version>\d+(?:\.\d+){0,2}[^+]*)(?:\+.*)?$")
_DESCRIBED = re.compile(r"^(?P<tag>.+)-(?P<distance>\d+)-g(?P<node>[0-9a-f]+)$")
_NODE_LENGTH = 7
SCM_VERSION = "MENDFLOW_JOB_SCM_VERSION"  # the job's environment variable that holds it


def version_of(repo: pygit2.Repository, sha: str) -> str:
    """The commit's version from its tags, or "" where none can be said (not PEP 440)."""
    try:
        said = repo.describe(
            committish=sha,
            describe_strategy=DescribeStrategy.TAGS,
            pattern="*[0-9]*",
            always_use_long_format=True,
            abbreviated_size=_NODE_LENGTH,
        )
    except (KeyError, pygit2.GitError):  # no tag in the commit's history
        return _untagged(repo, sha)
    described = _DESCRIBED.match(said)
    tag = _TAG.match(described["tag"]) if described else None
    if described is None or tag is None:
        return ""
    return _after_tag(tag["version"], int(described["distance"]), described["node"])


def _after_tag(tagged: str, distance: int, node: str) -> str:
    try:
        version = Version(tagged)
    except InvalidVersion:
        return ""
    if distance == 0:
        return str(version)
    release = [*version.release[:-1], version.release[-1] + 1]
    return _valid(f"{'.'.join(map(str, release))}.dev{distance}+g{node}")


def _untagged(repo: pygit2.Repository, sha: str) -> str:
    commits = sum(1 for _ in repo.walk(sha))
    return _valid(f"0.1.dev{commits}+g{sha[:_NODE_LENGTH]}")


def _valid(text: str) -> str:
    try:
        return str(Version(text))
    except InvalidVersion:
        return ""
