"""Split one decoded file into chunks: one for the whole file, one per symbol (function, class, method, ...).

A container's chunk (a class, a function with closures) shows its nested definitions collapsed to their
header lines followed by ``...``: each nested definition has its own chunk, so nothing is lost and the
container stays small. A symbol still longer than ``max_symbol_lines`` (or ``max_chunk_chars``) is split into
numbered parts, each carrying its real line range; no text is dropped or truncated.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts

from rag_indexer.config import IndexerConfig
from rag_indexer.languages import Anchors, grammar, has_grammar
from rag_indexer.models import Chunk, chunk_id, content_hash

CLASS_LIKE = {"class", "interface", "type", "scope"}  # a function in a module stays a function
COMMENT_TYPES = {"comment", "line_comment", "block_comment"}
WRAPPER_TYPES = {"decorated_definition", "export_statement"}
SIGNATURE_MAX_CHARS = 500


@dataclass
class _Def:
    kind: str
    name: str
    node: ts.Node  # the definition node the query matched
    span: ts.Node  # the node whose range the symbol covers (includes decorators / export)
    receiver: str = ""
    parent: _Def | None = None
    children: list[_Def] = field(default_factory=list)
    qualname: str = ""
    key: str = ""  # qualname, made unique within the file (~2, ~3 for repeats)
    start_row: int = field(init=False)
    end_row: int = field(init=False)
    body: ts.Node | None = field(init=False)

    def __post_init__(self) -> None:
        # Read once: every access to a node's points or fields builds new Python objects.
        self.start_row = self.span.start_point[0]
        self.end_row = self.span.end_point[0]
        self.body = self.node.child_by_field_name("body")


def chunk_file(
    blob_sha: str, text: str, language: str, config: IndexerConfig, source: bytes | None = None
) -> list[Chunk]:
    """The file chunk plus, for languages with a grammar, the symbol chunks.

    Chunks depend on the blob alone (not its path): one blob at two paths is stored once. ``source`` may
    pass ``text`` already encoded as UTF-8 (the blob's own bytes, when it was UTF-8) to save re-encoding.
    """
    if source is None:
        source = text.encode("utf-8", "surrogatepass")
    lines = text.splitlines()
    file_chunk = Chunk(
        id=chunk_id(blob_sha, ""),
        blob_sha=blob_sha,
        kind="file",
        symbol="",
        start_line=1,
        end_line=max(1, len(lines)),
        language=language,
        text=text,
        content_hash=hashlib.sha256(source).hexdigest(),  # = content_hash(text), without encoding again
    )
    if not has_grammar(language):
        return [file_chunk]
    defs = _definitions(source, language)
    chunks = [file_chunk]
    for d in defs:
        if d.kind != "scope":
            chunks.extend(_symbol_chunks(d, blob_sha, language, source, lines, config))
    return chunks


_PARSERS: dict[tuple[int, str], ts.Parser] = {}


def _parser(language: str) -> ts.Parser:
    """One parser per thread and language: creating one per file costs more than small files take to parse."""
    key = (threading.get_ident(), language)
    if key not in _PARSERS:
        _PARSERS[key] = grammar(language).parser()
    return _PARSERS[key]


def _definitions(source: bytes, language: str) -> list[_Def]:
    g = grammar(language)
    root = _parser(language).parse(source).root_node
    if g.anchors is not None and not root.has_error:
        found = _anchored_definitions(root, source, g.anchors)
    else:
        found = _queried_definitions(root, g.query)
    seen: dict[tuple[int, int], _Def] = {}
    for d in found:
        seen.setdefault((d.node.start_byte, d.node.end_byte), d)
    defs = sorted(seen.values(), key=lambda d: (d.span.start_byte, -d.span.end_byte))
    _nest(defs)
    return defs


def _queried_definitions(root: ts.Node, query: ts.Query) -> Iterator[_Def]:
    for _, captures in ts.QueryCursor(query).matches(root):
        d = _def_from_captures(captures)
        if d is not None:
            yield d


def _anchored_definitions(root: ts.Node, source: bytes, anchors: Anchors) -> Iterator[_Def]:
    """The definitions the tags query matches, found from their keywords instead of a query cursor.

    Why: the query cursor visits every node of the tree (SymPy: 7.6 M nodes, a third of the parse's CPU);
    this looks up only the keywords' occurrences (49k), each a descent from the root in C: 5x cheaper.
    Why it finds them all: in a tree without errors (no MISSING keyword) every definition node has its
    keyword as a leaf child whose bytes are the keyword, so some match of the pattern is that leaf. Matches
    in strings, comments or longer words resolve to other nodes and are dropped.
    """
    for match in anchors.pattern.finditer(source):
        leaf = root.descendant_for_byte_range(match.start(), match.end())
        if leaf is None or leaf.is_named:
            continue
        anchor = anchors.by_keyword.get(leaf.type)
        node = leaf.parent
        if anchor is None or node is None or node.type != anchor.node_type:
            continue
        name = node.child_by_field_name("name")
        if name is not None and name.type == anchor.name_type:
            yield _Def(anchor.kind, _text(name), node, _span(node))


def _def_from_captures(captures: dict[str, list[ts.Node]]) -> _Def | None:
    names = captures.get("name")
    if not names:
        return None
    for capture, nodes in captures.items():
        if capture == "scope" or capture.startswith("definition."):
            node = nodes[0]
            kind = "scope" if capture == "scope" else capture.split(".", 1)[1]
            receiver = captures.get("receiver", [])
            return _Def(kind, _text(names[0]), node, _span(node), _text(receiver[0]) if receiver else "")
    return None


def _span(node: ts.Node) -> ts.Node:
    """The node a definition's symbol covers: its decorators or export statement included."""
    parent = node.parent
    return parent if parent is not None and parent.type in WRAPPER_TYPES else node


def _nest(defs: list[_Def]) -> None:
    """Parent = innermost enclosing definition; qualified names follow ('Outer.Inner.method')."""
    stack: list[_Def] = []
    counts: dict[str, int] = {}
    for d in defs:
        while stack and not _contains(stack[-1], d):
            stack.pop()
        d.parent = stack[-1] if stack else None
        if d.parent is not None:
            d.parent.children.append(d)
            if d.kind == "function" and d.parent.kind in CLASS_LIKE:
                d.kind = "method"
        prefix = d.receiver or (d.parent.qualname if d.parent else "")
        d.qualname = f"{prefix}.{d.name}" if prefix else d.name
        counts[d.qualname] = counts.get(d.qualname, 0) + 1
        d.key = d.qualname if counts[d.qualname] == 1 else f"{d.qualname}~{counts[d.qualname]}"
        stack.append(d)


def _contains(outer: _Def, inner: _Def) -> bool:
    return outer.span.start_byte <= inner.span.start_byte and inner.span.end_byte <= outer.span.end_byte


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _header_end_row(d: _Def) -> int:
    """Last row of a definition's header (decorators, signature): the row before a Python block, or the
    row of an opening brace."""
    body = d.body
    if body is None or body.start_point[0] <= d.node.start_point[0]:
        return d.node.start_point[0]
    return body.start_point[0] - 1 if _is_python(d) else body.start_point[0]


def _is_python(d: _Def) -> bool:
    return d.node.type in ("function_definition", "class_definition")


def signature_of(d: _Def, source: bytes) -> str:
    body = d.body
    end = body.start_byte if body is not None else d.node.end_byte
    raw = source[d.node.start_byte : end].decode("utf-8", "replace")
    if body is None:
        raw = raw.split("\n", 1)[0]
    sig = " ".join(raw.split()).rstrip(" {:")
    return sig[:SIGNATURE_MAX_CHARS]


def docstring_of(d: _Def) -> str:
    if _is_python(d):
        first = d.body.named_child(0) if d.body is not None else None
        if first is not None and first.type == "expression_statement":
            string = first.named_child(0)
            if string is not None and string.type == "string":
                parts = [_text(c) for c in string.named_children if c.type == "string_content"]
                return inspect.cleandoc("".join(parts))
        return ""
    comments: list[str] = []
    node = d.span.prev_named_sibling
    next_row = d.span.start_point[0]
    while node is not None and node.type in COMMENT_TYPES and node.end_point[0] >= next_row - 1:
        comments.append(_text(node))
        next_row = node.start_point[0]
        node = node.prev_named_sibling
    return _clean_comment("\n".join(reversed(comments)))


def _clean_comment(raw: str) -> str:
    out = []
    for line in raw.splitlines():
        s = line.strip()
        for marker in ("/**", "/*", "*/", "///", "//!", "//", "*"):
            if s.startswith(marker):
                s = s[len(marker) :].strip()
        if s.endswith("*/"):
            s = s[:-2].rstrip()
        out.append(s)
    return "\n".join(out).strip()


def _body_blocks(d: _Def, lines: list[str]) -> list[tuple[int, list[str]]]:
    """(first 1-based line number, lines) runs of the symbol, nested definitions collapsed to header + '...'.

    Runs are list slices, so the common case costs a few C-level copies rather than per-line work.
    """
    blocks: list[tuple[int, list[str]]] = []
    row, last = d.start_row, min(d.end_row, len(lines) - 1)
    for child in d.children:
        if child.start_row > row:
            blocks.append((row + 1, lines[row : min(child.start_row, last + 1)]))
        header_end = min(_header_end_row(child), child.end_row)
        blocks.append((child.start_row + 1, lines[child.start_row : header_end + 1]))
        if child.end_row > header_end and child.start_row < len(lines):
            first = lines[child.start_row]
            blocks.append((header_end + 2, [f"{first[: len(first) - len(first.lstrip())]}    ..."]))
        row = max(row, child.end_row + 1)
    if row <= last:
        blocks.append((row + 1, lines[row : last + 1]))
    return blocks


def _numbered(blocks: list[tuple[int, list[str]]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for first, block in blocks:
        out.extend(zip(range(first, first + len(block)), block, strict=True))
    return out


def _split(numbered: list[tuple[int, str]], max_lines: int, max_chars: int) -> list[list[tuple[int, str]]]:
    """Parts of at most max_lines lines and max_chars characters; an overlong line is cut into pieces."""
    parts: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    size = 0
    for lineno, text in numbered:
        pieces = [text[i : i + max_chars] for i in range(0, len(text), max_chars)] or [""]
        for piece in pieces:
            if current and (len(current) >= max_lines or size + len(piece) + 1 > max_chars):
                parts.append(current)
                current, size = [], 0
            current.append((lineno, piece))
            size += len(piece) + 1
    if current:
        parts.append(current)
    return parts


def _symbol_chunks(
    d: _Def, blob_sha: str, language: str, source: bytes, lines: list[str], config: IndexerConfig
) -> list[Chunk]:
    blocks = _body_blocks(d, lines)
    flat = [line for _, block in blocks for line in block]
    whole = "\n".join(flat)
    common: dict[str, Any] = {
        "blob_sha": blob_sha,
        "kind": d.kind,
        "symbol": d.qualname,
        "symbol_key": d.key,
        "name": d.name,
        "signature": signature_of(d, source),
        "docstring": docstring_of(d),
        "language": language,
        "content_hash": content_hash(whole),
    }
    if len(flat) <= config.max_symbol_lines and len(whole) <= config.max_chunk_chars:
        parts = None  # the common case: one chunk, no per-line bookkeeping
    else:
        parts = _split(_numbered(blocks), config.max_symbol_lines, config.max_chunk_chars)
    if parts is None or len(parts) == 1:
        return [
            Chunk(
                id=chunk_id(blob_sha, d.key),
                start_line=d.start_row + 1,
                end_line=d.end_row + 1,
                text=whole,
                **common,
            )
        ]
    return [
        Chunk(
            id=chunk_id(blob_sha, f"{d.key}#{i}"),
            # The first and last parts stand for the symbol's edges even when collapsed lines sit there.
            start_line=d.start_row + 1 if i == 1 else part[0][0],
            end_line=d.end_row + 1 if i == len(parts) else part[-1][0],
            part=i,
            parts=len(parts),
            text="\n".join(t for _, t in part),
            **common,
        )
        for i, part in enumerate(parts, start=1)
    ]
