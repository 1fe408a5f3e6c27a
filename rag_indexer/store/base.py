"""The store interface both backends implement, and the pieces of query logic they share.

Content and mapping are separate: chunks are keyed by blob SHA (ids are uuid5 over blob SHA and symbol path),
and (repo, ref) → commit → tree → {path: blob} is a small table replaced whole on each index run. A rebase or
branch switch therefore rewrites only the mapping; queries join the two so a path deleted from a ref vanishes
from that ref's results at once.
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence

from rag_indexer.grep import GrepQuery
from rag_indexer.models import BlobChunks, Filters, Hit, RefFile, RefState

# Words too common to rank anything; dropping them keeps BM25 queries fast on 100k+ chunks.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "self",
        "def",
        "return",
        "none",
        "true",
        "false",
    ]
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_parts(name: str) -> list[str]:
    """'TensAdd.get_indices' → ['TensAdd', 'Tens', 'Add', 'get', 'indices'] (originals first)."""
    out: list[str] = []
    for word in _WORD.findall(name):
        out.append(word)
        pieces = _CAMEL.findall(word)
        if len(pieces) > 1:
            out.extend(pieces)
    return out


_ALNUM_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
# Languages whose identifiers are camelCase by convention; Python's and Rust's are snake_case, which FTS5's
# unicode61 splits at the underscores already (SymPy: no gain, +1 s of a 3 s parse in CPU).
CAMEL_CASE_LANGUAGES = frozenset({"javascript", "typescript", "tsx", "go", "java"})


@functools.lru_cache(maxsize=65536)  # identifiers repeat across chunks and files
def _camel_pieces(word: str) -> str:
    return " ".join(_CAMEL.findall(word))


def camel_words(text: str) -> str:
    """The words of the CamelCase identifiers in ``text``, so a query for 'form data' meets isFormData.

    Every use counts (axios: once per chunk lost 0.011 MRR and 0.012 R@10); the order is the text's, so a
    delete re-creates the same tokens.
    """
    mixed = (w for w in _ALNUM_WORD.findall(text) if not (w.islower() or w.isupper() or w[1:].islower()))
    return " ".join(_camel_pieces(w) for w in mixed)


def query_terms(text: str, limit: int = 32) -> list[str]:
    """Lower-cased, de-duplicated search terms of a free-text query (identifiers split too)."""
    seen: dict[str, None] = {}
    for part in identifier_parts(text):
        term = part.lower()
        if len(term) > 1 and term not in STOPWORDS:
            seen.setdefault(term, None)
    return list(seen)[:limit]


def names_field(symbol: str, signature: str, docstring: str) -> str:
    """The text searched with a higher weight than the body: the symbol's name parts and its docstring."""
    return " ".join([*identifier_parts(symbol), signature, docstring])


def fuse(
    keyword: Sequence[tuple[str, float]], vector: Sequence[tuple[str, float]], alpha: float
) -> list[tuple[str, float]]:
    """Relative-score fusion (as Weaviate's default): min-max normalise each list, weight, add.

    ``alpha`` 0 is keyword only, 1 vector only. Scores must be 'higher is better'.
    """

    def normalised(items: Sequence[tuple[str, float]]) -> dict[str, float]:
        if not items:
            return {}
        scores = [s for _, s in items]
        lo, hi = min(scores), max(scores)
        span = hi - lo
        return {key: (s - lo) / span if span else 1.0 for key, s in items}

    combined: dict[str, float] = {}
    for key, s in normalised(keyword).items():
        combined[key] = combined.get(key, 0.0) + (1 - alpha) * s
    for key, s in normalised(vector).items():
        combined[key] = combined.get(key, 0.0) + alpha * s
    return sorted(combined.items(), key=lambda kv: -kv[1])


def dedupe_hits(hits: Iterable[Hit], k: int) -> list[Hit]:
    """One hit per (repo, path, chunk): the same blob under several refs is reported once."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Hit] = []
    for hit in hits:
        key = (hit.repo, hit.path, hit.id)
        if key not in seen:
            seen.add(key)
            out.append(hit)
            if len(out) >= k:
                break
    return out


class IndexStore(ABC):
    """Where chunks, vectors and the (repo, ref) mapping live. Implementations: embedded, weaviate."""

    #: True when the store computes vectors itself (Weaviate-side vectorizer).
    server_vectorizes: bool = False

    # -- content, keyed by blob SHA ------------------------------------------------------------------
    @abstractmethod
    def indexed_blobs(self, shas: Iterable[str]) -> dict[str, str]:
        """blob SHA → language, for those of ``shas`` whose chunks the store has confirmed."""

    @abstractmethod
    def write_blobs(self, items: Sequence[BlobChunks]) -> None:
        """Store the chunks (and vectors) of each blob, then mark it indexed; idempotent."""

    @abstractmethod
    def blob_symbols(self, shas: Iterable[str]) -> dict[str, dict[str, str]]:
        """blob SHA → {symbol key → content hash}, to count symbols added/changed/removed."""

    # -- mapping ---------------------------------------------------------------------------------------
    @abstractmethod
    def get_ref(self, repo: str, ref: str) -> RefState | None: ...

    @abstractmethod
    def ref_files(self, repo: str, ref: str) -> dict[str, RefFile]: ...

    @abstractmethod
    def set_ref(self, state: RefState, files: Sequence[RefFile]) -> None:
        """Replace the mapping of (repo, ref) in one step: readers see the old or the new one."""

    @abstractmethod
    def list_refs(self, repo: str | None = None) -> list[RefState]: ...

    # -- queries (every hit is expanded to the paths its blob has in the filtered refs) ----------------------
    @abstractmethod
    def search(
        self, text: str, vector: Sequence[float] | None, k: int, alpha: float, filters: Filters
    ) -> list[Hit]: ...

    @abstractmethod
    def lookup_names(self, name: str, filters: Filters) -> list[Hit]:
        """Symbols whose short name or qualified name equals ``name`` exactly."""

    @abstractmethod
    def chunks_at(self, path: str, filters: Filters) -> list[Hit]:
        """All chunks (file chunk included) of the blob at ``path`` in the filtered refs."""

    @abstractmethod
    def get_chunks(self, ids: Sequence[str], filters: Filters) -> list[Hit]: ...

    @abstractmethod
    def file_texts(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        """File chunks in scope, by repo, path and ref; with ``query``, at least those that may match it.

        A store may pass files that do not match (the caller confirms with the regex) but never drops one
        that does.
        """

    @abstractmethod
    def file_lines(self, filters: Filters) -> dict[tuple[str, str, str], int]:
        """(repo, ref, path) → line count of every file in scope: the file ranking's length prior."""

    @abstractmethod
    def symbols(self, filters: Filters, query: GrepQuery | None = None) -> Iterator[Hit]:
        """Symbol chunks in scope without their text; with ``query``, only those whose name matches it."""

    @abstractmethod
    def symbol_spans(self, blob_shas: Iterable[str]) -> dict[str, list[tuple[str, int, int]]]:
        """blob SHA → (qualified name, start line, end line) of each of its symbols (parts merged)."""

    @abstractmethod
    def gc(self) -> int:
        """Delete blobs no ref maps to; return how many."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
