"""grep_like's building blocks: literals a regex requires, trigram signatures, the symbol-name list."""

from __future__ import annotations

import re

import pytest

from rag_indexer.grep import NameList, compile_query
from rag_indexer.grep_regex import literal_prefix, parse, required_literals, stays_in_line
from rag_indexer.store import grams


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (r"def _eval_\w+\(self\)", ("def _eval_", "(self)")),
        (r"^class (Foo|Bar)Base\b", ("class ", "Base")),
        (r"(abc)+xyz", ("abc", "xyz")),
        (r"colou?r", ("colo", "r")),
        (r"a.b[cd]e*", ("a", "b")),
        (r"(?i:zero)Division", ("Division",)),
        (r"\d+", ()),
    ],
)
def test_required_literals_are_what_every_match_contains(pattern: str, literals: tuple[str, ...]) -> None:
    assert required_literals(parse(pattern)) == literals


def test_compile_query_carries_inline_ignore_case() -> None:
    query = compile_query("(?i)zerodivision", regex=True, ignore_case=False)
    assert query.ignore_case and query.literals == ("zerodivision",)
    assert compile_query("a.b", regex=False, ignore_case=False).literals == ("a.b",)


def _may_contain(text: str, literal: str, ignore_case: bool) -> bool:
    k, sig = grams.signature(text.encode("utf-8", "surrogatepass"))
    hashes = grams.literal_hashes([literal], ignore_case)
    return bool(grams.SignatureSet([("blob", k, sig)]).candidates(hashes)) if len(hashes) else True


@pytest.mark.parametrize(
    ("text", "literal", "ignore_case"),
    [
        ("raise ZeroDivisionError('b is zero')", "ZeroDivisionError", False),
        ("raise ZeroDivisionError('b is zero')", "zerodivisionerror", True),
        ("caf\u00e9 = 'na\u00efve'", "caf\u00e9 =", False),
        ("CAF\u00c9_TOTAL = 1", "caf\u00e9_total", True),  # the non-ASCII letter only splits the literal
        ("\u212aelvin scale", "kelvin", True),  # KELVIN SIGN matches 'k' under re.IGNORECASE
        ("ma\u017fs", "mass", True),  # LONG S matches 's'
    ],
)
def test_a_file_containing_the_literal_is_never_ruled_out(text: str, literal: str, ignore_case: bool) -> None:
    flags = re.IGNORECASE if ignore_case else 0
    assert re.search(re.escape(literal), text, flags)
    assert _may_contain(text, literal, ignore_case)


def test_files_without_the_literal_are_ruled_out() -> None:
    text = "def add(a, b):\n    return a + b\n" * 50
    assert not _may_contain(text, "ZeroDivisionError", False)
    assert not _may_contain(text, "zerodivisionerror", True)


def test_case_folds_cover_every_non_ascii_character_ignore_case_maps_to_ascii() -> None:
    everything = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000)
    found = set(re.findall("[a-z]", everything, re.IGNORECASE))
    assert {ch.encode() for ch in found} == {seq for seq, _ in grams.CASE_FOLDS}
    for seq, letter in grams.CASE_FOLDS:
        assert re.fullmatch(letter.decode(), seq.decode(), re.IGNORECASE)


def test_signature_sizes_follow_the_file_within_bounds() -> None:
    assert grams.signature(b"")[0] == grams.MIN_BITS_LOG2
    assert grams.signature(b"x" * 5000)[0] == (5000).bit_length()
    assert grams.signature(b"x" * 2_000_000)[0] == grams.MAX_BITS_LOG2


def test_name_list_matches_like_a_search_over_each_name() -> None:
    names = ["Calculator", "Calculator.divide", "divide_all", "parse_amount", "Divider"]
    listing = NameList(names)
    for pattern, regex, icase in [("divide", False, False), (r"^divide", True, False), ("DIVIDE", False, True)]:
        query = compile_query(pattern, regex, icase)
        assert listing.matching(query) == [n for n in names if query.matches(n)]


@pytest.mark.parametrize("literal", ["ZeroDivisionError", "x", "naïve café", "a\x00b"])
def test_a_literal_hashes_in_python_as_a_file_does_in_numpy(literal: str) -> None:
    data = literal.encode("utf-8", "surrogatepass")
    assert grams.literal_hashes([literal], ignore_case=False) == set(grams._hashes(data).tolist())


@pytest.mark.parametrize(
    ("pattern", "local"),
    [
        (r"\w+Error\(", True),
        (r"^class \w+:$", True),
        (r"a.b", True),
        (r"a\sb", False),
        (r"a[^x]b", False),
        (r"(?s)a.b", False),
        (r"a\nb", False),
        (r"x\Z", False),
        (r"(?<=def )x", False),
    ],
)
def test_a_regex_stays_in_its_line_only_when_no_part_can_leave_it(pattern: str, local: bool) -> None:
    flags = re.compile(pattern, re.MULTILINE).flags  # with the pattern's own inline flags, as compile_regex has
    assert stays_in_line(parse(pattern, re.MULTILINE), flags) is local


@pytest.mark.parametrize(
    ("pattern", "twin"),
    [
        (r"def \w+", True),
        (r"(?<=def )\w+", False),
        (r"\Aimport", False),
        ("λ+", False),
        (r"\N{GREEK SMALL LETTER PI}", False),
    ],
)
def test_a_regex_has_a_bytes_twin_only_when_its_bytes_match_alike(pattern: str, twin: bool) -> None:
    assert (compile_query(pattern, regex=True, ignore_case=False).byte_regex is not None) is twin


@pytest.mark.parametrize(("pattern", "prefix"), [(r"^class \w+", "class "), (r"\bdef x", "def x"), (r"def \w+", "")])
def test_a_regex_has_a_literal_prefix_only_past_leading_anchors(pattern: str, prefix: str) -> None:
    assert literal_prefix(parse(pattern)) == prefix


@pytest.mark.parametrize("text", ["3\u212a", "\u017fign", "\u0130stanbul \u0131", "ÄÖ kelvin SIGN", "plain K s i"])
@pytest.mark.parametrize("literal", ["k", "sign", "istanbul", "i", "s"])
def test_an_ignore_case_literal_finds_what_re_ignorecase_finds(text: str, literal: str) -> None:
    expected = [(n + 1, line) for n, line in enumerate(text.split("\n")) if re.search(re.escape(literal), line, re.I)]
    assert list(compile_query(literal, regex=False, ignore_case=True).lines(text)) == expected
