import pytest

from calc import evaluate, tokenize


@pytest.mark.fast
def test_tokenize_numbers_and_operators() -> None:
    assert [t.text for t in tokenize("1 + 2.5")] == ["1", "+", "2.5"]


@pytest.mark.fast
def test_evaluate_respects_precedence() -> None:
    assert evaluate("2 + 3 * 4") == 14
