"""Judging one answer for one cell: pure, exact where the values are rational, reusable.

The quiz asks about one cell at a time; the grader (worksheets) judges a whole sheet and may
judge a cell against the student's *own* earlier answers (follow-through). Both use:

* ``cell_from(step, i, j, value)``: a cell computed from whatever operand values ``value``
  returns (the true ones, the rounded ones a student sees, or a student's own answers);
* ``judge(given, expected, precision, exact_form=..., hand=...)``: right or wrong, and how;
* ``misconception(d, step, i, j, given, precision, exact_form=...)``: the classic slip a wrong
  answer matches, if any.

Tolerance (stated in the README, "Quiz"): with ``u = 10^-precision`` (0.01 at 2 places)

* an exact form (no decimal point: ``2``, ``1/3``, ``2/sqrt(2)``) must equal the value exactly;
* a decimal answer is right when it is within ``u/2`` of the exact value (any correct rounding,
  ties either way: 0.12 and 0.13 for 1/8), or within ``u`` of ``hand``, the value a careful
  student gets from the inputs as shown, rounded to the lesson's precision (√2 as 1.41, the
  weights as 0.16, 0.67, 0.16). Rounding every step to 2 places moves Z by up to 0.01
  (Z[cats, 1] comes out 0.48, exactly 0.4907…); that answer is the student's honest work and
  is accepted, and one more unit covers their own rounding of e^x or √d_k.

Rational values are compared exactly; an irrational value is compared through a 50-digit
evaluation, which cannot land on a tie with a rational bound. Whether an exact form equals a
value is decided by ``equal`` (exactly for rationals; see there for closed forms).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import sympy

from tutor.core.engine import Cell, Derivation, Exact, Step
from tutor.text import format as fmt

Value = Callable[[Step, int, int], sympy.Expr]  # (step, row, col) -> that cell's value
DIGITS = 50  # evaluation digits for irrational comparisons
SAME = sympy.Rational(1, 10**30)  # closer than this counts as the same value


# ---------------------------------------------------------------------------------------------
# values of cells


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


def dot(row: list[sympy.Expr], col: list[sympy.Expr]) -> sympy.Expr:
    """Σ row[k]·col[k], exactly."""
    return sympy.Add(*(a * b for a, b in zip(row, col, strict=True)))


def softmax_share(row: list[sympy.Expr], j: int) -> sympy.Expr:
    """e^row[j] / Σ e^row[k], exactly; −oo entries (masked) get no share."""
    seen = [x for x in row if x != -sympy.oo]
    if row[j] == -sympy.oo:
        return sympy.Integer(0)
    low = min(seen, key=_number)  # keeps every exponent ≥ 0
    return sympy.exp(row[j] - low) / sympy.Add(*(sympy.exp(x - low) for x in seen))


def cell_from(
    step: Step,
    i: int,
    j: int,
    value: Value = true_value,
    root: Callable[[int], sympy.Expr] = sympy.sqrt,
) -> sympy.Expr:
    """Cell (i, j) of ``step`` computed from the operand values ``value`` gives, by the
    engine's own rule for the step (``Step.combine``).

    With the default lookup this is the true value; with ``shown_value(p)`` and
    ``shown_root(p)`` it is what a student gets from the rounded inputs; with a lookup over a
    student's own answers it is the follow-through value.
    """
    if step.op == "input":
        return value(step, i, j)
    return step.combine(i, j, lambda r: value(r.step, r.i, r.j), Exact(root))


# ---------------------------------------------------------------------------------------------
# comparing


def _number(x: Cell | sympy.Expr) -> sympy.Expr:
    """A value to compare: exact Rational when it is one, else a 50-digit evaluation."""
    if isinstance(x, Cell):
        if x.q is not None:
            return sympy.Rational(x.q.numerator, x.q.denominator)
        return sympy.Float(x.approx, DIGITS)
    if not isinstance(x, sympy.Basic):  # a plain int from the code, never text
        if not isinstance(x, int) or isinstance(x, bool):
            raise TypeError(f"expected a sympy number or an int, got {x!r}")
        x = sympy.Integer(x)
    return x if x.is_Rational else _evaluated(x)


@functools.lru_cache(maxsize=4096)
def _evaluated(x: sympy.Expr) -> sympy.Expr:
    """``x`` to ``DIGITS`` digits, remembered: grading a sheet compares the same slip values
    (a softmax row's alternatives, say) for many cells, and evalf of e^… sums is slow."""
    return x.evalf(DIGITS)


def distance(a: Cell | sympy.Expr, b: Cell | sympy.Expr) -> sympy.Expr:
    """|a − b|: exact for two rationals, else to 50 digits."""
    return abs(_number(a) - _number(b))


EXACT_DIGITS = 1000  # working digits within which two closed forms that agree are equal


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


def unit(precision: int) -> sympy.Rational:
    """One unit in the last shown place: 1/100 at 2 places."""
    return sympy.Rational(1, 10**precision)


@dataclass(frozen=True)
class Verdict:
    """How one answer fared against one expected value."""

    right: bool
    exact: bool  # the answer was an exact form equal to the value
    kind: str  # "exact" | "rounded" | "hand" | "wrong"
    message: str


def judge(
    given: sympy.Expr,
    expected: Cell | sympy.Expr,
    precision: int,
    *,
    exact_form: bool,
    hand: sympy.Expr | None = None,
    hand_slack: sympy.Rational | None = None,
) -> Verdict:
    """Judge ``given`` (from ``numbers.read_answer``) against ``expected``.

    ``exact_form`` is true when the answer was typed without decimals (``Answer.exact_form``);
    then only equality counts. ``hand`` is the value the inputs as shown give (see
    ``hand_value``); a decimal answer within ``hand_slack`` of it is right too (default half a
    unit; ``slack(step, precision)`` gives the step's).
    """
    u = unit(precision)
    gap = distance(given, expected)
    if exact_form:
        if equal(given, expected):
            return Verdict(True, True, "exact", "right, exactly")
        return Verdict(False, False, "wrong", "not the exact value")
    if gap <= u / 2:
        return Verdict(True, False, "rounded", f"right to {precision} places")
    if hand is not None and distance(given, hand) <= (u / 2 if hand_slack is None else hand_slack):
        return Verdict(
            True,
            False,
            "hand",
            "right for the rounded inputs shown; the exact value rounds to "
            + _rounded_text(expected, precision),
        )
    return Verdict(
        False, False, "wrong", f"not within {fmt.expr_rounded(u, precision)} of the value"
    )


def _rounded_text(x: Cell | sympy.Expr, precision: int) -> str:
    if isinstance(x, Cell):
        return fmt.decimal_text(fmt.round_half_up(x, precision))
    return fmt.expr_rounded(x if isinstance(x, sympy.Basic) else sympy.Integer(x), precision)


def hand_value(step: Step, i: int, j: int, precision: int) -> sympy.Expr | None:
    """What a student gets from the inputs as shown (rounded), or None if nothing is rounded."""
    if step.op == "input":
        return None
    operands = step.args
    rounded = any(
        fmt.is_rounded(c, precision) for s in operands for row in s.cells for c in row
    ) or (step.op == "scale" and not sympy.sqrt(step.divisor).is_Rational)
    if not rounded:
        return None
    return cell_from(step, i, j, shown_value(precision), shown_root(precision))


def slack(step: Step, precision: int) -> sympy.Rational:
    """How far a hand answer may sit from ``hand_value``: half a unit for the answer's own
    rounding, a whole unit where the student also rounds e^x or √d_k on the way."""
    u = unit(precision)
    return u if step.op in ("scale", "softmax") else u / 2


def judge_cell(
    step: Step, i: int, j: int, given: sympy.Expr, precision: int, *, exact_form: bool
) -> Verdict:
    """``judge`` against the true value of a cell, allowing hand rounding of its inputs."""
    hand = None if exact_form else hand_value(step, i, j, precision)
    return judge(
        given,
        step.cells[i][j],
        precision,
        exact_form=exact_form,
        hand=hand,
        hand_slack=slack(step, precision),
    )


# ---------------------------------------------------------------------------------------------
# misconceptions


@dataclass(frozen=True)
class Slip:
    """A classic mistake a wrong answer matches."""

    name: str  # a short id, e.g. "not-scaled"
    message: str  # what happened, said to the student


def alternatives(
    d: Derivation, step: Step, i: int, j: int, value: Value = true_value
) -> list[tuple[Slip, sympy.Expr]]:
    """The values the classic slips give for cell (i, j) of ``step``, exactly, from the operand
    values ``value`` gives (the true ones by default)."""
    v = value
    row_of = _row_label(step, i)
    out: list[tuple[Slip, sympy.Expr]] = []
    name = step.name
    if name in ("Q", "K", "V") and step.op == "matmul":
        X, W = step.args
        x_row = [v(X, i, k) for k in range(len(X.cols))]
        for other in ("W_Q", "W_K", "W_V"):
            if other == W.name or not d.has(other, step.head):
                continue
            W_other = d.step(other, step.head)
            if j < len(W_other.cols):
                alt = dot(x_row, [v(W_other, k, j) for k in range(len(W_other.rows))])
                out.append(
                    (
                        Slip(
                            f"used-{other}",
                            f"that is X·{other}: {step.key} is made with {W.key}, not {other}",
                        ),
                        alt,
                    )
                )
        if j < len(W.rows) and len(W.cols) == len(x_row):
            alt = dot(x_row, [v(W, j, k) for k in range(len(W.cols))])
            out.append(
                (
                    Slip(
                        "row-of-W",
                        f"that uses row {W.rows[j]} of {W.key}; the entry needs column "
                        f"{W.cols[j]} (down the column, not across the row)",
                    ),
                    alt,
                )
            )
    elif name == "scores" and step.op == "matmul":
        Q, K = step.args
        n = range(len(Q.cols))
        q_i, q_j = [v(Q, i, k) for k in n], [v(Q, j, k) for k in n]
        k_i, k_j = [v(K, i, k) for k in n], [v(K, j, k) for k in n]
        col = step.cols[j]
        out += [
            (
                Slip(
                    "query-query",
                    f"that is the query of {row_of} · the query of {col}; "
                    "a score is a query · a key",
                ),
                dot(q_i, q_j),
            ),
            (
                Slip(
                    "key-key",
                    f"that is the key of {row_of} · the key of {col}; a score is a query · a key",
                ),
                dot(k_i, k_j),
            ),
            (
                Slip(
                    "swapped",
                    f"that is the query of {col} · the key of {row_of}: the row is the query, "
                    "the column the key",
                ),
                dot(q_j, k_i),
            ),
        ]
    elif name == "scaled" and step.op == "scale":
        (scores,) = step.args
        s = v(scores, i, j)
        d_k = step.divisor
        out += [
            (Slip("not-scaled", f"that is the raw score; divide it by √d_k = √{d_k}"), s),
            (
                Slip("divided-by-dk", f"that divides by d_k = {d_k}; divide by √d_k = √{d_k}"),
                s / d_k,
            ),
        ]
    elif name == "weights" and step.op == "softmax":
        (scaled,) = step.args
        x = v(scaled, i, j)
        column = [v(scaled, k, j) for k in range(len(scaled.rows))]
        out.append(
            (
                Slip(
                    "softmax-column",
                    f"that is softmax down column {step.cols[j]}; softmax runs along the "
                    f"row of {row_of}, so the row adds up to 1",
                ),
                softmax_share(column, i),
            )
        )
        if x != -sympy.oo:
            out.append(
                (
                    Slip(
                        "unnormalised",
                        "that is e^x alone; divide it by the total of e^x over the row",
                    ),
                    sympy.exp(x),
                )
            )
        raw = _raw_scores(step, i)
        if raw is not None:
            out.append(
                (
                    Slip(
                        "softmax-of-raw-scores",
                        "that is the softmax of the raw scores; take it of the scaled scores "
                        "(divided by √d_k)",
                    ),
                    softmax_share(raw, j),
                )
            )
    elif name == "Z" and step.op == "matmul":
        W, V = step.args
        w_row = [v(W, i, k) for k in range(len(W.cols))]
        for other in range(len(V.cols)):
            if other != j:
                alt = dot(w_row, [v(V, k, other) for k in range(len(V.rows))])
                out.append(
                    (
                        Slip(
                            "wrong-V-column",
                            f"that blends column {V.cols[other]} of V; {step.key}[{row_of}, "
                            f"{step.cols[j]}] blends column {V.cols[j]}",
                        ),
                        alt,
                    )
                )
        if i < len(W.cols):
            w_col = [v(W, k, i) for k in range(len(W.rows))]
            alt = dot(w_col, [v(V, k, j) for k in range(len(V.rows))])
            out.append(
                (
                    Slip(
                        "weights-column",
                        f"that uses column {W.cols[i]} of the weights; use the row of {row_of}",
                    ),
                    alt,
                )
            )
    return out


def _row_label(step: Step, i: int) -> str:
    return step.rows[i]


def _raw_scores(weights: Step, i: int) -> list[sympy.Expr] | None:
    """Row i of the raw scores behind a softmax (masked alike), or None if √d_k is 1."""
    (src,) = weights.args
    scaled = src.args[0] if src.op == "mask" else src
    if scaled.op != "scale" or scaled.divisor == 1:
        return None
    (scores,) = scaled.args
    return [
        -sympy.oo if weights.hidden(i, k) else true_value(scores, i, k)
        for k in range(len(scores.cols))
    ]


def misconception(
    d: Derivation,
    step: Step,
    i: int,
    j: int,
    given: sympy.Expr,
    precision: int,
    *,
    exact_form: bool,
    value: Value = true_value,
) -> Slip | None:
    """The slip a wrong answer for cell (i, j) matches, or None.

    A slip is named only when the answer would be *right* for the slip's value by the same rule
    as a right answer (``judge``): the exact slip value for an exact form; for a decimal, within
    ``u/2`` of the exact slip value or within ``slack`` of what the slip gives from the rounded
    inputs shown. A slip counts only when its value differs from the true one by more than one
    unit, so an answer is never blamed on a mistake that gives the right number.

    ``value`` gives the operands (the true ones by default). With a student's own answers the
    operands are already as the student rounded them, so the slip's value itself is the hand
    value, and "the true one" is what those answers give.
    """
    own = value is not true_value
    true = cell_from(step, i, j, value) if own else step.cells[i][j]
    u = unit(precision)
    slips = alternatives(d, step, i, j, value)
    if exact_form:
        for slip, alt in slips:
            if distance(alt, true) > u and equal(given, alt):
                return slip
        return None
    by_hand = dict(slips if own else alternatives(d, step, i, j, shown_value(precision)))
    for slip, alt in slips:
        hand = by_hand.get(slip)
        # (slip value, tolerance): exactly as ``judge`` accepts a right answer
        targets = [(alt, u / 2), (hand, slack(step, precision))]
        for target, tolerance in targets:
            if target is None or distance(target, true) <= u:
                continue
            if distance(given, target) <= tolerance:
                return slip
    return None
