import pytest

from calc import Calculator


@pytest.mark.fast
def test_add_records_history() -> None:
    calc = Calculator()
    assert calc.add(2, 3) == 5
    assert calc.history == [5]


@pytest.mark.fast
def test_multiply_and_subtract() -> None:
    calc = Calculator()
    assert calc.multiply(4, 2.5) == 10
    assert calc.subtract(10, 4) == 6


@pytest.mark.fast
def test_divide() -> None:
    assert Calculator().divide(9, 3) == 3
