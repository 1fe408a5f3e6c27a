import pytest

from calc.numbers import format_number, parse_number


@pytest.mark.fast
def test_parse_plain_number() -> None:
    assert parse_number(" 1_000 ") == 1000


@pytest.mark.fast
def test_format_whole_number() -> None:
    assert format_number(3.0) == "3"
