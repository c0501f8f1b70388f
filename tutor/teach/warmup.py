"""The softmax warm-up on its own: any numbers in, the same exact softmax the walk uses out.

``attn-tutor softmax 1 2 3`` is one row of scores without a lesson around it. The numbers are
read as the quiz reads them (``read_typed``: numbers, fractions, ``4/sqrt(2)``; never eval)
and become a 1 × n step, so the engine's own ``softmax`` and the walk's own table do the work.
"""

from __future__ import annotations

from collections.abc import Sequence

import mpmath
import sympy
from sympy.polys.domains import QQ

from tutor.core.engine import APPROX_DIGITS, MP, Cell, Given, Softmax, softmax
from tutor.core.errors import AnswerError, UsageError
from tutor.core.numbers import EXPECTED_ARGUMENT, read_typed
from tutor.text import format as fmt

MAX_NUMBERS = 64


Number = tuple[int, int] | sympy.Expr  # exact: (numerator, denominator), or irrational


def read_number(text: str, what: str) -> Number:
    """One number, exactly; a ``UsageError`` that says which one was bad."""
    try:
        return read_typed(text, EXPECTED_ARGUMENT)
    except AnswerError as err:
        raise UsageError(f"{what}: {err}") from None


def read_numbers(texts: Sequence[str]) -> list[Number]:
    """Each text as an exact (numerator, denominator); a ``UsageError`` names the bad one."""
    if not texts:
        raise UsageError("give at least one number, for example: attn-tutor softmax 1 2 3")
    if len(texts) > MAX_NUMBERS:
        raise UsageError(f"found {len(texts)} numbers; at most {MAX_NUMBERS} are allowed")
    return [read_number(text, f"number {k}") for k, text in enumerate(texts, 1)]


def _exact(x: Number) -> sympy.Expr:
    return sympy.Rational(*x) if isinstance(x, tuple) else x


def _cell(value: sympy.Expr) -> Cell:
    """A given number as the engine holds one: a fraction exactly, else an irrational cell."""
    if value.is_Rational:
        return Cell(QQ(int(value.p), int(value.q)))

    def near(places: int) -> mpmath.mpf:
        digits = places + max(int(sympy.log(abs(value) + 1, 10).evalf(5)), 0) + 10
        with MP.workdps(digits):
            return MP.mpf(str(value.evalf(digits)))

    return Cell(None, near(APPROX_DIGITS), lambda: value, near)


def softmax_row(values: Sequence[Number], times: Number = (1, 1)) -> Softmax:
    """softmax(times · x) as a ``weights`` step of one row; its argument holds the inputs."""
    factor = _exact(times)
    cells = tuple(_cell(_exact(x) * factor) for x in values)
    cols = tuple(str(k) for k in range(1, len(values) + 1))
    x = Given("x", None, ("x",), cols, (cells,))
    return softmax("softmax", x)


def times_text(times: Number) -> str:
    """The --times factor exactly, as the rest shows numbers: ``−1``, ``1/3``, ``10``, ``1/√2``."""
    from decimal import Decimal, localcontext

    if not isinstance(times, tuple):
        return fmt.exact_text(times)

    p, q = times
    if (
        q != 1 and fmt.decimal_places(q) is not None
    ):  # a terminating decimal: shown as one (2.5, not 5/2)
        with localcontext(prec=len(str(p)) + 4 * len(str(q))):  # enough for any 2^a·5^b
            return fmt.decimal_text(Decimal(p) / Decimal(q))
    return fmt.tidy_minus(str(p) if q == 1 else f"{p}/{q}")


def times_effect(times: Number) -> str:
    """What multiplying every input by ``times`` did to the shares, in words."""
    x = _exact(times)  # only its sign and its size against 1 matter
    size = 0 if x == 0 else 1 if abs(x) < 1 else 2 if abs(x) == 1 else 3
    p, q = (-1 if x < 0 else 1) * size, 2  # a stand-in with the same sign and size against 1
    if p == 0:
        return (
            "Multiplying by 0 makes every input equal, so every share is the same: the flattest "
            "softmax there is."
        )
    if abs(p) > q:
        effect = (
            "Inputs further apart make softmax peakier; that is why attention divides its "
            "scores by √d_k first."
        )
    elif abs(p) < q:
        effect = (
            "Inputs closer together make softmax flatter; dividing the scores by √d_k does "
            "this in attention."
        )
    else:
        effect = "The inputs are as far apart as before, so softmax is just as peaky."
    if p < 0:
        effect += (
            " A negative factor turns the order round: the smallest input gets the largest share."
        )
    return effect
