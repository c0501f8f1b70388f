"""Exact values and the one exact comparison: a cell's exact value, a cell worked exactly from
whatever values its sources are given (the true ones, the ones the walk shows, a student's own),
and whether a typed exact form equals a cell (``equal``, ``same_value``).

The judge (``tutor.assess.judge``) asks ``same_value`` of an exact form; the grader asks
``cell_from`` for the value a student's own answers give, to show as follow-through.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from tutor.core.engine import Cell, Exact, Step
from tutor.text import format as fmt

Value = Callable[[Step, int, int], sympy.Expr]  # (step, row, col) -> that cell's value
EXACT_DIGITS = 1000  # working digits within which two closed forms that agree are equal


def exact_value(cell: Cell) -> sympy.Expr:
    """The cell's exact sympy value (a Rational when it is one, −oo when masked)."""
    if cell.q is not None:
        return sympy.Rational(cell.q.numerator, cell.q.denominator)
    return cell.exact


def true_value(step: Step, i: int, j: int) -> sympy.Expr:
    """A ``Value`` lookup giving the true, exact values."""
    return exact_value(step.cells[i][j])


def shown_value(precision: int) -> Value:
    """A ``Value`` lookup giving each cell as the walk shows it: rounded to ``precision``."""

    def value(step: Step, i: int, j: int) -> sympy.Expr:
        cell = step.cells[i][j]
        if cell.masked:
            return -sympy.oo
        return sympy.Rational(*fmt.as_shown(cell, precision).as_integer_ratio())

    return value


def shown_root(precision: int) -> Callable[[int], sympy.Expr]:
    """√n as a student uses it: exact for perfect squares, else rounded to ``precision``."""

    def root(n: int) -> sympy.Expr:
        exact = sympy.sqrt(n)
        if exact.is_Rational:
            return exact
        return sympy.Rational(*fmt.sqrt_rounded(n, precision).as_integer_ratio())

    return root


def cell_from(
    step: Step,
    i: int,
    j: int,
    value: Value = true_value,
    root: Callable[[int], sympy.Expr] = sympy.sqrt,
) -> sympy.Expr:
    """Cell (i, j) of ``step`` computed exactly from the operand values ``value`` gives, by the
    engine's own rule for the step (``Step.combine``): the true value, what the inputs as
    shown give (``shown_value``, ``shown_root``), or what a student's own answers give."""
    if step.given:
        return value(step, i, j)
    return step.combine(i, j, lambda r: value(r.step, r.i, r.j), Exact(root))


def equal(given: sympy.Expr, expected: Cell | sympy.Expr) -> bool:
    """Whether ``given`` equals ``expected`` exactly: how an exact form is judged.

    Rationals (nearly every answer and cell) are compared exactly: ``2+10^-31`` is not 2.
    Otherwise the difference is evaluated by sympy's strict ``evalf``, which raises its working
    precision until the digits it returns are sure: any sure digit means the values differ
    (``e^-100`` is not 0). A difference still indistinguishable from 0 at ``EXACT_DIGITS``
    digits counts as 0: that is not a proof, but a typed answer has at most 80 syntax nodes,
    30-digit literals and no value beyond 10^±60 at any node, so a different value that close
    would need a cancellation built on purpose, over 900 digits deeper than anything a
    student writes; a right form that sympy does not simplify (``e^-√2/(1 + 2e^-√2)`` for
    ``1/(2 + e^√2)``) costs about 0.1 s. A cell's 40-digit value settles most wrong answers
    before its exact form is built.
    """
    from sympy.core.evalf import PrecisionExhausted

    if isinstance(expected, Cell):
        if expected.masked:
            return False
        if expected.q is None:
            try:
                typed = given.evalf(45, strict=True)
            except PrecisionExhausted:
                typed = None  # cancels: only the exact comparison can say
            near = sympy.Float(expected.approx, 45)
            if typed is not None and abs(typed - near) > abs(near) * sympy.Float(10) ** -35:
                return False
        expected = exact_value(expected)
    difference = given - expected
    if difference.is_Rational:
        return difference == 0
    try:
        return difference.evalf(15, strict=True, maxn=EXACT_DIGITS) == 0
    except PrecisionExhausted:
        return True


def same_value(given: sympy.Expr, cell: Cell) -> bool:
    """Whether an exact form equals the cell's value (the one exact comparison: ``equal``)."""
    if cell.masked or given == -sympy.oo:
        return cell.masked and given == -sympy.oo
    return equal(given, cell)
