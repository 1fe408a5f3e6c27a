"""Parse user-typed numbers: '1_000', '1e3', '0x1f', '50%', '1/4'."""

from __future__ import annotations

from fractions import Fraction

from calc.core import CalcError


def parse_number(text: str) -> float:
    cleaned = text.strip().replace("_", "")
    if not cleaned:
        raise CalcError("empty number")
    if cleaned.endswith("%"):
        return parse_number(cleaned[:-1]) / 100
    if cleaned.lower().startswith(("0x", "-0x")):
        try:
            return float(int(cleaned, 16))
        except ValueError as exc:
            raise CalcError(f"bad hexadecimal number {text!r}") from exc
    if "/" in cleaned:
        try:
            return float(Fraction(cleaned))
        except (ValueError, ZeroDivisionError) as exc:
            raise CalcError(f"bad fraction {text!r}") from exc
    try:
        return float(cleaned)
    except ValueError as exc:
        raise CalcError(f"not a number: {text!r}") from exc


def format_number(value: float, precision: int = 6) -> str:
    if value.is_integer():
        return str(int(value))
    return f"{value:.{precision}f}".rstrip("0").rstrip(".")
