"""Grep packs: a pack finds the lines a search of each file's own text finds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_indexer.grep import compile_query
from rag_indexer.store import grams, grep_pack
from rag_indexer.store.embedded_read import file_signature

LONG = "".join(f"line {n}: value = compute({n})\n" for n in range(1, 200)) + "raise ValueError('late')\n"
FILES = {
    "a/ascii.py": "def divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError('b')\n    return a / b\n",
    "a/crlf.py": "class Foo:\r\n    zerodivisionerror = 1\r\n",
    "a/empty.py": "",
    "a/long.py": LONG,
    "a/no_final_newline.py": "x = 1\ndef tail(): raise ZeroDivisionError",
    "b/first_line.py": "def _eval_is_zero(self):\n    return self.x == 0\n",
    "b/kelvin.py": "temperature = 3\u212a  # Kelvin\nZERODIVISIONERROR = 'upper'\n",
    "b/long_s.py": "name = '\u017ftrange'\nprint('\u0130stanbul', '\u0131')\n",
    "b/separators.py": "a\x1cb = 1\nvalue = 'x'\n",
    "b/unicode.py": "π = 3.14  # λ calculus\ndef _eval_is_λ(self): raise ZeroDivisionError\n",
}
PATTERNS = [
    ("ZeroDivisionError", False, False),
    ("zerodivisionerror", False, True),
    ("STRANGE", False, True),
    ("kelvin", False, True),
    ("istanbul", False, True),
    ("λ", False, False),
    ("Λ", False, True),
    (r"^def \w+", True, False),  # an anchored literal: the prefix path
    (r"def _eval_\w+\(self\)", True, False),  # a literal first: re's own scan
    (r"\w+Error\b", True, False),  # a line-local regex with a literal: the anchor path
    (r"(?<=def )_eval_\w+", True, False),  # lookbehind: decoded text only
    (r"a\sb", True, False),  # \s: str's matches \x1c, bytes' does not
    (r"value = compute\(1\d\d\)", True, False),  # many matches past the line marks
    (r"^\s*$", True, False),
    (r"\)\Z", True, False),
    (r"late'\)$", True, False),
    (r"(?i)class foo", True, False),
]


def reference_lines(text: str, pattern: str, regex: bool, ignore_case: bool) -> list[tuple[int, str]]:
    """What rg -n prints for one file, from re over the file's own text (independent of GrepQuery)."""
    compiled = re.compile(pattern if regex else re.escape(pattern), (re.I if ignore_case else 0) | re.M)
    found: list[tuple[int, str]] = []
    stop = -1
    for m in compiled.finditer(text):
        if m.start() <= stop:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        stop = text.find("\n", m.start())
        stop = len(text) if stop == -1 else stop
        found.append((text.count("\n", 0, m.start()) + 1, text[start:stop]))
    return found


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grep_pack.Pack]:
    path = str(tmp_path_factory.mktemp("packs") / "tree.pack")
    grep_pack.write_pack(path, [(p, t, *file_signature(t)) for p, t in sorted(FILES.items())])
    opened = grep_pack.Pack.open(path)
    assert opened is not None
    yield opened
    opened.close()


@pytest.mark.parametrize(("pattern", "regex", "ignore_case"), PATTERNS)
def test_a_pack_finds_the_lines_each_files_text_holds(
    pack: grep_pack.Pack, pattern: str, regex: bool, ignore_case: bool
) -> None:
    expected = [
        (path, n, line)
        for path, text in sorted(FILES.items())
        for n, line in reference_lines(text, pattern, regex, ignore_case)
    ]
    assert list(pack.lines(compile_query(pattern, regex, ignore_case))) == expected


def test_a_pack_limits_lines_to_a_path_prefix(pack: grep_pack.Pack) -> None:
    found = pack.lines(compile_query("ZeroDivisionError", regex=False, ignore_case=False), "b/")
    assert [path for path, _, _ in found] == ["b/unicode.py"]


def test_a_packs_candidates_are_the_files_the_signatures_admit(pack: grep_pack.Pack) -> None:
    signatures = grams.SignatureSet([(p, *file_signature(t)) for p, t in FILES.items()])
    for literal in ("ZeroDivisionError", "_eval_", "compute", "absent words"):
        hashes = grams.literal_hashes([literal], ignore_case=False)
        assert {pack.path(i) for i in pack.candidates(hashes)} == signatures.candidates(hashes)


def test_a_pack_of_no_files_finds_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "empty.pack")
    grep_pack.write_pack(path, [])
    opened = grep_pack.Pack.open(path)
    assert opened is not None and list(opened.lines(compile_query("x", regex=False, ignore_case=False))) == []
    opened.close()


def test_a_file_that_is_no_pack_is_not_opened(tmp_path: Path) -> None:
    (tmp_path / "other.pack").write_bytes(b"something else entirely")
    (tmp_path / "empty.pack").write_bytes(b"")
    assert grep_pack.Pack.open(str(tmp_path / "other.pack")) is None
    assert grep_pack.Pack.open(str(tmp_path / "empty.pack")) is None
    assert grep_pack.Pack.open(str(tmp_path / "missing.pack")) is None


def test_a_pack_cut_short_is_not_opened(pack: grep_pack.Pack, tmp_path: Path) -> None:
    (tmp_path / "short.pack").write_bytes(pack.data[:100])
    assert grep_pack.Pack.open(str(tmp_path / "short.pack")) is None
