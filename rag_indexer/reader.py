"""Read a commit's tree straight from the object database (no checkout) and decide what to index.

Skipped: submodules and symlinks, oversize blobs, binaries (a NUL byte in the first 8000 bytes, git's own
test), vendored and generated paths (default globs plus .gitattributes ``linguist-vendored`` /
``linguist-generated`` / ``binary`` / ``-text``, where a .gitattributes is committed).

Decoding policy for text that is not UTF-8: UTF-8 (a BOM is dropped) → UTF-16 when a UTF-16 BOM is present
→ Latin-1. Latin-1 maps every byte to one character, so nothing is lost or replaced and line numbers stay
exact; the encoding used is recorded on the file so a reader knows the text is a transliteration.
"""

from __future__ import annotations

import codecs
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pygit2

from mendflow.errors import CodeIndexError, CommitNotFoundError, RepoNotFoundError
from mendflow.identity import repo_id
from rag_indexer.config import IndexerConfig
from rag_indexer.languages import language_for_path
from rag_indexer.sizes import BlobSizes

BINARY_SNIFF_BYTES = 8000


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob_sha: str
    size: int
    language: str


@dataclass
class TreeListing:
    commit: str
    tree: str
    entries: list[TreeEntry]
    skipped: dict[str, int] = field(default_factory=dict)
    binary_shas: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str


def open_repo(path: str | Path) -> pygit2.Repository:
    found = pygit2.discover_repository(str(path))
    if not found:
        raise RepoNotFoundError(f"{path} is not a git repository", hint="pass the path of a git work tree")
    return pygit2.Repository(found)


def repo_key(repo: pygit2.Repository) -> str:
    """The name a repository is indexed under: its identity, ``owner/name`` (``mendflow.identity``)."""
    return repo_id(repo)


def resolve_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit:
    try:
        obj = repo.revparse_single(ref)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CommitNotFoundError(
            f"ref {ref!r} does not name a commit in {repo_key(repo)}",
            hint="pass a branch, tag or commit that exists (git rev-parse REF)",
        ) from exc
    return commit


def decode_blob(data: bytes) -> DecodedText:
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return DecodedText(data.decode("utf-16"), "utf-16")
        except UnicodeDecodeError:
            pass
    return DecodedText(data.decode("latin-1"), "latin-1")


def is_binary(data: bytes) -> bool:
    head = data[:BINARY_SNIFF_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False  # UTF-16 text is full of NULs but is text
    return b"\x00" in head


# --- glob matching with gitignore-style semantics ('**' spans directories, '*' does not) -----------------


@lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append(f"[{'^' + body[1:] if body.startswith('!') else body}]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    # A pattern naming a directory covers everything below it.
    return re.compile(f"^{prefix}{''.join(out)}(?:/.*)?$")


def glob_match(pattern: str, path: str) -> bool:
    return bool(_glob_regex(pattern).match(path))


@lru_cache(maxsize=64)
def _any_glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # One alternation instead of one regex per glob: a listing tests every path against ~25 globs.
    return re.compile("|".join(f"(?:{_glob_regex(p).pattern})" for p in patterns) or r"(?!)")


def any_glob_match(patterns: tuple[str, ...], path: str) -> bool:
    return bool(_any_glob_regex(patterns).match(path))


@dataclass
class _AttrRule:
    base: str
    pattern: str
    attrs: dict[str, bool]


def _parse_gitattributes(base: str, text: str) -> list[_AttrRule]:
    rules: list[_AttrRule] = []
    wanted = {"linguist-vendored", "linguist-generated", "binary", "text"}
    for line in text.splitlines():
        parts = line.strip().split()
        if not parts or parts[0].startswith("#"):
            continue
        attrs: dict[str, bool] = {}
        for token in parts[1:]:
            name, value = token, True
            if token.startswith(("-", "!")):
                name, value = token[1:], False
            elif "=" in token:
                name, raw = token.split("=", 1)
                value = raw.lower() not in ("false", "0", "no")
            if name in wanted:
                attrs[name] = value
        if attrs:
            rules.append(_AttrRule(base, parts[0], attrs))
    return rules


class AttributeRules:
    """The committed .gitattributes files of one tree; later and deeper lines win, as in git."""

    def __init__(self, rules: list[_AttrRule]) -> None:
        # Shallower files first so deeper ones (processed later) override.
        self.rules = sorted(rules, key=lambda r: r.base.count("/") if r.base else -1)

    def lookup(self, path: str) -> dict[str, bool]:
        found: dict[str, bool] = {}
        for rule in self.rules:
            if rule.base and not path.startswith(rule.base + "/"):
                continue
            rel = path[len(rule.base) + 1 :] if rule.base else path
            if glob_match(rule.pattern, rel):
                found.update(rule.attrs)
        return found


class TreeReader:
    """Lists the indexable blobs of one commit and reads/decodes them on demand."""

    def __init__(self, repo: pygit2.Repository, config: IndexerConfig) -> None:
        self.repo = repo
        self.config = config

    def listing(self, commit: pygit2.Commit, sizes: BlobSizes | None = None) -> TreeListing:
        """Every blob of the commit's tree with its skip decision; ``sizes`` spares reading known blobs' sizes."""
        blobs = list(self._walk(commit.tree, ""))
        known = sizes.get_many({sha for _, sha in blobs}) if sizes else {}
        fresh = {sha: self.repo.odb.read_header(sha)[1] for _, sha in blobs if sha not in known}
        if sizes:
            sizes.put_many(fresh)
        known.update(fresh)
        raw = [(path, sha, known[sha]) for path, sha in blobs]
        attributes = self._attributes(raw)
        listing = TreeListing(commit=str(commit.id), tree=str(commit.tree.id), entries=[])
        for path, blob_sha, size in raw:
            reason = self._skip_reason(path, size, attributes)
            if reason:
                listing.skipped[reason] = listing.skipped.get(reason, 0) + 1
                continue
            listing.entries.append(TreeEntry(path, blob_sha, size, language_for_path(path)))
        return listing

    def _walk(self, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            if entry.filemode == pygit2.enums.FileMode.TREE:
                yield from self._walk(self.repo[entry.id].peel(pygit2.Tree), path + "/")
            elif entry.filemode in (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE):
                yield path, str(entry.id)
            # symlinks and submodules (commits) carry no source of this repository

    def _attributes(self, raw: list[tuple[str, str, int]]) -> AttributeRules | None:
        rules: list[_AttrRule] = []
        for path, blob_sha, _ in raw:
            if posixpath.basename(path) == ".gitattributes":
                data = self.repo[blob_sha].peel(pygit2.Blob).data
                rules.extend(_parse_gitattributes(posixpath.dirname(path), decode_blob(data).text))
        return AttributeRules(rules) if rules else None

    def _skip_reason(self, path: str, size: int, attributes: AttributeRules | None) -> str | None:
        attrs = attributes.lookup(path) if attributes else {}
        if attrs.get("binary") or attrs.get("text") is False:
            return "binary"
        vendored = attrs.get("linguist-vendored")
        if vendored is None:
            vendored = any_glob_match(self.config.vendored_globs, path)
        if vendored:
            return "vendored"
        generated = attrs.get("linguist-generated")
        if generated is None:
            generated = any_glob_match(self.config.generated_globs, path)
        if generated:
            return "generated"
        if size > self.config.max_file_bytes:
            return "oversize"
        return None

    def read(self, blob_sha: str) -> bytes:
        # Straight from the object database by full id: repo[sha] resolves a prefix and builds a Blob
        # object, which cost twice as much on a cold index.
        try:
            kind, data = self.repo.odb.read(pygit2.Oid(hex=blob_sha))
        except (KeyError, ValueError) as exc:
            raise CodeIndexError(f"blob {blob_sha} is missing from the object database") from exc
        if kind != pygit2.enums.ObjectType.BLOB:
            raise CodeIndexError(f"object {blob_sha} is not a blob")
        return bytes(data)
