"""The one place where numbers become text: rounding, exact forms and term-by-term working.

Rounding itself is stated once, in ``tutor.core.rounding`` (half away from zero, from the exact
value) and remembered on each cell (``Cell.rounded``); this module only writes the result.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING

from tutor.core.rounding import DECIMAL_DIGITS, mp_decimal, round_decimal

if TYPE_CHECKING:
    from collections.abc import Iterable

    import sympy

    from tutor.core.engine import Cell, Step

MINUS = "−"
NEG_INF_TEXT = f"{MINUS}∞"


def round_half_up(cell: Cell, places: int) -> Decimal:
    """The cell's exact value rounded to ``places`` decimals, ties away from zero."""
    return cell.rounded(places)


def decimal_places(q: int) -> int | None:
    """Places of 1/q written as a decimal, or None when it never ends (q has a factor ≠ 2, 5)."""
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    return max(twos, fives) if q == 1 else None


@functools.lru_cache(maxsize=256)  # √d_k, asked by every scaled cell's slips
def sqrt_rounded(n: int, places: int) -> Decimal:
    """√n rounded to ``places``, ties away from zero (a 40-digit root cannot sit on a tie)."""
    from tutor.core.engine import MP

    return round_decimal(mp_decimal(MP.sqrt(n)), places)


def is_integer(cell: Cell) -> bool:
    return cell.is_integer


def decimal_text(d: Decimal) -> str:
    """A rounded decimal as shown: unicode minus, no negative zero."""
    if d == 0:
        d = abs(d)
    text = f"{d:f}"
    return text.replace("-", MINUS)


def number(cell: Cell, places: int, whole: bool = False) -> str:
    """A cell as shown in a table: integers as they are when ``whole``, else rounded."""
    if cell.masked:
        return NEG_INF_TEXT
    if whole and is_integer(cell):
        return decimal_text(Decimal(int(cell.q.numerator)))
    return decimal_text(round_half_up(cell, places))


def step_is_whole(step: Step) -> bool:
    """True when every cell is an integer (or masked), so the table shows no decimals."""
    return step.whole


def shown(cell: Cell, step: Step, places: int) -> str:
    """A cell exactly as the step's table shows it."""
    return number(cell, places, step_is_whole(step))


def operand(cell: Cell, places: int) -> str:
    """A number inside working: whole numbers as they are, others rounded."""
    return number(cell, places, whole=True)


def as_shown(cell: Cell, places: int) -> Decimal:
    """The value a student reads off the table: integers as they are, others rounded."""
    if is_integer(cell):
        return Decimal(int(cell.q.numerator))
    return round_half_up(cell, places)


def rounded_dot(pairs: Iterable[tuple[Cell, Cell]], places: int) -> Decimal:
    """What the rounded inputs shown give for a sum of products, rounded to ``places``."""
    with localcontext(prec=DECIMAL_DIGITS):  # the default 28 digits would round a huge sum
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


def whole_root(n: int) -> int | None:
    """√n when it is a whole number (√4 = 2), else None."""
    root = math.isqrt(n)
    return root if root * root == n else None


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
    (``tutor.core.exact_size`` counts it first; ``too_long_note`` says how large)."""
    from tutor.core.exact_size import too_long

    if too_long(step, i, j) is not None:
        return None
    return exact_text(step.cells[i][j].exact)


def too_long_note(step: Step, i: int, j: int) -> str:
    """``(exact form too long to show; 32 exponentials)``."""
    from tutor.core.exact_size import too_long

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
            if exp.is_Integer and 2 <= exp <= 9:  # cos(1)², never Python's cos(1)**2
                inner = self._print(base)
                if not (base.is_Atom or isinstance(base, sympy.Function)) or " " in inner:
                    inner = f"({inner})"  # (1 + √2)², (cos 22.5°)²
                return inner + "⁰¹²³⁴⁵⁶⁷⁸⁹"[int(exp)]
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

        def _print_cos(self, expr):  # type: ignore[no-untyped-def]
            return self._turn("cos", expr.args[0])

        def _print_sin(self, expr):  # type: ignore[no-untyped-def]
            return self._turn("sin", expr.args[0])

        def _turn(self, name: str, arg):  # type: ignore[no-untyped-def]
            """``cos 57.5°`` for a rational multiple of π (as a course writes an angle in
            degrees), ``cos(1)`` for radians."""
            import sympy

            turns = arg / sympy.pi
            if turns.is_Rational and turns != 0:
                return f"{name} {degree_text(turns * 180)}°"
            return f"{name}({self._print(arg)})"

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


def degree_text(x) -> str:  # type: ignore[no-untyped-def]
    """A rational number of degrees as a course writes it: ``60``, ``57.5`` (not ``115/2``,
    which reads as cos(115)/2 after "cos"); a fraction only when it has no finite decimal."""
    places = decimal_places(int(x.q))
    if places is None:
        return exact_text(x)
    from sympy.polys.domains import QQ

    from tutor.core.engine import Cell

    return tidy_minus(decimal_text(round_half_up(Cell(QQ(int(x.p), int(x.q))), places)))


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
    import sympy
    from sympy.polys.domains import QQ

    from tutor.core.engine import MP, Cell

    if expr.is_Rational:
        cell = Cell(QQ(int(expr.p), int(expr.q)))
    else:  # every digit down to 20 places, however large (an answer may reach 10^60)
        try:
            # 65 digits worked, 45 kept: over 35 places of any value below 10^10
            with MP.workdps(_WORKED):
                value = _mp_value(expr)
            size = abs(value)
            if not 0 < size < 10**10:
                raise _Unhandled
            digits = 45 + (int(MP.log10(size)) if size > 1 else 0)
            with MP.workdps(digits):
                cell = Cell(None, +value)
        except _Unhandled:  # sympy's own evaluation, which raises its precision as it needs
            size = abs(expr.evalf(15))
            digits = 45 + (int(sympy.log(size, 10).evalf(15)) if size > 1 else 0)
            with MP.workdps(digits):
                cell = Cell(None, MP.mpf(str(expr.evalf(digits))))
    return decimal_text(round_half_up(cell, places))


_WORKED = 65  # digits of ``_mp_value``'s arithmetic


class _Unhandled(Exception):
    """A value ``_mp_value`` leaves to sympy's evaluation."""


@functools.lru_cache(maxsize=8192)
def _mp_value(expr: sympy.Expr):  # type: ignore[no-untyped-def]
    """An exact value of rationals, +, ·, powers, e^x, sin and cos, in mpmath at ``_WORKED``
    digits; remembered, since the same e^x (a row's) stand in many cells' values, and sympy's
    evaluation of a row of 32 of them takes milliseconds. A sum that cancels (lost more than
    15 digits), a power of a negative number or an e^x of a large exponent raises
    ``_Unhandled``."""
    import sympy

    from tutor.core.engine import MP

    if MP.dps != _WORKED:
        raise _Unhandled
    if expr.is_Rational:
        return MP.mpf(int(expr.p)) / int(expr.q)
    args = [_mp_value(a) for a in expr.args]
    if expr.is_Add:
        total = MP.fsum(args)
        largest = max(abs(a) for a in args)
        if largest and abs(total) < largest * MP.mpf(10) ** -15:
            raise _Unhandled
        return total
    if expr.is_Mul:
        return MP.fprod(args)
    if expr.is_Pow:
        base, power = args
        if (base <= 0 and not expr.exp.is_Integer) or (base == 0 and power < 0):
            raise _Unhandled
        return MP.power(base, power)
    if isinstance(expr, (sympy.exp, sympy.sin, sympy.cos)):
        (x,) = args
        if abs(x) > 10**5:  # e^x of larger x: left to sympy
            raise _Unhandled
        return {sympy.exp: MP.exp, sympy.sin: MP.sin, sympy.cos: MP.cos}[expr.func](x)
    raise _Unhandled


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 question``, ``2 questions``; ``many`` for an irregular plural (``2 entries``)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
