"""Reading a commit's tree: decoding policy, binary test, globs and .gitattributes rules."""

from __future__ import annotations

import codecs

import pytest

from rag_indexer.reader import AttributeRules, _parse_gitattributes, decode_blob, glob_match, is_binary


def test_utf8_with_bom_loses_only_the_bom() -> None:
    assert decode_blob(codecs.BOM_UTF8 + "x = 'é'\n".encode()).text == "x = 'é'\n"


def test_utf16_with_bom_is_decoded_as_utf16() -> None:
    decoded = decode_blob("def f():\n    pass\n".encode("utf-16"))
    assert (decoded.text, decoded.encoding) == ("def f():\n    pass\n", "utf-16")


def test_invalid_utf8_falls_back_to_latin1_byte_for_byte() -> None:
    raw = b"name = 'caf\xe9'\n\xff\xfe?\n"
    decoded = decode_blob(raw)
    assert decoded.encoding == "latin-1"
    assert decoded.text.encode("latin-1") == raw  # lossless: every byte is one character


def test_nul_byte_means_binary_but_utf16_text_does_not() -> None:
    assert is_binary(b"GIF89a\x00\x01")
    assert not is_binary("text".encode("utf-16"))
    assert not is_binary(b"plain text\n")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/vendor/**", "vendor/a.py", True),
        ("**/vendor/**", "src/vendor/x/a.py", True),
        ("**/vendor/**", "src/vendored.py", False),
        ("*.min.js", "static/app.min.js", True),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/sub/a.md", False),
        ("/build", "build/out.txt", True),
        ("build", "src/build/out.txt", True),
    ],
)
def test_glob_match_follows_gitignore_rules(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_deeper_gitattributes_override_shallower_ones() -> None:
    rules = AttributeRules(
        _parse_gitattributes("", "*.js linguist-vendored\n") + _parse_gitattributes("web", "*.js -linguist-vendored\n")
    )
    assert rules.lookup("lib/a.js") == {"linguist-vendored": True}
    assert rules.lookup("web/a.js") == {"linguist-vendored": False}
