"""The one place where numbers become text: rounding, exact forms and term-by-term working.

Rounding rule (stated once, used everywhere): values are rounded from their *exact* value,
half away from zero, as taught in school: 1/8 = 0.125 shows as 0.13 and −0.125 as −0.13.
Rational values are rounded with integer arithmetic; irrational ones from a 40-digit
approximation, which cannot sit exactly on a tie.
"""

from __future__ import annotations

import functools
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    import sympy

    from tutor.engine import Cell, Step

MINUS = "−"
NEG_INF_TEXT = f"{MINUS}∞"


_DIGITS = 400  # decimal working precision: far more than any value here needs


def round_decimal(d: Decimal, places: int) -> Decimal:
    """Round a decimal to ``places`` places, ties away from zero."""
    unit = Decimal(1).scaleb(-places)
    if d.adjusted() < -places - 1:  # far below half a unit: rounds to zero, whatever its size
        return Decimal(0).quantize(unit)
    with localcontext(prec=_DIGITS):
        return d.quantize(unit, rounding=ROUND_HALF_UP)


def mp_decimal(x) -> Decimal:  # type: ignore[no-untyped-def]
    """A 40-digit mpmath value as a Decimal, digit for digit.

    Scientific notation keeps the text short however tiny or huge the value (e^(−1000) is
    a few dozen characters, not a thousand zeros).
    """
    from tutor.engine import MP

    if x != 0 and MP.mag(x) < -100_000:  # e.g. e^(−10³⁰): zero at any precision we show
        return Decimal(0)
    return Decimal(MP.nstr(x, 40, min_fixed=-20, max_fixed=60))


# A cell is formatted once per table and again in every sum it is a term of (a value cell in
# N of Z's sums, a weight in d_v), so the rounding is remembered, keyed by the cell's identity
# (cells are immutable; the cache keeps the cells it holds alive, so an id is never reused).
_MEMO = 1 << 17


@functools.lru_cache(maxsize=_MEMO)
def round_half_up(cell: Cell, places: int) -> Decimal:
    """The cell's exact value rounded to ``places`` decimals, ties away from zero."""
    if cell.q is None:
        return round_decimal(mp_decimal(cell.approx), places)
    p, q = cell.q.numerator, cell.q.denominator
    scaled, rem = divmod(abs(p) * 10**places, q)
    if 2 * rem >= q:
        scaled += 1
    with localcontext(prec=_DIGITS):
        result = Decimal(scaled).scaleb(-places)
    return -result if p < 0 else result


def decimal_places(q: int) -> int | None:
    """Places of 1/q written as a decimal, or None when it never ends (q has a factor ≠ 2, 5)."""
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    return max(twos, fives) if q == 1 else None


def sqrt_rounded(n: int, places: int) -> Decimal:
    """√n rounded to ``places``, ties away from zero (a 40-digit root cannot sit on a tie)."""
    from tutor.engine import MP

    return round_decimal(mp_decimal(MP.sqrt(n)), places)


def is_integer(cell: Cell) -> bool:
    return cell.q is not None and cell.q.denominator == 1


def decimal_text(d: Decimal) -> str:
    """A rounded decimal as shown: unicode minus, no negative zero."""
    if d == 0:
        d = abs(d)
    text = f"{d:f}"
    return text.replace("-", MINUS)


@functools.lru_cache(maxsize=_MEMO)
def number(cell: Cell, places: int, whole: bool = False) -> str:
    """A cell as shown in a table: integers as they are when ``whole``, else rounded."""
    if cell.masked:
        return NEG_INF_TEXT
    if whole and is_integer(cell):
        return decimal_text(Decimal(cell.q.numerator))
    return decimal_text(round_half_up(cell, places))


@functools.lru_cache(maxsize=512)  # steps hash by identity; a table asks once per cell
def step_is_whole(step: Step) -> bool:
    """True when every cell is an integer (or masked), so the table shows no decimals."""
    return all(is_integer(c) or c.masked for row in step.cells for c in row)


def shown(cell: Cell, step: Step, places: int) -> str:
    """A cell exactly as the step's table shows it."""
    return number(cell, places, step_is_whole(step))


def operand(cell: Cell, places: int) -> str:
    """A number inside working: whole numbers as they are, others rounded."""
    return number(cell, places, whole=True)


@functools.lru_cache(maxsize=_MEMO)
def as_shown(cell: Cell, places: int) -> Decimal:
    """The value a student reads off the table: integers as they are, others rounded."""
    if is_integer(cell):
        return Decimal(cell.q.numerator)
    return round_half_up(cell, places)


def rounded_dot(pairs: Iterable[tuple[Cell, Cell]], places: int) -> Decimal:
    """What the rounded inputs shown give for a sum of products, rounded to ``places``."""
    total = sum((as_shown(a, places) * as_shown(b, places) for a, b in pairs), Decimal(0))
    return round_decimal(total, places)


def is_rounded(cell: Cell, places: int) -> bool:
    """Whether showing the cell at ``places`` decimals loses anything."""
    if cell.masked or is_integer(cell):
        return False
    if cell.q is None:
        return True
    return (cell.q * 10**places).denominator != 1


def factor(cell: Cell, places: int) -> str:
    """A number as a factor in working: as ``operand``, in brackets when negative."""
    t = operand(cell, places)
    return f"({t})" if t.startswith(MINUS) else t


def dot_working(step: Step, i: int, j: int, places: int) -> tuple[str, bool]:
    """``1·1 + 0·0 + 1·1 + 0·0`` and whether any factor shown is rounded."""
    pairs = step.terms(i, j)
    rounded = any(is_rounded(a, places) or is_rounded(b, places) for a, b in pairs)
    text = " + ".join(f"{factor(a, places)}·{factor(b, places)}" for a, b in pairs)
    return text.replace("+ −", "− "), rounded


# ---------------------------------------------------------------------------------------------
# exact forms


def exact_text(expr: sympy.Expr) -> str:
    """An exact value as a student writes it: ``√2``, ``3√2/2``, ``1/(2 + e^√2)``."""
    import sympy

    printer = _printer()
    if expr == -sympy.oo:
        return NEG_INF_TEXT
    return printer.doprint(expr)


def exact_form(step: Step, i: int, j: int) -> str | None:
    """Cell (i, j)'s exact form as text, or None when it is too large to build and read
    (``tutor.exact_size`` counts it first; ``too_long_note`` says how large)."""
    from tutor.exact_size import too_long

    if too_long(step, i, j) is not None:
        return None
    return exact_text(step.cells[i][j].exact)


def too_long_note(step: Step, i: int, j: int) -> str:
    """``(exact form too long to show; 32 exponentials)``."""
    from tutor.exact_size import too_long

    return f"(exact form too long to show; {too_long(step, i, j)})"


_PRINTER = None


def _printer():  # type: ignore[no-untyped-def]
    """A sympy StrPrinter that writes √, e^x and implied multiplication."""
    global _PRINTER
    if _PRINTER is not None:
        return _PRINTER
    from sympy.printing.precedence import precedence
    from sympy.printing.str import StrPrinter

    class Printer(StrPrinter):
        def _print_Pow(self, expr, rational=False):  # type: ignore[no-untyped-def]
            import sympy

            base, exp = expr.as_base_exp()
            if exp == sympy.Rational(1, 2):
                inner = self._print(base)
                return f"√{inner}" if base.is_Atom else f"√({inner})"
            if exp == -1 and not base.is_Atom:
                return f"1/({self._print(base)})"
            return super()._print_Pow(expr, rational)

        def _print_exp(self, expr):  # type: ignore[no-untyped-def]
            arg = expr.args[0]
            if arg == sympy_half():
                return "√e"
            inner = self._print(arg)
            simple = (
                (arg.is_Integer and arg >= 0)
                or arg.is_Symbol
                or (arg.is_Pow and arg.exp == sympy_half() and arg.base.is_Integer)
            )
            return f"e^{inner}" if simple else f"e^({inner})"

        def _print_Exp1(self, expr):  # type: ignore[no-untyped-def]
            return "e"

        def _print_Mul(self, expr):  # type: ignore[no-untyped-def]
            text = super()._print_Mul(expr)
            text = re.sub(r"(\d)\*(?=[√e(])", r"\1", text)
            return text.replace("*", "·")

        def parenthesize(self, item, level, strict=False):  # type: ignore[no-untyped-def]
            if precedence(item) < level or (not strict and precedence(item) <= level):
                return f"({self._print(item)})"
            return self._print(item)

    _PRINTER = Printer()
    return _PRINTER


def sympy_half():  # type: ignore[no-untyped-def]
    import sympy

    return sympy.Rational(1, 2)


def tidy_minus(text: str) -> str:
    """Typographic minus signs in shown math."""
    return re.sub(r"(?<![eE])-", MINUS, text)


# ---------------------------------------------------------------------------------------------
# answers as read


def typed_text(text: str) -> str:
    """A typed answer as the parser understood its symbols: ``2/sqrt(2)`` → ``2/√2``."""
    s = " ".join(text.split())
    s = re.sub(r"sqrt\(\s*(\d+(?:\.\d+)?)\s*\)", r"√\1", s)
    s = s.replace("sqrt(", "√(").replace("**", "^").replace("*", "·")
    return tidy_minus(s)


def expr_rounded(expr: sympy.Expr, places: int) -> str:
    """Any exact real sympy value rounded half up to ``places``, as shown."""
    from sympy.polys.domains import QQ

    from tutor.engine import MP, Cell

    if expr.is_Rational:
        cell = Cell(QQ(int(expr.p), int(expr.q)))
    else:
        cell = Cell(None, MP.mpf(str(expr.evalf(45))))
    return decimal_text(round_half_up(cell, places))


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 question``, ``2 questions``; ``many`` for an irregular plural (``2 entries``)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
