"""The softmax warm-up on its own: any numbers in, the same exact softmax the walk uses out.

``attn-tutor softmax 1 2 3`` is one row of scores without a lesson around it. The numbers are
read exactly (``parse_entry``: integers, decimals, fractions; never eval) and become a 1 × n
step, so the engine's own ``softmax`` and the walk's own table do the work.
"""

from __future__ import annotations

from collections.abc import Sequence

from tutor.core.engine import Cell, Given, Softmax, softmax
from tutor.core.errors import AnswerError, UsageError
from tutor.core.numbers import EXPECTED_ARGUMENT, parse_entry
from tutor.text import format as fmt

MAX_NUMBERS = 64


def read_number(text: str, what: str) -> tuple[int, int]:
    """One number, exactly; a ``UsageError`` that says which one was bad."""
    try:
        return parse_entry(text, EXPECTED_ARGUMENT)
    except AnswerError as err:
        raise UsageError(f"{what}: {err}") from None


def read_numbers(texts: Sequence[str]) -> list[tuple[int, int]]:
    """Each text as an exact (numerator, denominator); a ``UsageError`` names the bad one."""
    if not texts:
        raise UsageError("give at least one number, for example: attn-tutor softmax 1 2 3")
    if len(texts) > MAX_NUMBERS:
        raise UsageError(f"found {len(texts)} numbers; at most {MAX_NUMBERS} are allowed")
    return [read_number(text, f"number {k}") for k, text in enumerate(texts, 1)]


def softmax_row(values: Sequence[tuple[int, int]], times: tuple[int, int] = (1, 1)) -> Softmax:
    """softmax(times · x) as a ``weights`` step of one row; its argument holds the inputs."""
    from sympy.polys.domains import QQ

    factor = QQ(*times)
    cells = tuple(Cell(QQ(p, q) * factor) for p, q in values)
    cols = tuple(str(k) for k in range(1, len(values) + 1))
    x = Given("x", None, ("x",), cols, (cells,))
    return softmax("softmax", x)


def times_text(times: tuple[int, int]) -> str:
    """The --times factor exactly, as the rest shows numbers: ``−1``, ``1/3``, ``10``."""
    from decimal import Decimal, localcontext

    p, q = times
    if (
        q != 1 and fmt.decimal_places(q) is not None
    ):  # a terminating decimal: shown as one (2.5, not 5/2)
        with localcontext(prec=len(str(p)) + 4 * len(str(q))):  # enough for any 2^a·5^b
            return fmt.decimal_text(Decimal(p) / Decimal(q))
    return fmt.tidy_minus(str(p) if q == 1 else f"{p}/{q}")


def times_effect(times: tuple[int, int]) -> str:
    """What multiplying every input by ``times`` did to the shares, in words."""
    p, q = times
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
