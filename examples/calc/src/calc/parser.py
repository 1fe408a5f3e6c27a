"""Tokenize and evaluate infix expressions with + - * / ^ and parentheses (shunting-yard)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from calc.core import CalcError, Calculator

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)|(.))")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}
_RIGHT_ASSOCIATIVE = {"^"}


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "op", "lparen", "rparen"
    text: str
    position: int


def tokenize(expression: str) -> list[Token]:
    if not expression.strip():
        raise CalcError("empty expression")
    tokens: list[Token] = []
    for match in _TOKEN.finditer(expression):
        number, symbol = match.groups()
        if number is not None:
            tokens.append(Token("number", number, match.start(1)))
        elif symbol in _PRECEDENCE:
            tokens.append(Token("op", symbol, match.start(2)))
        elif symbol == "(":
            tokens.append(Token("lparen", symbol, match.start(2)))
        elif symbol == ")":
            tokens.append(Token("rparen", symbol, match.start(2)))
        elif symbol is not None and not symbol.isspace():
            raise CalcError(f"unexpected character {symbol!r} at position {match.start(2)}")
    return tokens


def _negate_unary_minus(tokens: list[Token]) -> list[Token]:
    """Turn a leading or post-operator '-' followed by a number into a negative number."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        unary = tok.text == "-" and (not out or out[-1].kind in ("op", "lparen"))
        if unary and i + 1 < len(tokens) and tokens[i + 1].kind == "number":
            out.append(Token("number", "-" + tokens[i + 1].text, tok.position))
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def to_postfix(tokens: list[Token]) -> list[Token]:
    output: list[Token] = []
    stack: list[Token] = []
    for tok in _negate_unary_minus(tokens):
        if tok.kind == "number":
            output.append(tok)
        elif tok.kind == "op":
            while stack and stack[-1].kind == "op" and _pops_before(stack[-1].text, tok.text):
                output.append(stack.pop())
            stack.append(tok)
        elif tok.kind == "lparen":
            stack.append(tok)
        else:
            while stack and stack[-1].kind != "lparen":
                output.append(stack.pop())
            if not stack:
                raise CalcError(f"unbalanced ')' at position {tok.position}")
            stack.pop()
    while stack:
        tok = stack.pop()
        if tok.kind == "lparen":
            raise CalcError(f"unbalanced '(' at position {tok.position}")
        output.append(tok)
    return output


def _pops_before(top: str, incoming: str) -> bool:
    if incoming in _RIGHT_ASSOCIATIVE:
        return _PRECEDENCE[top] > _PRECEDENCE[incoming]
    return _PRECEDENCE[top] >= _PRECEDENCE[incoming]


def evaluate(expression: str, calculator: Calculator | None = None) -> float:
    calc = calculator or Calculator()
    operations = {
        "+": calc.add,
        "-": calc.subtract,
        "*": calc.multiply,
        "/": calc.divide,
        "^": calc.power,
    }
    stack: list[float] = []
    for tok in to_postfix(tokenize(expression)):
        if tok.kind == "number":
            stack.append(float(tok.text))
            continue
        if len(stack) < 2:
            raise CalcError(f"operator {tok.text!r} at {tok.position} is missing an operand")
        right, left = stack.pop(), stack.pop()
        stack.append(operations[tok.text](left, right))
    if len(stack) != 1:
        raise CalcError("malformed expression: too many numbers")
    return stack[0]
