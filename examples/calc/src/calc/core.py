"""The calculator: arithmetic with validation, a memory register and a history of results."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_EXPONENT = 1000


class CalcError(ValueError):
    """An operation the calculator refuses, with a message a user can act on."""


def _check_number(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalcError(f"{name} must be a number, got {type(value).__name__}")
    if math.isnan(value):
        raise CalcError(f"{name} is not a number (NaN)")
    return value


@dataclass
class Calculator:
    precision: int = 10
    history: list[float] = field(default_factory=list)
    memory: float = 0.0

    def _record(self, result: float) -> float:
        result = round(result, self.precision)
        self.history.append(result)
        return result

    def add(self, a: float, b: float) -> float:
        return self._record(_check_number(a, "a") + _check_number(b, "b"))

    def subtract(self, a: float, b: float) -> float:
        return self._record(_check_number(a, "a") - _check_number(b, "b"))

    def multiply(self, a: float, b: float) -> float:
        return self._record(_check_number(a, "a") * _check_number(b, "b"))

    def divide(self, a: float, b: float) -> float:
        _check_number(a, "a")
        _check_number(b, "b")
        if b == 0:
            raise CalcError("cannot divide by zero")
        return self._record(a / b)

    def power(self, base: float, exponent: float) -> float:
        _check_number(base, "base")
        _check_number(exponent, "exponent")
        if abs(exponent) > MAX_EXPONENT:
            raise CalcError(f"exponent {exponent} is larger than {MAX_EXPONENT}")
        if base == 0 and exponent < 0:
            raise CalcError("zero cannot be raised to a negative power")
        if base < 0 and not float(exponent).is_integer():
            raise CalcError("a negative base needs a whole exponent")
        return self._record(base**exponent)

    def store(self) -> None:
        """Copy the last result into memory."""
        if not self.history:
            raise CalcError("nothing to store: no result yet")
        self.memory = self.history[-1]

    def recall(self) -> float:
        return self.memory

    def clear(self) -> None:
        self.history.clear()
        self.memory = 0.0
