"""Where grep packs live, which pack answers a grep, and the process that builds one.

A pack is named by the git tree it holds, so it never goes stale: a tree's files are the same forever. What
can go stale is which tree a repository's ref stands for, so ``mendflow grep`` finds its pack through a
*locator*, written when the index answered that question, and trusted only while the index's *refs token* is
the one the locator recorded: ``EmbeddedStore.set_ref`` voids the token before a ref moves and writes a new
one after. Packs and locators are caches: deleting them costs speed, never answers.

On ``mendflow grep``'s start-up path: ``os`` and ``sys`` only at the top.
"""

from __future__ import annotations

import os
import sys

from rag_indexer.store import DATABASE_FILE
from rag_indexer.store.grep_pack import VERSION

MAX_PACK_TEXT = 1 << 30  # characters of text: the builder holds a tree's texts in memory while it writes
KEEP_PACKS = 8  # the most recently built packs kept; older ones are built again when asked for


# -- where things live -----------------------------------------------------------------------------------
def pack_dir(index_dir: str) -> str:
    return os.path.join(index_dir, "grep")


def pack_path(index_dir: str, tree: str) -> str:
    """A tree's pack. The tree alone names it: the index maps a tree to the same files each time it is indexed."""
    return os.path.join(pack_dir(index_dir), "packs", f"{tree}-v{VERSION}.pack")


def _token_path(index_dir: str) -> str:
    return os.path.join(pack_dir(index_dir), "refs-token")


def _locator_path(index_dir: str, key: str) -> str:
    return os.path.join(pack_dir(index_dir), "at", f"{_fnv1a(key):016x}")


def _fnv1a(text: str) -> int:
    """A stable 64-bit hash of the locator's key (hashlib's import costs a grep ~1 ms; the key is re-checked)."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


# -- the refs token and locators --------------------------------------------------------------------------
def refs_changing(index_dir: str) -> None:
    """Called before a ref changes: every locator stops being trusted until ``refs_changed``."""
    _write_small(_token_path(index_dir), "-")


def refs_changed(index_dir: str) -> None:
    _write_small(_token_path(index_dir), os.urandom(8).hex())


def refs_token(index_dir: str) -> str | None:
    """The current token, with the database's inode (an index deleted and begun again is another index);
    None while a ref is changing, or when there is no index."""
    token = _read_small(_token_path(index_dir))
    try:
        database = os.stat(os.path.join(index_dir, DATABASE_FILE))
    except OSError:
        return None
    return None if token in (None, "", "-") else f"{token}.{database.st_ino}"


def first_token(index_dir: str) -> None:
    """Give an index written before packs existed its first token (never replacing one, or a ref's "-")."""
    path = _token_path(index_dir)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return
    with os.fdopen(descriptor, "w") as f:
        f.write(os.urandom(8).hex())


def remember(index_dir: str, key: str, token: str, tree: str) -> bool:
    """Record that ``key`` (where and which ref a grep asked for) stood for ``tree`` while ``token`` held;
    False when it cannot be written (a read-only index: no pack either, then)."""
    return _write_small(_locator_path(index_dir, key), f"{token}\t{tree}\t{key}")


def recall(index_dir: str, key: str) -> str | None:
    """The tree ``key`` stands for, if its locator was written under the current refs token."""
    found = _read_small(_locator_path(index_dir, key))
    if found is None:
        return None
    token, tree, stored_key = [*found.split("\t", 2), "", ""][:3]
    return tree if stored_key == key and token == refs_token(index_dir) else None


def _write_small(path: str, text: str) -> bool:
    """Best effort: a cache that cannot be written only costs the next grep its speed."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
    except OSError:
        return False
    return True


def _read_small(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogatepass") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def prune(index_dir: str, keep: int = KEEP_PACKS) -> None:
    """Delete all but the ``keep`` newest packs (a cache: an old tree's pack is built again when asked for)."""
    where = os.path.join(pack_dir(index_dir), "packs")
    try:
        packs = [e for e in os.scandir(where) if e.name.endswith(".pack")]
        packs.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for entry in packs[keep:]:
        try:
            os.unlink(entry.path)
        except OSError:
            continue


def build_detached(index_dir: str, repo: str, ref: str, tree: str) -> None:
    """Start building a tree's pack in a process of its own, which outlives the grep that asked for it."""
    import subprocess

    args = [sys.executable, "-m", __name__, index_dir, repo, ref, tree]
    quiet = subprocess.DEVNULL
    subprocess.Popen(args, stdin=quiet, stdout=quiet, stderr=quiet, start_new_session=True)


def main(argv: list[str]) -> int:
    """``python -m rag_indexer.store.grep_cache INDEX_DIR REPO REF TREE``: build that tree's pack once."""
    from pathlib import Path

    from rag_indexer.store.embedded_read import ReadOnlyIndex
    from rag_indexer.store.grep_pack import write_pack

    index_dir, repo, ref, tree = argv
    target = pack_path(index_dir, tree)
    if os.path.exists(target) or not claim(target + ".building"):
        return 0
    index = ReadOnlyIndex.open(Path(index_dir))
    try:
        # Not when the ref moved on (a later grep asks for its new tree), nor for a tree too big to hold in
        # memory at once (its greps stay on the index's own path).
        if index is not None and index.tree(repo, ref) == tree and index.text_size(repo, ref) <= MAX_PACK_TEXT:
            write_pack(target, index.pack_rows(repo, ref))
    finally:
        if index is not None:
            index.close()
        os.unlink(target + ".building")
    prune(index_dir)
    return 0


def claim(lock: str, stale_after: float = 600.0) -> bool:
    """One builder per pack: True when this process may build (no other has for ``stale_after`` seconds)."""
    import time

    os.makedirs(os.path.dirname(lock), exist_ok=True)
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:
        try:
            if time.time() - os.stat(lock).st_mtime < stale_after:
                return False
            os.utime(lock)  # a builder that died left it: take it over
        except OSError:
            return False  # its builder just finished: the pack is there
        return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
