"""Languages: file extension → language name → tree-sitter grammar (per-language wheels) and tags query.

Grammars come from the per-language wheels (tree-sitter-python, -javascript, ...); tree-sitter-language-pack
is deliberately not used (from 1.0 it downloads grammars at run time). Queries are data files in queries/.
"""

from __future__ import annotations

import importlib
import posixpath
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import tree_sitter as ts

from mendflow.errors import CodeIndexError

QUERY_DIR = files("rag_indexer") / "queries"

# language → (module, function returning the grammar pointer, query file stem)
_GRAMMARS: dict[str, tuple[str, str, str]] = {
    "python": ("tree_sitter_python", "language", "python"),
    "javascript": ("tree_sitter_javascript", "language", "javascript"),
    "typescript": ("tree_sitter_typescript", "language_typescript", "typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx", "typescript"),
    "go": ("tree_sitter_go", "language", "go"),
    "rust": ("tree_sitter_rust", "language", "rust"),
    "java": ("tree_sitter_java", "language", "java"),
}

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    # Text we index at file granularity only.
    ".md": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".cfg": "ini",
    ".ini": "ini",
    ".sh": "shell",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
}


def language_for_path(path: str) -> str:
    name = posixpath.basename(path)
    if name == "Dockerfile":
        return "dockerfile"
    return _EXTENSIONS.get(posixpath.splitext(name)[1].lower(), "text")


def has_grammar(language: str) -> bool:
    return language in _GRAMMARS


@dataclass(frozen=True)
class Anchor:
    """A keyword every definition of one kind starts with, as a direct child of the definition's node."""

    node_type: str  # the definition's node ('function_definition')
    kind: str  # as the tags query's capture names it ('function')
    name_type: str  # the node type the query requires of the name field ('identifier')


# Languages whose tags query matches definition nodes by type alone (plus a name field of one node type), so
# the definitions can be found from their keywords: see chunker._anchored_definitions. The .scm query stays
# the reference (a test checks both agree) and is still used for trees with parse errors.
_ANCHORS: dict[str, dict[str, Anchor]] = {
    "python": {
        "def": Anchor("function_definition", "function", "identifier"),
        "class": Anchor("class_definition", "class", "identifier"),
    },
}


@dataclass(frozen=True)
class Anchors:
    # Every occurrence of any keyword in the source, wherever it is. No keyword overlaps another or itself (no
    # proper suffix of one is a prefix of one; none is a prefix of another), so the pattern's non-overlapping
    # matches include every occurrence.
    pattern: re.Pattern[bytes]
    by_keyword: dict[str, Anchor]


@dataclass(frozen=True)
class Grammar:
    language: str
    ts_language: ts.Language
    query: ts.Query
    anchors: Anchors | None = None

    def parser(self) -> ts.Parser:
        return ts.Parser(self.ts_language)


@cache
def grammar(language: str) -> Grammar:
    """Load (once per process) the grammar and compiled tags query of ``language``."""
    try:
        module_name, func, stem = _GRAMMARS[language]
    except KeyError as exc:
        raise CodeIndexError(f"no grammar for language {language!r}") from exc
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CodeIndexError(
            f"grammar package {module_name} is not installed", hint="run `uv sync` to install mendflow's deps"
        ) from exc
    ts_language = ts.Language(getattr(module, func)())
    source = (QUERY_DIR / f"{stem}.scm").read_text()
    try:
        query = ts.Query(ts_language, source)
    except (ts.QueryError, ValueError) as exc:  # a bad .scm is a packaging bug, not user input
        raise CodeIndexError(f"tags query {stem}.scm does not compile for {language}: {exc}") from exc
    return Grammar(language, ts_language, query, _anchors(language))


def _anchors(language: str) -> Anchors | None:
    by_keyword = _ANCHORS.get(language)
    if by_keyword is None:
        return None
    pattern = re.compile("|".join(re.escape(k) for k in by_keyword).encode())
    return Anchors(pattern, by_keyword)
