"""calc: evaluate arithmetic expressions such as ``2 * (3 + 4) / 7``."""

from calc.core import CalcError, Calculator
from calc.parser import evaluate, tokenize

__all__ = ["CalcError", "Calculator", "evaluate", "tokenize"]
