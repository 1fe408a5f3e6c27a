"""A command line's words read as its options: each with the value it takes, joined (``--timeout=60000``) or the
next word (``--timeout 60000``), and its positionals. What a runner's options mean is its own module's to say."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    name: str  # the option's name ('' for a positional)
    value: str  # its value ('' for a flag), or the positional itself
    written: tuple[str, ...]  # the words as the command line had them

    @property
    def positional(self) -> bool:
        return not self.name


def read(words: list[str], valued: set[str]) -> Iterator[Word]:
    """``words`` in order, an option of ``valued`` with its value (the next word when it is not joined)."""
    rest = iter(words)
    for word in rest:
        if not word.startswith("-"):
            yield Word("", word, (word,))
            continue
        name, joined, value = word.partition("=")
        if name in valued and not joined:
            value = next(rest, "")
            yield Word(name, value, (word, value))
        else:
            yield Word(name, value, (word,))


def without(words: list[str], left: set[str], valued: set[str]) -> list[str]:
    """``words`` without the options ``left``, each with its value where it takes one (``valued``)."""
    return [w for word in read(words, valued) if word.name not in left for w in word.written]
