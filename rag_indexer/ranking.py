"""File-level ranking of chunk hits: which files a query is about, for the planner, the healer and the CLI.

Chunk BM25 answers "which function"; a question about a change ("fix sorting in TensAdd") is about files.
A file's score adds its best chunks with decaying weights (one strong chunk beats many weak ones, but a
second and third match still count), a bonus when it defines a name the query spells as code (``super_len``,
``TensAdd``), then the query's words found in the file's path (module and folder
names: ``completion`` → ``zsh_completions.go``), weighted by how rare each word is among the paths, and a
length prior: a long file is where more of a repository's changes land. Test files are recognised by the usual
conventions and ranked below sources unless the query asks for tests. A file the query names (``cleanup
help.py``, ``fix doc/util.go``) ranks above every file it does not name: a subject that spells a file name is
about that file. When the hits name fewer files than asked for, the longest other files follow (a subject with
no word of the code still gets a likely answer). The weights were chosen on five commit-subject sets
(bench/README.md, retrieval_bench.py).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from rag_indexer.models import Hit
from rag_indexer.store.base import query_terms

TOP_CHUNKS = 3  # a file's best chunks that count, weighted 1, DECAY, DECAY²
DECAY = 0.5
PATH_WEIGHT = 0.07  # per unit of path-word IDF, as a share of the query's best file score
SYMBOL_WEIGHT = 0.3  # defining a name the query spells as code, as a share of the query's best file score
LENGTH_WEIGHT = 0.2  # log(lines) ÷ log(the longest file's lines), as a share of the query's best file score
TEST_FACTOR = 0.5  # a test file's score when the query does not ask for tests
MIN_STEM = 4  # shorter words match a path word only exactly ('io' must not match 'iosys')

_PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A file name or path as written in prose: 'help.py', 'doc/man_docs.go', 'requests/__init__.py'. Words like
# 'e.g' or 'c.req' match too; they name no file, so they change nothing.
_FILE_NAME = re.compile(r"[A-Za-z0-9_.\-/]*[A-Za-z0-9_]\.[A-Za-z][A-Za-z0-9]{0,4}\b")
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "fixtures"})
_TEST_WORDS = frozenset({"test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "pytest", "unittest"})


def is_test_path(path: str) -> bool:
    """Test code by the conventions of Python, Go, JS/TS, Rust and Java: folders and file names."""
    parts = path.split("/")
    name = parts[-1]
    if _TEST_DIRS.intersection(p.lower() for p in parts[:-1]):
        return True
    stem = name.rsplit(".", 1)[0]
    return (
        name.startswith("test_")
        or name == "conftest.py"
        or stem.endswith(("_test", ".test", ".spec", "-test", "_spec", "Test", "Tests"))
        or stem in ("test", "tests")
    )


def path_words(path: str) -> frozenset[str]:
    """Lower-cased words of a path: folders, file name and its snake_case / CamelCase pieces."""
    return frozenset(p.lower() for word in re.split(r"[^A-Za-z0-9]+", path) for p in _PIECE.findall(word))


def _matches(term: str, word: str) -> bool:
    """Exact, or one a prefix of the other when both are long enough (completion ~ completions)."""
    if term == word:
        return True
    return len(term) >= MIN_STEM and len(word) >= MIN_STEM and (word.startswith(term) or term.startswith(word))


def path_scores(terms: Sequence[str], paths: Iterable[str]) -> dict[str, float]:
    """Per path, the summed IDF (among ``paths``) of the query terms its words match; paths with none left out."""
    paths_of: dict[str, set[str]] = defaultdict(set)  # word -> paths: far fewer words than (path, word) pairs
    n = 0
    for path in paths:
        n += 1
        for word in path_words(path):
            paths_of[word].add(path)
    out: dict[str, float] = defaultdict(float)
    for term in terms:
        matched = set().union(*(ps for word, ps in paths_of.items() if _matches(term, word)))
        if matched:
            idf = math.log(1 + n / len(matched))
            for p in matched:
                out[p] += idf
    return out


def _decayed(scores: list[float]) -> float:
    return sum(s * DECAY**i for i, s in enumerate(sorted(scores, reverse=True)[:TOP_CHUNKS]))


def code_names(query: str) -> frozenset[str]:
    """The query's words written as code, lower-cased: snake_case or CamelCase, at least 4 characters."""
    return frozenset(w.lower() for w in _IDENTIFIER.findall(query) if len(w) >= MIN_STEM and _looks_like_code(w))


def _looks_like_code(word: str) -> bool:
    return "_" in word.strip("_") or not (word.islower() or word.isupper() or word[1:].islower())


def wants_tests(terms: Sequence[str]) -> bool:
    return any(t in _TEST_WORDS for t in terms)


def file_mentions(query: str) -> frozenset[str]:
    """The file names and paths the query spells, lower-cased, without a leading './' or '/'."""
    return frozenset(m.lower().removeprefix("./").lstrip("/") for m in _FILE_NAME.findall(query))


def is_named(path: str, mentions: Iterable[str]) -> bool:
    """Whether ``path`` is a file the mentions name: the whole path, or its last components ('doc/util.go')."""
    lowered = path.lower()
    return any(lowered == m or lowered.endswith("/" + m) for m in mentions)


def named_files(
    lines: Mapping[tuple[str, str, str], int], query: str, skip: Iterable[tuple[str, str, str]], n: int
) -> list[tuple[str, str, str]]:
    """Up to ``n`` files of the scope the query names that are not in ``skip``, longest first.

    A named file may have no chunk hit at all ('cleanup help.py': help.py holds neither word), yet it is the
    best answer, so it joins the pool rank_files orders.
    """
    mentions = file_mentions(query)
    if not mentions:
        return []
    have = set(skip)
    fitting = (key for key in lines if key not in have and is_named(key[2], mentions))
    return sorted(fitting, key=lambda key: (-lines[key], key))[:n]


def _lead_named(total: dict[tuple[str, str, str], float], mentions: frozenset[str]) -> None:
    """Lift the files the query names above all others, keeping their order among themselves.

    Adding the best other file's score (rather than a weight) makes the rule hold whatever the scores' scale.
    """
    named = {key for key in total if is_named(key[2], mentions)} if mentions else set()
    lead = max((score for key, score in total.items() if key not in named), default=0.0)
    for key in named:
        total[key] += lead


def rank_files(
    hits: Sequence[Hit], query: str, k: int, lines: Mapping[tuple[str, str, str], int] | None = None
) -> list[Hit]:
    """The ``k`` best files among the hits: each one's best chunk hit, its score replaced by the file's score.

    Path words are weighted by their rarity among the hit files' paths: on five sets, files without a chunk
    hit gained nothing from a path match (and reading every path of the scope costs a query). ``lines``, the
    scope's line counts by (repo, ref, path), gives the length prior. Files the query names come first.
    """
    terms, names = query_terms(query), code_names(query)
    best: dict[tuple[str, str, str], Hit] = {}
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    defines: set[tuple[str, str, str]] = set()
    for hit in hits:
        key = (hit.repo, hit.ref, hit.path)
        best.setdefault(key, hit)
        scores[key].append(hit.score)
        if names and hit.symbol and hit.symbol.rsplit(".", 1)[-1].lower() in names:
            defines.add(key)
    total = {key: _decayed(ss) for key, ss in scores.items()}
    top = max(total.values(), default=0.0)
    for key in defines:
        total[key] += SYMBOL_WEIGHT * top
    keys_of: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key in best:
        keys_of[key[2]].append(key)
    for path, idf in path_scores(terms, keys_of).items():
        for key in keys_of[path]:
            total[key] += PATH_WEIGHT * idf * top
    for key, prior in length_prior(lines or {}, total).items():
        total[key] += LENGTH_WEIGHT * prior * top
    if not wants_tests(terms):
        for key in total:
            if is_test_path(key[2]):
                total[key] *= TEST_FACTOR
    _lead_named(total, file_mentions(query))
    ranked = sorted(total, key=lambda key: -total[key])[:k]
    return [best[key].model_copy(update={"score": total[key]}) for key in ranked]


def length_prior(
    lines: Mapping[tuple[str, str, str], int], keys: Iterable[tuple[str, str, str]]
) -> dict[tuple[str, str, str], float]:
    """log(lines) ÷ log(the scope's longest file), 0 to 1, for each of ``keys`` the scope has."""
    longest = math.log(max(2, *lines.values())) if lines else 1.0
    return {key: math.log(max(2, lines[key])) / longest for key in keys if key in lines}


def longest_files(
    lines: Mapping[tuple[str, str, str], int], query: str, skip: Iterable[tuple[str, str, str]], n: int
) -> list[tuple[str, str, str]]:
    """The ``n`` longest files not in ``skip``, test files only when the query asks for tests."""
    tests, have = wants_tests(query_terms(query)), set(skip)
    fitting = (key for key in lines if key not in have and (tests or not is_test_path(key[2])))
    return sorted(fitting, key=lambda key: (-lines[key], key))[:n]
