"""Trigram signatures: a small bit set per blob that rules out, before any text is read, files a grep cannot match.

Each file's UTF-8 bytes, ASCII-lower-cased, are cut into overlapping trigrams; each trigram hashes to one bit of
a set sized to the file (about one bit per byte, 2^10 to 2^18 bits). A literal can only occur in a file whose
set has the bits of all the literal's trigrams, so a grep reads only those files and confirms with ``re``.
Hashing may let a few files through that do not match; it never drops one that does.

Why not an FTS5 ``tokenize='trigram'`` table: on SymPy (30 MB of text) building it cost 2.5 s of CPU, about
70 % of the tree-sitter parse the whole cold index is measured against; these signatures cost 0.2 s and
answer the same question (which files may contain these literals) for the grep sizes we serve.

Writing a signature uses numpy (a whole file's trigrams at once); a query does not: its few trigrams are probed
in each signature's bytes in Python, faster than numpy's import, which ``mendflow grep`` would otherwise pay.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy as np

MIN_BITS_LOG2 = 10
MAX_BITS_LOG2 = 18
_MULTIPLIER = 0x9E3779B1  # Knuth's multiplicative hash (modulo 2^32); the top bits index the set
_HASH_MASK = 0xFFFFFFFF
# The only non-ASCII characters re.IGNORECASE matches with an ASCII letter (U+0130, U+0131, U+017F, U+212A),
# as UTF-8. They are folded to that letter on both sides (file and literal), so an ignore-case literal's ASCII
# trigrams stay required. Replacing whole UTF-8 sequences keeps every occurrence of a literal an occurrence.
CASE_FOLDS = ((b"\xc4\xb0", b"i"), (b"\xc4\xb1", b"i"), (b"\xc5\xbf", b"s"), (b"\xe2\x84\xaa", b"k"))


# Every non-ASCII byte becomes NUL, to split on (not re: a literal grep starts without it). A literal's own NUL
# splits it too, which only drops trigrams: fewer required hashes never lose a match.
_NON_ASCII_TO_NUL = bytes(range(128)) + b"\0" * 128


def _fold(data: bytes) -> bytes:
    if not data.isascii():
        for seq, letter in CASE_FOLDS:
            data = data.replace(seq, letter)
    return data.lower()  # ASCII letters only; other bytes stay as they are


def _hashes(data: bytes) -> np.ndarray:
    """uint32 hashes of the ASCII-lower-cased trigrams of ``data`` (empty below 3 bytes), for a whole file."""
    import numpy as np

    data = _fold(data)
    if len(data) < 3:
        return np.zeros(0, dtype=np.uint32)
    b = np.frombuffer(data, dtype=np.uint8).astype(np.uint32)
    grams = (b[:-2] << np.uint32(16)) | (b[1:-1] << np.uint32(8)) | b[2:]
    return grams * np.uint32(_MULTIPLIER)  # wraps modulo 2^32 by design


def _few_hashes(data: bytes) -> set[int]:
    """``_hashes`` of a short literal, in Python."""
    data = _fold(data)
    return {((data[i] << 16 | data[i + 1] << 8 | data[i + 2]) * _MULTIPLIER) & _HASH_MASK for i in range(len(data) - 2)}


def bits_log2(size: int) -> int:
    return min(MAX_BITS_LOG2, max(MIN_BITS_LOG2, size.bit_length()))


def signature(data: bytes) -> tuple[int, bytes]:
    """(log2 of the number of bits, the packed bit set) for one file's bytes."""
    import numpy as np

    k = bits_log2(len(data))
    bits = np.zeros(1 << k, dtype=bool)
    bits[_hashes(data) >> np.uint32(32 - k)] = True
    return k, np.packbits(bits).tobytes()


def literal_hashes(literals: Iterable[str], ignore_case: bool) -> set[int]:
    """Hashes of the trigrams every matching file must contain (empty: no prefilter possible)."""
    found: set[int] = set()
    for literal in literals:
        data = literal.encode("utf-8", "surrogatepass")
        if not ignore_case:
            found |= _few_hashes(data)
            continue
        # Under ignore-case only ASCII runs have one spelling per trigram (after the folds above).
        for run in _fold(data).translate(_NON_ASCII_TO_NUL).split(b"\0"):
            found |= _few_hashes(run)
    return found


class SignatureSet:
    """The signatures of the files in one query scope, grouped by size (a hash's bit depends on it)."""

    def __init__(self, rows: Sequence[tuple[str, int, bytes]]) -> None:
        self.groups: dict[int, list[tuple[str, bytes]]] = {}
        for sha, k, sig in rows:
            self.groups.setdefault(k, []).append((sha, sig))

    def candidates(self, hashes: set[int]) -> set[str]:
        """Blob SHAs whose signature holds every hash's bit (``np.packbits`` order: the first bit is 0x80)."""
        out: set[str] = set()
        for k, items in self.groups.items():
            bits = sorted({h >> (32 - k) for h in hashes})
            probes = [(bit >> 3, 0x80 >> (bit & 7)) for bit in bits]
            out.update(sha for sha, sig in items if all(sig[i] & mask for i, mask in probes))
        return out
