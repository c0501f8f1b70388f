"""How large a cell's exact form would be, counted from the derivation before sympy builds it.

An exact weight is ``e^(s₁ − s_low) / (e^(s₁ − s_low) + … )``: one exponential per token the
row sees, each with a rational exponent. Z and the output bring those of a whole row (of every
head) over one denominator, and sympy's ``together`` takes seconds for a dozen of them. So an
exact form is built only when it is short enough to read: at most ``MAX_EXPS`` exponentials and
no rational inside it longer than ``MAX_DIGITS`` digits. Beyond that, the cell's rounded value
is shown with a note saying how large the form is (as long sums are elided).

Counting reads only the steps' structure and the rationals' sizes: microseconds per cell.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from tutor.core.decode import Append
from tutor.core.engine import Cell, Concat, Given, Mask, Product, Scale, Softmax, Step, Times
from tutor.core.positions import Rotate

MAX_EXPS = 4  # e^x terms in one exact form: 1/(2 + e^√2) has two, a row of 4 tokens four
MAX_TRIG = 8  # sines and cosines in one exact form (positions): a row of 4 with 2 each
MAX_DIGITS = 24  # digits of the largest fraction inside it (numerator and denominator)


class Size(NamedTuple):
    """The exponentials in a cell's exact form, the digits of its largest fraction, and (for
    lessons with positions) the sines and cosines it holds."""

    exps: int
    digits: int
    trig: int = 0

    def __or__(self, other: Size) -> Size:  # type: ignore[override]
        """The size of a form made of both (e.g. two heads' Z rows over one denominator)."""
        return Size(self.exps + other.exps, max(self.digits, other.digits), self.trig + other.trig)


NONE = Size(0, 0)


def _digits(cell: Cell) -> int:
    """Digits of the cell's numerator and denominator, from their bit lengths (exact to one;
    no decimal string: a score over a common denominator can have thousands of digits)."""
    if cell.q is None:
        return 0
    return sum(
        int(abs(n).bit_length() * LOG10_2) + 1 for n in (cell.q.numerator, cell.q.denominator)
    )


LOG10_2 = 0.30103


@functools.lru_cache(maxsize=1 << 16)  # positions make chains of irrational cells: count once
def exact_size(step: Step, i: int, j: int) -> Size:
    """The size of cell (i, j)'s exact form, without building it."""
    cell = step.cells[i][j]
    if cell.q is not None:
        return Size(0, _digits(cell))
    if cell.masked:
        return NONE
    return _size(step, i, j)


@functools.singledispatch
def _size(step: Step, i: int, j: int) -> Size:
    """The size of an irrational cell's exact form, by its rule: what its sources hold (E + P,
    or any rule with no registration of its own); a rule whose form adds to that says so."""
    return _of_sources(step, i, j, NONE)


@_size.register(Given)
def _(step: Given, i: int, j: int) -> Size:
    return Size(0, 0, 1)  # a sinusoidal position holds one sine or cosine


@_size.register(Rotate)
def _(step: Rotate, i: int, j: int) -> Size:
    return _of_sources(step, i, j, Size(0, 0, 1))  # a turned pair, and its sine and cosine


def _of_sources(step: Step, i: int, j: int, total: Size) -> Size:
    for r in step.sources(i, j):
        total = total | exact_size(r.step, r.i, r.j)
    return total


@_size.register(Scale)
@_size.register(Times)
def _(step: Step, i: int, j: int) -> Size:
    return exact_size(step.args[0], i, j)  # a score over √d_k (or times a constant)


@_size.register(Mask)
@_size.register(Concat)
@_size.register(Append)
def _(step: Step, i: int, j: int) -> Size:
    ref = step.copy_of(i, j)  # a value kept as it was
    return NONE if ref is None else exact_size(ref.step, ref.i, ref.j)


@_size.register(Softmax)
def _(step: Softmax, i: int, j: int) -> Size:
    return _row_size(step, i)


@_size.register(Product)
def _(step: Product, i: int, j: int) -> Size:
    return _matmul_size(step, i, j)


@functools.lru_cache(maxsize=4096)  # every weight of a row (and every Z of it) asks again
def _row_size(step: Step, i: int) -> Size:
    """A row of weights: after dividing by e^(smallest score), one exponential per other
    distinct score the row sees (equal scores share one); exponents are score differences."""
    scaled = step.args[0]
    seen = [k for k, c in enumerate(scaled.cells[i]) if not c.masked]
    distinct = {_score(scaled, i, k) for k in seen}
    sizes = [exact_size(scaled, i, k) for k in seen]
    digits = max(s.digits for s in sizes)
    trig = sum(s.trig for s in sizes)
    # a difference of fractions: up to twice as long
    return Size(len(distinct) - 1, 2 * digits, trig)


def _score(step: Step, i: int, k: int) -> object:
    """The rational a softmax input is made from (the score under √d_k and the mask)."""
    while step.cells[i][k].q is None and isinstance(step, Scale | Times | Mask):
        step = step.args[0]
    if step.cells[i][k].q is None:  # a score made from positions: its own exponential
        return (id(step), i, k)
    return step.cells[i][k].q


def _matmul_size(step: Product, i: int, j: int) -> Size:
    """A sum of products over one denominator: the exponentials of each distinct row it reads
    (a weights row for Z; one per head for the output), the fractions of both sides."""
    A, B = step.args
    rows: dict[int, Size] = {}  # by source step: Z's terms share one row of weights
    trig = 0  # sines and cosines add up term by term: each product keeps its own
    col = B.cells[j] if step.transpose else B.columns[j]
    for k in range(len(A.cols)):
        ref = A.copy_of(i, k) if isinstance(A, Concat) else None
        src, kk = (ref.step, ref.j) if ref is not None else (A, k)
        size = exact_size(src, i, kk)
        old = rows.get(id(src), NONE)
        rows[id(src)] = Size(max(old.exps, size.exps), max(old.digits, size.digits))
        if step.transpose:  # Q · Kᵀ: both sides may hold positions
            trig += size.trig + exact_size(B, j, k).trig
        else:
            trig += size.trig
    total = NONE
    for size in rows.values():
        total = total | size
    return total | Size(0, max(_digits(c) for c in col), trig)


def too_long(step: Step, i: int, j: int) -> str | None:
    """Why the cell's exact form is not shown (``5 exponentials``), or None when it is."""
    size = exact_size(step, i, j)
    if size.trig > MAX_TRIG:
        return f"{size.trig} sines and cosines"
    if size.exps > MAX_EXPS:
        return f"{size.exps} exponentials"
    if size.digits > MAX_DIGITS:
        return f"fractions of {size.digits} digits"
    return None
