"""Rounding, stated once: values are rounded from their *exact* value, half away from zero, as
taught in school: 1/8 = 0.125 shows as 0.13 and −0.125 as −0.13. Rational values are rounded
with integer arithmetic; irrational ones from their value worked to 20 places (40 significant
digits, or more for a value beyond 10^20), which cannot sit exactly on a tie.

A cell's rounding is asked for once per table and again in every sum it is a term of, so
``Cell.rounded`` remembers it on the cell itself: the memory belongs to the derivation that owns
the cell and goes with it (a long-lived process, such as a notebook, does not grow).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.core.engine import Cell

DECIMAL_DIGITS = 600  # decimal working precision: far more than any value here needs (10^250)
_PLACES_KEPT = 20  # decimal places an irrational value is worked to before it is rounded


def round_decimal(d: Decimal, places: int) -> Decimal:
    """Round a decimal to ``places`` places, ties away from zero."""
    unit = Decimal(1).scaleb(-places)
    if d.adjusted() < -places - 1:  # far below half a unit: rounds to zero, whatever its size
        return Decimal(0).quantize(unit)
    with localcontext(prec=DECIMAL_DIGITS):
        return d.quantize(unit, rounding=ROUND_HALF_UP)


def round_ratio(p: int, q: int, ties: str = "away") -> int:
    """The integer nearest p/q (q > 0). A tie goes away from zero (``away``: the rule every
    number shown follows), or, for the ends of a range, up to +∞ (``up``) or down to −∞
    (``down``)."""
    if ties == "up":
        return (2 * p + q) // (2 * q)
    if ties == "down":
        return -((q - 2 * p) // (2 * q))
    whole = (2 * abs(p) + q) // (2 * q)
    return whole if p >= 0 else -whole


def scaled_half_up(x, places: int) -> int:  # type: ignore[no-untyped-def]
    """A rational x (sympy's, gmpy's, ``Fraction``: anything with ``numerator`` and
    ``denominator``) times 10^places, rounded half away from zero: 0.125 at 2 places is 13."""
    return round_ratio(int(x.numerator) * 10**places, int(x.denominator))


def mp_decimal(x) -> Decimal:  # type: ignore[no-untyped-def]
    """An mpmath value as a Decimal, digit for digit: 40 significant digits, and for a value
    beyond 10^20 every digit down to 20 places (it was worked that far: ``Cell.near``).

    Scientific notation keeps the text short however tiny the value (e^(−1000) is a few dozen
    characters, not a thousand zeros).
    """
    from tutor.core.engine import MP, mag10

    if x != 0 and MP.mag(x) < -100_000:  # e.g. e^(−10³⁰): zero at any precision we show
        return Decimal(0)
    digits = max(40, mag10(x) + _PLACES_KEPT)
    return Decimal(MP.nstr(x, digits, min_fixed=-20, max_fixed=digits + 1))


def half_up(cell: Cell, places: int) -> Decimal:
    """The cell's exact value rounded to ``places`` decimals, ties away from zero."""
    if cell.q is None:  # worked as far as rounding needs, however large (10^60/√2: 62 digits)
        return round_decimal(mp_decimal(cell.near(_PLACES_KEPT)), places)
    scaled = scaled_half_up(cell.q, places)
    with localcontext(prec=DECIMAL_DIGITS):  # the sign too: negation rounds to the context's digits
        result = Decimal(scaled).scaleb(-places)
    return result
