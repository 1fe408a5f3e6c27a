"""Symbol extraction per language via the per-language grammar wheels and the .scm tags queries."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from rag_indexer.chunker import _Def, chunk_file
from rag_indexer.config import IndexerConfig
from rag_indexer.languages import QUERY_DIR, language_for_path


@pytest.fixture
def config(tmp_path: Path) -> IndexerConfig:
    return IndexerConfig(index_dir=tmp_path)


def symbols(text: str, language: str, config: IndexerConfig) -> list[tuple[str, str, int, int]]:
    return [
        (c.symbol, c.kind, c.start_line, c.end_line)
        for c in chunk_file("0" * 40, text, language, config)
        if c.kind != "file"
    ]


def test_every_grammar_language_has_a_query_file() -> None:
    assert {p.stem for p in QUERY_DIR.glob("*.scm")} == {"python", "javascript", "typescript", "go", "rust", "java"}


def test_python_classes_methods_decorators_and_docstrings(config: IndexerConfig) -> None:
    src = (
        'class A:\n    """Doc A."""\n\n    @staticmethod\n    def m(x):\n        return x\n\n'
        "def f():\n    def inner():\n        pass\n"
    )
    chunks = {c.symbol: c for c in chunk_file("0" * 40, src, "python", config)}
    assert symbols(src, "python", config) == [
        ("A", "class", 1, 6), ("A.m", "method", 4, 6), ("f", "function", 8, 10), ("f.inner", "function", 9, 10),
    ]  # fmt: skip
    assert chunks["A"].docstring == "Doc A." and chunks["A.m"].signature == "def m(x)"
    # the container shows nested definitions collapsed; each has its own chunk
    assert chunks["A"].text.splitlines()[-1].strip() == "..."


def test_javascript_functions_classes_methods_and_arrows(config: IndexerConfig) -> None:
    src = "class Box {\n  open() {}\n}\nfunction make() {}\nconst shut = () => 1;\n"
    assert symbols(src, "javascript", config) == [
        ("Box", "class", 1, 3), ("Box.open", "method", 2, 2), ("make", "function", 4, 4),
        ("shut", "function", 5, 5),
    ]  # fmt: skip


def test_typescript_interfaces_types_and_exported_classes(config: IndexerConfig) -> None:
    src = (
        "export interface Shape { area(): number }\ntype Id = string;\n"
        "export class Sq implements Shape {\n  area(): number { return 1; }\n}\n"
    )
    assert symbols(src, "typescript", config) == [
        ("Shape", "interface", 1, 1), ("Shape.area", "method", 1, 1), ("Id", "type", 2, 2),
        ("Sq", "class", 3, 5), ("Sq.area", "method", 4, 4),
    ]  # fmt: skip


def test_tsx_components(config: IndexerConfig) -> None:
    src = "export function App() {\n  return <div>hi</div>;\n}\n"
    assert language_for_path("ui/App.tsx") == "tsx"
    assert symbols(src, "tsx", config) == [("App", "function", 1, 3)]


def test_go_methods_are_qualified_by_receiver(config: IndexerConfig) -> None:
    src = "package p\n\ntype S struct{}\n\n// M does it.\nfunc (s *S) M() {}\n\nfunc F() {}\n"
    chunks = {c.symbol: c for c in chunk_file("0" * 40, src, "go", config)}
    assert symbols(src, "go", config) == [("S", "class", 3, 3), ("S.M", "method", 6, 6), ("F", "function", 8, 8)]
    assert chunks["S.M"].docstring == "M does it."


def test_rust_impl_methods_traits_and_modules(config: IndexerConfig) -> None:
    src = (
        "struct P;\nimpl P {\n    /// New one.\n    fn new() -> P { P }\n}\n"
        "trait T { fn t(&self); }\nmod m { fn g() {} }\n"
    )
    chunks = {c.symbol: c for c in chunk_file("0" * 40, src, "rust", config)}
    assert symbols(src, "rust", config) == [
        ("P", "class", 1, 1), ("P.new", "method", 4, 4), ("T", "interface", 6, 6), ("T.t", "method", 6, 6),
        ("m", "module", 7, 7), ("m.g", "function", 7, 7),
    ]  # fmt: skip
    assert chunks["P.new"].docstring == "New one."


def test_java_classes_constructors_and_methods(config: IndexerConfig) -> None:
    src = "public class Acct {\n  public Acct() {}\n  /** Balance. */\n  long balance() { return 0; }\n}\n"
    chunks = {c.symbol: c for c in chunk_file("0" * 40, src, "java", config)}
    assert symbols(src, "java", config) == [
        ("Acct", "class", 1, 5), ("Acct.Acct", "method", 2, 2), ("Acct.balance", "method", 4, 4),
    ]  # fmt: skip
    assert chunks["Acct.balance"].docstring == "Balance."


def test_repeated_names_get_distinct_ids(config: IndexerConfig) -> None:
    src = "if X:\n    def f():\n        pass\nelse:\n    def f():\n        pass\n"
    ids = [c.id for c in chunk_file("0" * 40, src, "python", config)]
    assert len(ids) == len(set(ids)) == 3


def test_a_single_overlong_line_is_split_by_characters(tmp_path: Path) -> None:
    config = IndexerConfig(index_dir=tmp_path, max_chunk_chars=1000)
    src = "def f():\n    return '" + "x" * 2500 + "'\n"
    parts = [c for c in chunk_file("0" * 40, src, "python", config) if c.symbol == "f"]
    assert len(parts) == 4 and all(len(p.text) <= 1000 for p in parts)
    assert "".join(p.text.replace("\n", "") for p in parts).count("x") == 2500


def test_chunk_ids_depend_on_blob_and_symbol_only(config: IndexerConfig) -> None:
    a = chunk_file("a" * 40, "def f():\n    pass\n", "python", config)
    b = chunk_file("a" * 40, "def f():\n    pass\n", "python", config)
    c = chunk_file("b" * 40, "def f():\n    pass\n", "python", config)
    assert [x.id for x in a] == [x.id for x in b] and not {x.id for x in a} & {x.id for x in c}


TRICKY_PYTHON = '''"""A module that says def and class where they define nothing: classmethod, undefined."""
import os  # def f(): a comment, not a definition


@decorator("class X: in a string")
async def fetch(url, *, default=None):
    """Fetch. def inner(): is not code here."""
    subclass = lambda: "def"

    class Local(Base, metaclass=Meta):
        def __init__(self): self.defined = True

        @property
        def ünïcode(self): return f"{undefined} class {1}"

    return Local


if os.name == "nt":
    def windows_only(): pass
else:
    class Elsewhere: pass

try:
    def in_try(): ...
except ImportError:
    pass
x=1;def_ = 2; classes = [x for x in range(3)]
'''


def _found(found: Iterable[_Def]) -> list[tuple[int, int, str, str]]:
    return sorted((d.node.start_byte, d.span.end_byte, d.kind, d.name) for d in found)


def test_python_keyword_anchors_find_exactly_what_the_tags_query_finds() -> None:
    from rag_indexer import chunker
    from rag_indexer.languages import grammar

    g = grammar("python")
    assert g.anchors is not None
    source = TRICKY_PYTHON.encode()
    root = chunker._parser("python").parse(source).root_node
    assert not root.has_error
    anchored = _found(chunker._anchored_definitions(root, source, g.anchors))
    assert anchored == _found(chunker._queried_definitions(root, g.query))
    assert [name for _, _, _, name in anchored] == [
        "fetch", "Local", "__init__", "ünïcode", "windows_only", "Elsewhere", "in_try",
    ]  # fmt: skip


def test_no_anchor_keyword_can_hide_another_inside_a_match() -> None:
    from rag_indexer.languages import _ANCHORS

    for anchors in _ANCHORS.values():
        for a in anchors:
            for b in anchors:
                assert a == b or not b.startswith(a), (a, b)
                assert not any(b.startswith(a[i:]) for i in range(1, len(a))), (a, b)


def test_python_with_parse_errors_falls_back_to_the_tags_query(
    config: IndexerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_indexer import chunker

    def no_anchors(*_: object) -> None:
        raise AssertionError("a tree with errors must not be searched by keyword")

    monkeypatch.setattr(chunker, "_anchored_definitions", no_anchors)
    src = "def ok():\n    pass\n\ndef broken(:\n    pass\n\nclass After:\n    def m(self): pass\n"
    assert ("ok", "function", 1, 2) in symbols(src, "python", config)
