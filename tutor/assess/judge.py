"""Judging one answer for one cell: the one judge the quiz and the grader share.

The model (the README's "Tolerance" says it in a teacher's words): a written decimal stands for
every value it could be a rounding of, and a cell's *honest range* is what its step's rule
(``Step.combine``, the engine's one description of each cell) gives over the ranges of its
inputs, in ``tutor.assess.honest``'s arithmetic of intervals: every intermediate carried exactly or
rounded to the lesson's places or more, √d_k and each e^x rounded the same way, the row total
of a softmax too. An answer earns the point when it is a correct rounding (half up, or either
way at a tie) of some value in that range:

* from the true inputs (as a student may carry them) for ``correct``;
* from the student's own earlier answers for follow-through (``Judge.follows``).

A decimal with fewer places than the lesson asks is read padded with zeros (``0`` is 0.00);
the quiz also says when it is right to its own places (``kind == "fewer"``). An exact form
(``1/3``, ``4/sqrt(2)``) must equal the value (``same_value``). A named slip (``Judge.slips``) is
one whose own computation the answer is honest for, when the true one is not.

Ranges are remembered per ``Judge``, and a ``Judge`` per derivation (``judge_for``): the memory
goes when the derivation does.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import sympy
from sympy.polys.domains import QQ

from tutor.assess import honest as hn
from tutor.assess.honest import HIDDEN, Interval, Range
from tutor.core import kinds
from tutor.core.decode import Append
from tutor.core.engine import (
    MP,
    Cell,
    Concat,
    Derivation,
    Exact,
    Given,
    Mask,
    Product,
    Ref,
    Scale,
    Softmax,
    Step,
    Sum,
    Times,
)
from tutor.core.numbers import Answer
from tutor.core.positions import Rotate
from tutor.core.rounding import scaled_half_up
from tutor.text import format as fmt
from tutor.text import steps

Value = Callable[[Step, int, int], sympy.Expr]  # (step, row, col) -> that cell's value
Lookup = Callable[[Ref], Range]  # a cell -> the range a student may use for it
Remap = Callable[[Ref], "Ref | Range"]  # a slip: which cell is read instead (or what value)
DIGITS = 50  # evaluation digits for irrational comparisons


# ---------------------------------------------------------------------------------------------
# exact values (working text, follow-through values shown to the student)


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


# ---------------------------------------------------------------------------------------------
# comparing exactly


def _number(x: Cell | sympy.Expr) -> sympy.Expr:
    """A value to compare: exact Rational when it is one, else a 50-digit evaluation."""
    if isinstance(x, Cell):
        if x.q is not None:
            return sympy.Rational(x.q.numerator, x.q.denominator)
        return sympy.Float(x.approx, DIGITS)
    return x if x.is_Rational else x.evalf(DIGITS)


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


def same_value(given: sympy.Expr, cell: Cell) -> bool:
    """Whether an exact form equals the cell's value (the one exact comparison: ``equal``)."""
    if cell.masked or given == -sympy.oo:
        return cell.masked and given == -sympy.oo
    return equal(given, cell)


# ---------------------------------------------------------------------------------------------
# answers as ranges

_PLAIN = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")


def written_places(answer: Answer) -> int | None:
    """The decimal places of a written number (``0.50`` has 2, ``2e-3`` has 3, ``2`` has 0);
    None for a fraction, another exact form or an expression."""
    if not answer.plain or (answer.exact_form and not answer.value.is_Integer):
        return None
    m = _PLAIN.fullmatch(answer.text.replace("\u2212", "-").replace(" ", ""))
    if m is None:
        return None
    return max(0, len(m[2] or "") - int(m[3] or 0))


def answer_range(value: sympy.Expr) -> Range:
    """An answer's exact value as a range: a point, −∞, or a tight range around it."""
    if value == -sympy.oo:
        return HIDDEN
    if value.is_Rational:
        return Interval(QQ(int(value.p), int(value.q)))
    return hn.around(MP.mpf(value.evalf(60)._mpf_), 55)


def written_range(answer: Answer, places: int) -> Range:
    """Every value a written entry stands for: a decimal with ``q`` places is any value that
    rounds to it, [w − u/2, w + u/2] with u = 10^-q (padded with zeros to ``places``, the
    lesson's, when it has fewer); an exact form is itself."""
    r = answer_range(answer.value)
    q = written_places(answer)
    if q is None or isinstance(r, hn.Hidden):
        return r
    half = QQ(1, 2 * 10 ** max(q, places))
    return Interval(r.lo - half, r.hi + half)


def reads_through(step: Step, i: int, j: int) -> bool:
    """Whether cell (i, j) is one no student writes that its rule makes from its sources
    unchanged or fills in itself (the mask's cells, a cache's rows): its value is the rule's,
    read through to what it copies. A copy the sheet asks (concat) is what the student wrote."""
    kind = kinds.BY_NAME.get(step.name)
    if kind is not None and kind.sheet is not None:
        return False
    return step.hides(i, j) or step.copy_of(i, j) is not None


# ---------------------------------------------------------------------------------------------
# verdicts and slips


@dataclass(frozen=True)
class Verdict:
    """How one answer fared against one cell."""

    right: bool
    exact: bool  # the answer was an exact form equal to the value
    kind: str  # "exact" | "rounded" | "hand" | "fewer" | "wrong"
    message: str


@dataclass(frozen=True)
class Slip:
    """A classic mistake a wrong answer matches."""

    name: str  # a stable id, e.g. "not-scaled"
    message: str  # what happened, said to the student


class Remembered:
    """A ``Lookup`` whose values hold still for a while (a sheet's own answers while one step is
    graded: its cells read only earlier steps, whose verdicts are settled). The judge remembers
    what it works from it cell by cell (a cell's range and enclosure, read without a slip's
    remap), so a row's other cells, asked again by each cell's slips, are worked once."""

    __slots__ = ("coarse", "lookup", "ranges", "steps")

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.ranges: dict[tuple[int, int, int], Range | None] = {}
        self.coarse: dict[tuple[int, int, int], hn.Fixed | None] = {}
        self.steps: dict[int, Step] = {}  # the steps remembered by id, kept alive (``Judge``)

    def __call__(self, ref: Ref) -> Range:
        return self.lookup(ref)


class Judge:
    """The judge of one derivation at one precision; remembers the ranges it works out."""

    def __init__(self, d: Derivation, places: int) -> None:
        self.d = d
        self.places = places
        self.kit = hn.Honest(places)
        self._true: dict[tuple[int, int, int], Range] = {}
        # every step whose cells are remembered by id, kept alive so that no other step (a slip's
        # step made for the moment, like the scores divided by another root) takes its id
        self._steps: dict[int, Step] = {}
        self._carried: dict[tuple[int, int, int], Range] = {}
        self._coarse: dict[tuple[int, int, int], hn.Fixed | None] = {}
        self._given: dict[tuple[int, int, int], Interval] = {}
        self._verdicts: dict[tuple[int, int, int, Answer], Verdict] = {}
        self._reached: tuple[Answer, int | None, tuple[object, object] | None] | None = None

    def hides(self, step: Step, i: int, j: int) -> bool:
        """A scaled score the causal mask turns into −∞ (the walk shows −∞ there): the mask's
        own rule says which (``Derivation.fill``)."""
        return (fill := self.d.fill(step, i, j)) is not None and fill.masked

    # -- ranges ----------------------------------------------------------------------------

    def carried(self, ref: Ref) -> Range:
        """A true cell as a student may carry it: exactly, or rounded to the lesson's places
        (or more)."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._carried.get(key)
        if got is None:
            got = hn.carried(hn.enclosed(ref.step.cells[ref.i][ref.j]), self.places)
            self._carried[key] = got
        return got

    def given(self, ref: Ref) -> Interval:
        """A number the lesson gives, as a point (one object per cell, so its coarse enclosure
        is made once)."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._given.get(key)
        if got is None:
            got = self._given[key] = self.kit.given(ref.step.cells[ref.i][ref.j])
        return got

    def resolved(self, base: Lookup, remap: Remap | None = None) -> Lookup:
        """A lookup for ``combine``: inputs as the lesson gives them, the mask applied by its
        own rule, ``remap`` (a slip) first, and ``base`` for every other cell."""

        def value(ref: Ref) -> Range:
            if remap is not None:
                got = remap(ref)
                if not isinstance(got, Ref):
                    return got
                ref = got
            step = ref.step
            if step.given:
                return self.given(ref)
            if reads_through(step, ref.i, ref.j):  # not written: read through to what it copies
                return step.combine(ref.i, ref.j, value, self.kit)
            return base(ref)

        return value

    def range(self, step: Step, i: int, j: int, base: Lookup | None = None) -> Range | None:
        """The honest range of cell (i, j): from the true inputs (``base`` None, remembered)
        or from the cells ``base`` gives. None when it cannot be worked (a division by 0)."""
        if base is None:
            key = (id(step), i, j)
            if key not in self._true:
                self._steps[id(step)] = step
                self._true[key] = self._combine(step, i, j, self.resolved(self.carried))
            return self._true[key]
        if isinstance(base, Remembered):
            key = (id(step), i, j)
            if key not in base.ranges:
                base.steps[id(step)] = step
                base.ranges[key] = self._combine(step, i, j, self.resolved(base))
            return base.ranges[key]
        return self._combine(step, i, j, self.resolved(base))

    def _combine(self, step: Step, i: int, j: int, value: Lookup) -> Range | None:
        try:
            return step.combine(i, j, value, self.kit)
        except ZeroDivisionError:
            return None

    # -- a cheap screen before the exact range ----------------------------------------------------

    def coarse(
        self, step: Step, i: int, j: int, base: Lookup | None = None, remap: Remap | None = None
    ) -> hn.Fixed | None:
        """An integer enclosure of cell (i, j)'s range from ``base`` (the true inputs when None,
        remembered), read through ``remap``: a product's sum in a few integer operations, where
        its exact range costs hundreds of big rationals. None for other steps (not screened)."""
        if not isinstance(step, Product):
            return None
        key = (id(step), i, j)
        memo = None
        if remap is None:
            memo = self._coarse if base is None else getattr(base, "coarse", None)
        if memo is not None and key in memo:
            return memo[key]
        value = self.resolved(base or self.carried, remap)
        try:
            got = step.combine(i, j, lambda ref: hn.fixed(value(ref)), hn.COARSE)
        except hn.Unscreened:
            got = None
        if memo is not None:
            (self._steps if base is None else base.steps)[id(step)] = step  # type: ignore[union-attr]
            memo[key] = got
        return got

    def reach(self, answer: Answer, places: int | None = None) -> tuple[object, object] | None:
        """A window every range ``honest`` accepts the answer for meets: the answer, half a unit
        at its places, and the tenth of that a rounding one place further may add (None: −∞).
        The last answer's is remembered: each slip of a cell asks for it."""
        last = self._reached
        if last is not None and last[0] is answer and last[1] == places:
            return last[2]
        a = answer_range(answer.value)
        if isinstance(a, hn.Hidden):
            window = None
        elif (q := self._read_at(answer, places)) is None:
            window = a.lo, a.hi
        else:
            margin = QQ(11, 20 * 10**q)
            window = a.lo - margin, a.hi + margin
        self._reached = (answer, places, window)
        return window

    def honest_at(
        self,
        answer: Answer,
        step: Step,
        i: int,
        j: int,
        base: Lookup | None = None,
        places: int | None = None,
    ) -> bool:
        """``honest`` for cell (i, j)'s range from ``base`` (the true inputs when None); the
        exact range is worked only when the coarse one may meet the answer."""
        if base == self.carried:
            base = None
        window = self.reach(answer, places)
        coarse = self.coarse(step, i, j, base) if window is not None else None
        if coarse is not None and not coarse.meets(*window):  # type: ignore[misc]
            return False
        return self.honest(answer, self.range(step, i, j, base), places)

    def _read_at(self, answer: Answer, places: int | None) -> int | None:
        """The places ``honest`` reads a decimal at (None: an exact form, judged as itself)."""
        q = written_places(answer)
        if q is None and answer.exact_form:
            return None
        return max(q if q is not None else self.places, self.places) if places is None else places

    # -- is an answer honest for a range ------------------------------------------------------

    def honest(self, answer: Answer, r: Range | None, places: int | None = None) -> bool:
        """Whether ``answer`` is a correct rounding of some value in ``r``: at the answer's own
        places when it has more than the lesson's, else padded to the lesson's (or at
        ``places``). An exact form must lie in the range."""
        if r is None:
            return False
        a = answer_range(answer.value)
        if isinstance(r, hn.Hidden) or isinstance(a, hn.Hidden):
            return r is a
        q = self._read_at(answer, places)
        if q is None:
            return r.meets(a.lo, a.hi)
        half = QQ(1, 2 * 10**q)
        lo, hi = a.lo - half, a.hi + half
        if r.meets(lo, hi):
            return True
        if q + 1 > self.places + hn.EXTRA or not r.meets(lo - half / 10, hi + half / 10):
            return False  # rounding one place further moves a value by less than that
        wide = hn.carried(r, self.places, first=q + 1)  # carried one place or more past it
        return wide.meets(lo, hi)

    # -- against the true inputs ------------------------------------------------------------

    def judge(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        """Right or wrong against the true inputs, and how (remembered: a class's sheets
        share their judge, and many of their answers)."""
        key = (id(step), i, j, answer)
        got = self._verdicts.get(key)
        if got is None:
            self._steps[id(step)] = step
            got = self._verdicts[key] = self._judge(step, i, j, answer)
        return got

    def _judge(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        cell = step.cells[i][j]
        p = self.places
        if answer.value == -sympy.oo:
            if self.hides(step, i, j) or cell.masked:
                return Verdict(True, True, "exact", "right: the causal mask makes it −∞")
            return Verdict(False, False, "wrong", "−∞ only where the causal mask hides a score")
        if answer.exact_form and same_value(answer.value, cell):
            return Verdict(True, True, "exact", "right, exactly")
        if answer.exact_form and not answer.value.is_Rational:  # claims exactness: √2 is not 1.41
            return Verdict(False, False, "wrong", "not the exact value")
        if not answer.plain or (answer.exact_form and not answer.value.is_Integer):
            return self._as_decimal(step, i, j, answer)
        q = max(written_places(answer) or p, p)
        half = QQ(1, 2 * 10**q)
        a = answer_range(answer.value)
        assert isinstance(a, Interval)
        tight = hn.enclosed(cell)
        # the true value surely rounds to the answer, and it lies in the honest range, so the
        # answer is honest without working that range. Not for a softmax: an e^x below the
        # 256-bit slack has a range whose lower end is 0, and a row of those has no range
        surely = (
            not isinstance(step, Softmax)
            and isinstance(tight, Interval)
            and a.lo - half <= tight.lo
            and tight.hi <= a.hi + half
        )
        if surely or self.honest_at(answer, step, i, j):
            if tight.meets(a.lo - half, a.hi + half):  # type: ignore[union-attr]
                return Verdict(True, False, "rounded", f"right to {q} places")
            return Verdict(
                True,
                False,
                "hand",
                "right for the rounded inputs shown; the exact value rounds to "
                + fmt.decimal_text(fmt.round_half_up(cell, q)),
            )
        q = written_places(answer)
        if q is not None and 0 < q < p and self.honest_at(answer, step, i, j, places=q):
            return Verdict(False, False, "fewer", f"right to {_places(q)}; give {_places(p)}")
        return Verdict(False, False, "wrong", "no careful rounding gives that")

    def _as_decimal(self, step: Step, i: int, j: int, answer: Answer) -> Verdict:
        """An expression, or a fraction that is not the exact value, judged as the decimal it
        gives (one rule, however the answer is typed): a terminating fraction as itself
        (``4/25`` is 0.16), anything else rounded to the lesson's places. Decimals inside an
        expression with fewer places than the lesson's are a too-early rounding, said so."""
        value = answer.value
        q = fmt.decimal_places(int(value.q)) if value.is_Rational else None
        places = self.places if q is None else max(q, self.places)
        text = fmt.expr_rounded(value, places)
        shown = sympy.Rational(text.replace(fmt.MINUS, "-"))
        decimal = Answer(text, shown, exact_form=shown.is_Integer, plain=True)
        what = "fraction" if answer.exact_form and value.is_Rational else "expression"
        v = self.judge(step, i, j, decimal)
        says = f"your {what} gives {decimal.text}"
        early = _literal_places(answer)
        if not v.right and early is not None and early < self.places:
            says += f"; rounding to {_places(early)} inside it is too early ({self.places} or more)"
        return Verdict(v.right, False, v.kind, f"{says}: {v.message}")

    def follows(self, step: Step, i: int, j: int, answer: Answer, own: Lookup) -> bool:
        """Whether the answer is honest for the student's own inputs (``own``)."""
        if answer.value == -sympy.oo:
            return self.hides(step, i, j)
        return self.honest_at(answer, step, i, j, own)

    # -- slips ------------------------------------------------------------------------------

    def slips(
        self, step: Step, i: int, j: int, answer: Answer, base: Lookup | None = None
    ) -> list[Slip]:
        """The slips whose computation the answer is honest for (from the true inputs, or the
        cells ``base`` gives), when the true computation is not: one is the explanation;
        several explain it equally well."""
        base = base or self.carried
        if answer.value == -sympy.oo or self.honest_at(answer, step, i, j, base):
            return []
        if self._truncated(step, i, j, answer, base):  # the right value, cut off: that is all
            return [TRUNCATED]
        out = []
        for slip, alt in alternatives(self.d, step, i, j):
            r = alt(self, base, answer)
            if r is not None and self.honest(answer, r):
                out.append(slip)
        return out

    def _truncated(self, step: Step, i: int, j: int, answer: Answer, base: Lookup) -> bool:
        """The answer is some value of the range cut off (not rounded) at its places (the
        lesson's or more)."""
        q = written_places(answer)
        if q is None or q < self.places:
            return False
        a = answer_range(answer.value)
        assert isinstance(a, Interval)
        u = QQ(1, 10**q)
        coarse = self.coarse(step, i, j, None if base == self.carried else base)
        if coarse is not None and not coarse.meets(a.lo - u, a.lo + u):  # the cut lies in there
            return False
        r = self.range(step, i, j, None if base == self.carried else base)
        if not isinstance(r, Interval):
            return False
        cut = Interval(a.lo, a.lo + u) if a.lo > 0 else Interval(a.lo - u, a.lo)
        if a.lo == 0:
            cut = Interval(-u, u)
        inside = r.meets(cut.lo, cut.hi) and not (r.hi == cut.lo or r.lo == cut.hi)
        return inside

    def pen_slip(self, step: Step, i: int, j: int, answer: Answer) -> bool:
        """A slip of the pen, still a recognisable attempt at the cell: a digit or the sign
        away from the true value (not a lone digit for another, like 0 for 2), a term of a
        sum dropped or its sign flipped. A 0 never is: it is what a blank looks like."""
        if answer.value == 0:
            return False
        cell = step.cells[i][j]
        q = written_places(answer)
        if q is not None and not cell.masked and answer.value != 0:
            true = scaled_half_up(hn.enclosed(cell).lo if cell.q is None else cell.q, q)
            mine = scaled_half_up(QQ(int(answer.value.p), int(answer.value.q)), q)
            if mine == -true:
                return True
            a, b = str(abs(mine)).zfill(q + 1), str(abs(true)).zfill(q + 1)
            same_sign = (mine >= 0) == (true >= 0)
            if same_sign and len(a) == len(b) >= 2 and sum(map(str.__ne__, a, b)) == 1:
                return True
        if not isinstance(step, Product):  # a term of a sum dropped: a product's slip
            return False
        window = self.reach(answer)
        coarse = self.coarse(step, i, j)
        if window is not None and coarse is not None:
            w_lo, w_hi = coarse.outward(*window)
            # (sum - t) may meet the window only when t meets [t_lo, t_hi]
            t_lo, t_hi = coarse.lo - w_hi, coarse.hi - w_lo
        else:
            coarse = None
        r = None
        value = self.resolved(self.carried)
        refs = step.sources(i, j)
        for a_ref, b_ref in zip(refs[::2], refs[1::2], strict=True):
            x, y = value(a_ref), value(b_ref)
            if coarse is not None:  # rule the term (and twice the term) out cheaply first
                t = hn.fixed(x) * hn.fixed(y)
                if (
                    t.shift == coarse.shift
                    and not (t.lo <= t_hi and t.hi >= t_lo)
                    and not (2 * t.lo <= t_hi and 2 * t.hi >= t_lo)
                ):
                    continue
            r = self.range(step, i, j) if r is None else r
            term = x * y  # type: ignore[operator]
            if term.lo == term.hi == 0 or not isinstance(r, Interval):
                continue
            if self.honest(answer, r - term) or self.honest(answer, r - term.scaled(2)):
                return True
        return False


# a slip's range from ``base``; given an answer, None also when a cheap enclosure shows the
# answer cannot be honest for it (the exact range is then not worked)
Alternative = Callable[..., "Range | None"]


def _at(step: Step, i: int, j: int, remap: Remap | None = None) -> Alternative:
    """Cell (i, j) of ``step`` by its own rule, reading the cells ``remap`` says instead."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        true = remap is None and base == judge.carried
        window = None if answer is None else judge.reach(answer)
        if window is not None:
            coarse = judge.coarse(step, i, j, None if true else base, remap)
            if coarse is not None and not coarse.meets(*window):
                return None
        if remap is None:  # another cell's own range: remembered (``Judge.range``)
            return judge.range(step, i, j, None if true else base)
        return judge._combine(step, i, j, judge.resolved(base, remap))

    return alt


def _swap_step(old: Step, new: Step) -> Remap:
    """Read ``new`` wherever the rule reads ``old``."""
    return lambda ref: Ref(new, ref.i, ref.j) if ref.step is old else ref


def _transposed(old: Step) -> Remap:
    """Read ``old`` across where the rule reads down (and the reverse)."""
    return lambda ref: Ref(old, ref.j, ref.i) if ref.step is old else ref


def _hidden_as(mask: Step, value: Range) -> Remap:
    """The masked scores read as ``value`` instead of −∞ (the cells the mask's rule hides)."""
    return lambda ref: value if ref.step is mask and mask.hides(ref.i, ref.j) else ref


def _e_alone(src: Step, i: int, j: int) -> Alternative:
    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        x = judge.resolved(base)(Ref(src, i, j))
        if isinstance(x, hn.Hidden) or x.lo > hn.FAR:
            return None  # e^300 is past every answer (1e60 at most): not this slip
        # cut at e^300 for the same reason: e^(10^60) has no bounds of sensible size
        return judge.kit.e_to(Interval(x.lo, min(x.hi, hn.FAR)))

    return alt


def _projection_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Q, K, V: another W, or a row of W read for its column."""
    out: list[tuple[Slip, Alternative]] = []
    X, W = step.args
    for other in ("W_Q", "W_K", "W_V"):
        if other == W.name or not d.has(other, step.head):
            continue
        W_other = d.step(other, step.head)
        if j < len(W_other.cols):
            slip = Slip(
                f"used-{other}",
                f"that is X·{other}: {step.key} is made with {W.key}, not {other}",
            )
            out.append((slip, _at(step, i, j, _swap_step(W, W_other))))
    if j < len(W.rows) and len(W.cols) == len(X.cols):
        slip = Slip(
            "row-of-W",
            f"that uses row {W.rows[j]} of {W.key}; the entry needs column "
            f"{W.cols[j]} (down the column, not across the row)",
        )
        out.append((slip, _at(step, i, j, _transposed(W))))
    return out


def _scores_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The scores: two queries, two keys, the cell across the diagonal, K not turned."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    Q, K = step.args
    col = step.cols[j]
    why = "a score is a query · a key"
    # (cross-attention's scores are N × N_src: a slip reading past either is left out)
    if j < len(Q.rows):
        out.append(
            (
                Slip("query-query", f"that is the query of {row_of} · the query of {col}; {why}"),
                _at(step, i, j, _swap_step(K, Q)),
            )
        )
    if i < len(K.rows):
        out.append(
            (
                Slip("key-key", f"that is the key of {row_of} · the key of {col}; {why}"),
                _at(step, i, j, _swap_step(Q, K)),
            )
        )
    if j < len(step.rows) and i < len(step.cols):
        out.append(
            (
                Slip(
                    "swapped",
                    f"that is the query of {col} · the key of {row_of}: the row is the "
                    "query, the column the key",
                ),
                _at(step, j, i),
            )
        )
    if len(K.rows) == len(Q.cols):  # Q · K (not Kᵀ) has the right shape only here
        slip = Slip(
            "k-not-transposed",
            "that multiplies by K, not Kᵀ: a score is the query's row · the key's row",
        )
        out.append((slip, _at(step, i, j, _transposed(K))))
    return out


def _scale_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The scaled scores: divided by another number than √d_k."""
    out: list[tuple[Slip, Alternative]] = []
    d_k = step.divisor
    lesson = d.lesson
    d_model = len(lesson.X[0])
    d_v = len(lesson.heads[(step.head or 1) - 1].W_V[0])
    by = [(1, "not-scaled"), (d_k * d_k, "divided-by-dk"), (d_model, "dmodel-for-dk")]
    if d_v != d_model:
        by.append((d_v, "dv-for-dk"))
    says = {
        "not-scaled": f"that is the raw score; divide it by √d_k = √{d_k}",
        "divided-by-dk": f"that divides by d_k = {d_k}; divide by √d_k = √{d_k}",
        "dmodel-for-dk": f"that divides by √d_model = √{d_model}; divide by √d_k = √{d_k}",
        "dv-for-dk": f"that divides by √d_v = √{d_v}; divide by √d_k = √{d_k}",
    }
    for n, slip_id in by:
        if n != d_k:
            other = dataclasses.replace(step, divisor=n)
            out.append((Slip(slip_id, says[slip_id]), _at(other, i, j)))
    return out


def _softmax_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """The weights: softmax down the column, e^x alone, of the raw scores, the mask misread."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    (src,) = step.args
    masked = isinstance(src, Mask)
    scaled = src.args[0] if masked else src
    if len(step.rows) == len(step.cols):  # (cross-attention's weights need not be square)
        slip = Slip(
            "softmax-column",
            f"that is softmax down column {step.cols[j]}; softmax runs along the "
            f"row of {row_of}, so the row adds up to 1",
        )
        out.append((slip, _at(step, j, i, _transposed(src))))
    out.append(
        (
            Slip("unnormalised", "that is e^x alone; divide it by the total of e^x over the row"),
            _e_alone(src, i, j),
        )
    )
    if isinstance(scaled, Scale) and scaled.divisor != 1:
        slip = Slip(
            "softmax-of-raw-scores",
            "that is the softmax of the raw scores; take it of the scaled scores (divided by √d_k)",
        )
        out.append((slip, _at(step, i, j, _swap_step(scaled, scaled.args[0]))))
    if masked:
        out += [
            (
                Slip(
                    "inf-as-zero",
                    "that takes −∞ as 0, so each hidden score adds e^0 = 1 to the total; "
                    "e^−∞ is 0: the hidden ones add nothing",
                ),
                _at(step, i, j, _hidden_as(src, Interval(QQ(0)))),
            ),
            (FORGOT_MASK, _at(step, i, j, _swap_step(src, scaled))),
        ]
        if not src.hides(i, j):  # where the mask hides, it gives the true 0
            out.append((MASK_AFTER, _at(step, i, j, _swap_step(src, scaled))))
    return out


def _blend_slips(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Z: another column of V, or a column of the weights."""
    row_of = step.rows[i]
    out: list[tuple[Slip, Alternative]] = []
    W, V = step.args
    for other in range(len(V.cols)):
        if other != j:
            slip = Slip(
                "wrong-V-column",
                f"that blends column {V.cols[other]} of V; {step.key}[{row_of}, "
                f"{step.cols[j]}] blends column {V.cols[j]}",
            )
            out.append((slip, _at(step, i, other)))
    if i < len(W.cols) and len(W.cols) <= len(W.rows):
        slip = Slip(
            "weights-column",
            f"that uses column {W.cols[i]} of the weights; use the row of {row_of}",
        )
        out.append((slip, _at(step, i, j, _transposed(W))))
    return out


SlipList = list[tuple[Slip, Alternative]]
Slips = Callable[[Derivation, Step, int, int], SlipList]
# a product's slips by the part it plays (X · W, Q · Kᵀ or weights · V): its words' ``slips``
PRODUCT_SLIPS: dict[str, Slips] = {
    "projection": _projection_slips,
    "scores": _scores_slips,
    "blend": _blend_slips,
}
# every family of slips the words table (tutor.text.steps) may name
SLIP_RULES: dict[str, Slips] = {**PRODUCT_SLIPS, "scale": _scale_slips, "softmax": _softmax_slips}


def alternatives(d: Derivation, step: Step, i: int, j: int) -> SlipList:
    """The classic slips for cell (i, j), each a computation by a step's own rule: another
    cell, other cells read in place of the right ones, or another divisor (``rule_slips``)."""
    return rule_slips(step, d, i, j)


@functools.singledispatch
def rule_slips(step: Step, d: Derivation, i: int, j: int) -> SlipList:
    """The slip catalogue: the classic slips of cell (i, j) of ``step``, by its rule (one
    registration per rule class; a rule with none says so)."""
    raise NotImplementedError(f"the slip catalogue has no rule for {type(step).__name__}")


@rule_slips.register(Given)
@rule_slips.register(Times)
@rule_slips.register(Mask)
@rule_slips.register(Concat)
@rule_slips.register(Append)
def _no_slips(step: Step, d: Derivation, i: int, j: int) -> SlipList:
    """Given, the explorer's factor, the mask, a concatenation and a cache: no classic slips
    (a copy is judged by what it copies; the mask's slips show in the weights)."""
    return []


@rule_slips.register
def _product(step: Product, d: Derivation, i: int, j: int) -> SlipList:
    """A product: the slips of the part it plays (a decoding row's, of the step it repeats),
    cross-attention's sentences swapped, another group's K or V, the old query."""
    words = steps.STEPS.get(kinds.repeated(step.name))
    family = PRODUCT_SLIPS.get(words.slips) if words and words.slips else None
    out = family(d, step, i, j) if family else []
    if d.lesson.source is not None:
        out += _cross_slips(d, step, i, j)
    return out + _other_group(d, step, i, j) + _old_query(d, step, i, j)


@rule_slips.register
def _scale(step: Scale, d: Derivation, i: int, j: int) -> SlipList:
    return _scale_slips(d, step, i, j)


@rule_slips.register
def _softmax(step: Softmax, d: Derivation, i: int, j: int) -> SlipList:
    return _softmax_slips(d, step, i, j) + _left_out_itself(d, step, i, j)


def _read_as(step: Step, value: Range) -> Remap:
    """Every cell of ``step`` read as ``value``."""
    return lambda ref: value if ref.step is step else ref


def _row_moved(step: Step, by: int) -> Remap:
    """Row i of ``step`` read from row i + by."""
    return lambda ref: Ref(step, ref.i + by, ref.j) if ref.step is step else ref


def _itself(src: Step, i: int, j: int) -> Alternative:
    """The input cell itself, as carried (a rotation left out)."""

    def alt(judge: Judge, base: Lookup, answer: Answer | None = None) -> Range | None:
        return judge.resolved(base)(Ref(src, i, j))

    return alt


_TARGET_KEYS: weakref.WeakKeyDictionary[Derivation, dict[int | None, Step]] = (
    weakref.WeakKeyDictionary()
)


def _target_keys(d: Derivation, head: int | None) -> Step:
    """K as it would be made from the target sentence (X · W_K): the keys a student uses when
    they forget that cross-attention's keys come from the source. Made once per derivation."""
    from tutor.core.engine import matmul

    made = _TARGET_KEYS.setdefault(d, {})
    if head not in made:
        made[head] = matmul("K", d.step("X"), d.step("W_K", head), head=head)
    return made[head]


@rule_slips.register
def _sum(step: Sum, d: Derivation, i: int, j: int) -> SlipList:
    """X = E + P (issue 17): the position left out, or a neighbour's added."""
    out: SlipList = []
    row_of = step.rows[i]
    P = step.args[1]
    out.append(
        (
            Slip(
                "forgot-position",
                f"that is E alone; add the position: P[{row_of}, {step.cols[j]}]",
            ),
            _at(step, i, j, _read_as(P, Interval(QQ(0)))),
        )
    )
    for by in (-1, 1):
        if 0 <= i + by < len(P.rows):
            slip = Slip(
                "wrong-position",
                f"that adds row {P.rows[i + by]} of P (position {i + by}); {row_of} stands "
                f"at position {i}, so it takes row {i + 1} of P",
            )
            out.append((slip, _at(step, i, j, _row_moved(P, by))))
    return out


@rule_slips.register
def _rotate(step: Rotate, d: Derivation, i: int, j: int) -> SlipList:
    """RoPE (issue 17): turned for another position, not turned, or turned backwards."""
    out: SlipList = []
    row_of = step.rows[i]
    (src,) = step.args
    for by, why in ((1, "counting positions from 1"), (-1, "one position too few")):
        if i + by >= 0:
            slip = Slip(
                "rotated-wrong-position",
                f"that turns {row_of} as if it stood at position {i + by} ({why}); "
                f"positions count from 0, so its angle is {i} × θ",
            )
            out.append((slip, _at(dataclasses.replace(step, shift=step.shift + by), i, j)))
    if i + step.shift:
        out += [
            (
                Slip(
                    "not-rotated",
                    f"that is {src.key}[{row_of}, {step.cols[j]}] as it was; turn the pair by "
                    "the angle of its position",
                ),
                _itself(src, i, j),
            ),
            (
                Slip(
                    "rotated-backwards",
                    "that turns the pair the wrong way (sin with the other sign): "
                    "(a, b) → (a·cos − b·sin, a·sin + b·cos)",
                ),
                _at(dataclasses.replace(step, angles=tuple(-a for a in step.angles)), i, j),
            ),
        ]
    return out


def _cross_slips(d: Derivation, step: Product, i: int, j: int) -> SlipList:
    """Cross-attention: keys and values taken from the target sentence, not the source."""
    out: SlipList = []
    row_of = step.rows[i]
    if step.name in ("K", "V") and i < d.lesson.n:
        X_src = step.args[0]
        which = "keys" if step.name == "K" else "values"
        slip = Slip(
            f"target-{which}",
            f"that uses row {d.step('X').rows[i]} of X, the target sentence; the {which} of "
            f"cross-attention come from X_src, the source sentence",
        )
        out.append((slip, _at(step, i, j, _swap_step(X_src, d.step("X")))))
    elif step.name == "scores" and j < d.lesson.n:
        K = step.args[1]
        target = _target_keys(d, step.head)
        slip = Slip(
            "target-keys",
            f"that is the query of {row_of} · the key of {target.rows[j]} from the target "
            "sentence; in cross-attention the keys come from the source (K = X_src · W_K)",
        )
        out.append((slip, _at(step, i, j, _swap_step(K, target))))
    return out


def _other_group(d: Derivation, step: Step, i: int, j: int) -> list[tuple[Slip, Alternative]]:
    """Grouped heads: a head's scores read with another group's keys, or its Z blended from
    another group's values (the K or V a head reads is the one of its own group)."""
    lesson = d.lesson
    if lesson.kv_groups is None or step.head is None:
        return []
    which = {"scores": ("K", 1, "keys"), "Z": ("V", 1, "values")}.get(step.name)
    if which is None:
        return []
    name, arg, what = which
    mine = step.args[arg]
    group = lesson.group_of(step.head)
    out: list[tuple[Slip, Alternative]] = []
    for g in range(1, lesson.kv_groups + 1):
        owner = lesson.group_heads(g)[0]
        if g == group or not d.has(name, owner):
            continue
        theirs = d.step(name, owner)
        if theirs.shape != mine.shape:
            continue
        slip = Slip(
            f"other-group-{name}",
            f"that uses the {what} of group {g} ({theirs.key}); head {step.head} is in group "
            f"{group} and reads {mine.key}",
        )
        out.append((slip, _at(step, i, j, _swap_step(mine, theirs))))
    return out


def _old_query(d: Derivation, step: Product, i: int, j: int) -> SlipList:
    """One decoding step: the new token's score worked with the last cached token's query (the
    old row worked again)."""
    if step.name != "scores_new" or not d.has("Q", step.head):
        return []
    q, _ = step.args
    Q = d.step("Q", step.head)
    last = len(Q.rows) - 1
    slip = Slip(
        "old-query",
        f"that uses the query of {Q.rows[last]} (the last cached token); the new row needs "
        f"the new token's own query, {q.key}",
    )

    def old(ref: Ref) -> Ref:
        return Ref(Q, last, ref.j) if ref.step is q else ref

    return [(slip, _at(step, i, j, old))]


def _left_out_itself(d: Derivation, step: Softmax, i: int, j: int) -> SlipList:
    """One decoding step: the new token's weights shared out over the cache alone (its own key
    left out)."""
    if step.name != "weights_new" or j >= len(step.cols) - 1:
        return []
    (src,) = step.args
    own = len(step.cols) - 1
    slip = Slip(
        "left-out-itself",
        f"that shares the weights over the cached tokens only; the new token "
        f"({step.cols[own]}) also attends to itself, so its own score joins the row",
    )

    def alone(ref: Ref) -> Ref | Range:
        return HIDDEN if ref.step is src and ref.j == own else ref

    return [(slip, _at(step, i, j, alone))]


TRUNCATED = Slip("truncated", "that is cut off, not rounded: round the last digit")
FORGOT_MASK = Slip(
    "forgot-mask",
    "that forgets the causal mask: the scores above the diagonal are −∞, so their weights "
    "are 0 and the rest share all of 1",
)
MASK_AFTER = Slip(
    "mask-after-softmax",
    "that applies the mask after the softmax without sharing out again; mask first, then softmax",
)


def _literal_places(answer: Answer) -> int | None:
    """The fewest decimal places of the decimals written inside an expression (None: none)."""
    found = [len(m[1]) for m in re.finditer(r"\d\.(\d+)", answer.text)]
    return min(found) if found else None


def _places(q: int) -> str:
    return f"{q} place" if q == 1 else f"{q} places"


_JUDGES: weakref.WeakKeyDictionary[Derivation, dict[int, Judge]] = weakref.WeakKeyDictionary()


def judge_for(d: Derivation, places: int | None = None) -> Judge:
    """The judge of ``d`` at ``places`` (the lesson's by default), made once per derivation
    and dropped with it."""
    places = d.lesson.precision if places is None else places
    judges = _JUDGES.setdefault(d, {})
    if places not in judges:
        judges[places] = Judge(d, places)
    return judges[places]
