"""Grep packs: one indexed git tree's files in one memory-mapped file, so ``mendflow grep`` answers without SQLite.

The layout and its reader and writer; ``grep_cache.py`` says where packs live, which one answers a grep, and
builds them.

Why: through SQLite a grep on SymPy takes ~50 ms end to end, against rg's ~14 ms: importing sqlite3, reading
5.5 MB of trigram signatures and the candidates' texts out of the database cost more than the search. A pack
holds the same bits laid out for a query: the files' paths and texts, and each size group's signatures
transposed (one row of file bits per signature bit), so a query reads a few hundred bytes per trigram and then
only its candidates' texts. Nothing here is new data: a pack is derived from the index, and is a cache.

This module is on ``mendflow grep``'s start-up path: it imports nothing beyond ``bisect``, ``mmap`` and ``os``
at the top (numpy only to write a pack, in the builder process).
"""

from __future__ import annotations

import bisect
import mmap
import os

from rag_indexer.store import grams

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    import numpy as np

    from rag_indexer.grep import GrepQuery

VERSION = 2  # in the file name too (grep_cache.pack_path): a pack of an older layout is never read
FORMAT = b"MFGREP%d\n" % VERSION


# -- reading a pack ----------------------------------------------------------------------------------------
# The layout, little-endian, every array 8-byte aligned:
#   FORMAT, u32 files, u32 groups, u64 offsets of the paths, texts, marks and flags sections;
#   per group: u32 bits_log2, u32 files, u64 offset of its file numbers (u32), u64 offset of its rows;
#   u64 ends of each file's path, text (with the newline before it) and marks, cumulated;
#   the paths; the texts, each after a newline, so ^ and \b see a line start there, as at a text's start;
#   marks: per file, the offset of the start of each MARK_EVERY-th line, for line numbers without counting
#   from the top; flags: one byte per file, PLAIN when the text is ASCII without \x1c-\x1f.
# native/src/pack.rs reads the same layout: a change here is a new VERSION there too.
MARK_EVERY = 16
PLAIN = 1
_SECTIONS = len(FORMAT) + 8
_HEADER = _SECTIONS + 32
_GROUP = 24


class Pack:
    """An open pack: paths and texts by file number (path order), line marks and the transposed signatures."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.view = view = memoryview(data)
        self.count, groups = (_u32_at(view, len(FORMAT) + o) for o in (0, 4))
        self.paths_at, self.texts_at, marks_at, flags_at = (_u64_at(view, _SECTIONS + 8 * k) for k in range(4))
        at, size = _HEADER + groups * _GROUP, 8 * self.count
        self.path_ends, self.text_ends, self.mark_ends = (
            view[a : a + size].cast("Q") for a in (at, at + size, at + 2 * size)
        )
        self.marks = view[marks_at : marks_at + 4 * (self.mark_ends[-1] if self.count else 0)].cast("I")
        self.flags = view[flags_at : flags_at + self.count]
        self.groups = [_group(view, _HEADER + g * _GROUP) for g in range(groups)]

    @classmethod
    def open(cls, path: str) -> Pack | None:
        try:
            with open(path, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # missing, or empty (mmap refuses size 0)
            return None
        try:
            if data[: len(FORMAT)] == FORMAT:
                return cls(data)
        except (ValueError, TypeError, IndexError):  # cut short or damaged: the index answers instead
            pass
        data.close()
        return None

    def path(self, i: int) -> str:
        start = self.path_ends[i - 1] if i else 0
        return self.data[self.paths_at + start : self.paths_at + self.path_ends[i]].decode("utf-8", "surrogatepass")

    def text_span(self, i: int) -> tuple[int, int]:
        """Where file ``i``'s text is in the pack (past the newline before it)."""
        return self.texts_at + (self.text_ends[i - 1] if i else 0) + 1, self.texts_at + self.text_ends[i]

    def contains(self, i: int, needle: bytes) -> bool:
        start, stop = self.text_span(i)
        return self.data.find(needle, start, stop) != -1  # in place: no copy of the text

    def candidates(self, hashes: set[int]) -> list[int]:
        """File numbers (in path order) whose signature holds every hash's bit: ``SignatureSet.candidates``."""
        found: list[int] = []
        for k, ids, rows, width in self.groups:
            alive = (1 << len(ids)) - 1
            for bit in {h >> (32 - k) for h in hashes}:
                alive &= int.from_bytes(rows[bit * width : (bit + 1) * width], "little")
                if not alive:
                    break
            while alive:
                low = alive & -alive
                found.append(ids[low.bit_length() - 1])
                alive ^= low
        return sorted(found)

    def lines(self, query: GrepQuery, path_prefix: str | None = None) -> Iterator[tuple[str, int, str]]:
        """(path, line number, line) of every matching line, as the index's own grep gives them."""
        hashes = grams.literal_hashes(query.literals, query.ignore_case)
        numbers: Sequence[int] = self.candidates(hashes) if hashes else range(self.count)
        needle = max(query.literals, key=len).encode("utf-8", "surrogatepass") if query.literals else b""
        exact = bool(needle) and not query.ignore_case
        for i in numbers:
            path = self.path(i)
            if path_prefix and not path.startswith(path_prefix):
                continue
            start, stop = self.text_span(i)
            spans = query.buffer_spans(self.data, start, stop, bool(self.flags[i] & PLAIN))
            if spans is not None:
                found = self._numbered(i, spans)
            elif exact and not self.contains(i, needle):
                continue  # a hash collision: no need to decode the text
            else:
                found = query.lines(self.data[start:stop].decode("utf-8", "surrogatepass"))
            for number, line in found:
                yield path, number, line

    def _numbered(self, i: int, spans: Iterator[tuple[int, int]]) -> Iterator[tuple[int, str]]:
        """(line number, line) of each span of file ``i``, counting newlines from the nearer of the last mark
        and the span before, never from the text's top."""
        data, marks = self.data, self.marks
        start, _ = self.text_span(i)
        lo, hi = (self.mark_ends[i - 1] if i else 0), self.mark_ends[i]
        pos, line = start, 1
        for first, last in spans:
            k = bisect.bisect_right(marks, first - start, lo, hi)
            mark = start + marks[k - 1] if k > lo else start
            if mark > pos:
                pos, line = mark, 1 + MARK_EVERY * (k - lo)
            line += data[pos:first].count(b"\n")
            pos = first
            yield line, data[first:last].decode("utf-8", "surrogatepass")

    def close(self) -> None:
        views = [self.path_ends, self.text_ends, self.mark_ends, self.marks, self.flags]
        views += [v for _, ids, rows, _ in self.groups for v in (ids, rows)]
        for view in views:  # mmap refuses to close while a view of it exists
            view.release()
        self.view.release()
        self.data.close()


def _u32_at(view: memoryview, at: int) -> int:
    return int.from_bytes(view[at : at + 4], "little")


def _u64_at(view: memoryview, at: int) -> int:
    return int.from_bytes(view[at : at + 8], "little")


def _group(view: memoryview, at: int) -> tuple[int, memoryview, memoryview, int]:
    k, count = _u32_at(view, at), _u32_at(view, at + 4)
    ids_at, rows_at = _u64_at(view, at + 8), _u64_at(view, at + 16)
    width = (count + 7) // 8
    return k, view[ids_at : ids_at + 4 * count].cast("I"), view[rows_at : rows_at + (width << k)], width


# -- writing a pack (the builder process) ------------------------------------------------------------------
def write_pack(path: str, files: Sequence[tuple[str, str, int, bytes]]) -> None:
    """Write (path, text, bits_log2, signature) rows, in path order, to ``path`` at once (renamed into place)."""
    import numpy as np

    paths = [p.encode("utf-8", "surrogatepass") for p, _, _, _ in files]
    texts = [b"\n" + t.encode("utf-8", "surrogatepass") for _, t, _, _ in files]
    marks = [_marks(np.frombuffer(t, dtype=np.uint8)[1:]) for t in texts]
    flags = bytes(PLAIN if _plain(t) else 0 for t in texts)
    by_k: dict[int, list[int]] = {}
    for i, (_, _, k, _) in enumerate(files):
        by_k.setdefault(k, []).append(i)
    ends = [np.cumsum([len(x) for x in column], dtype=np.uint64).tobytes() for column in (paths, texts, marks)]
    sections = _Sections(_HEADER + len(by_k) * _GROUP + sum(map(len, ends)))
    paths_at, texts_at = sections.add(b"".join(paths)), sections.add(b"".join(texts))
    marks_at, flags_at = sections.add(b"".join(m.tobytes() for m in marks)), sections.add(flags)
    table = []
    for k, ids in sorted(by_k.items()):
        rows = _transposed(np.stack([np.frombuffer(files[i][3], dtype=np.uint8) for i in ids]))
        table.append(_u32(k) + _u32(len(ids)) + _u64(sections.add(np.asarray(ids, np.uint32).tobytes())))
        table.append(_u64(sections.add(rows)))
    head = [FORMAT, _u32(len(files)), _u32(len(by_k)), *map(_u64, (paths_at, texts_at, marks_at, flags_at))]
    _replace(path, [*head, *table, *ends, *sections.parts])


class _Sections:
    """Byte blocks laid one after another from ``at``, each at an 8-byte boundary."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.parts: list[bytes] = []

    def add(self, block: bytes) -> int:
        pad = -self.at % 8
        self.parts += [b"\0" * pad, block]
        self.at += pad + len(block)
        return self.at - len(block)


def _marks(text: np.ndarray) -> np.ndarray:
    """Offsets of the starts of lines 1 + MARK_EVERY * k (k >= 1)."""
    import numpy as np

    newlines = np.flatnonzero(text == ord("\n"))
    return (newlines[MARK_EVERY - 1 :: MARK_EVERY] + 1).astype(np.uint32)


def _plain(text: bytes) -> bool:
    return text.isascii() and not any(bytes([c]) in text for c in range(0x1C, 0x20))


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "little")


def _u64(n: int) -> bytes:
    return n.to_bytes(8, "little")


def _transposed(signatures: np.ndarray) -> bytes:
    """One row per signature bit, each the group's files as bits (file j: bit j of the little-endian row)."""
    import numpy as np

    bits = np.unpackbits(signatures, axis=1)  # files x bits, in np.packbits order (the first bit is 0x80)
    return bytes(np.packbits(bits.T, axis=1, bitorder="little").tobytes())


def _replace(path: str, parts: list[bytes]) -> None:
    """Write to a private name, then rename: a reader sees no pack or a whole one, and a failed write leaves
    nothing behind."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial"
    try:
        with open(partial, "wb") as f:
            f.writelines(parts)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise
