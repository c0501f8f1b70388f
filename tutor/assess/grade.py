"""Grading a hand-worked answer sheet, with follow-through (error carried forward).

Pure: a read sheet (``tutor.assess.sheet``) and a derivation in, a ``Report`` of verdicts out; no
files, no YAML, no printing (``tutor.assess.report`` and ``cli.py`` do those). Every cell is judged
by the quiz's own judge (``tutor.assess.judge``) and gets one verdict:

* ``correct``: honest for the true inputs (a correct rounding of some value careful hand work
  gives from them), or for the student's own earlier answers when those were all correct;
* ``follow-through``: wrong for the true inputs but honest for the student's own, where the
  cell used at least one of the student's own wrong answers from a step that is an attempt.
  The slip is marked once, where it was made. A copy (concat) earns no more than it copies;
* ``wrong``: neither (also an entry that cannot be read as a number);
* ``blank``: left null.

Whether work is an attempt is judged a step at a time, as a teacher reads a page: a step is an
attempt when most of its written cells are right, follow from the student's own answers or are
explained (a named slip, a slip of the pen), and it is not one number written everywhere nor a
copy of a matrix the lesson gives. Every readable wrong cell of an attempted step carries
forward, whatever its slip (±1, ×10, a sign, a 0); a step that is no attempt carries nothing, and
the cells that lean on it are judged against the true values. A cell left blank stands for
honest work from the student's own answers (√d_k or each e^x rounded as they like).

The cells the causal mask fills in (−∞ in ``scaled``, 0 in ``weights``) are given, not asked:
they are not graded and take no points (``Derivation.mask_fills``).
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

import sympy

from tutor.assess import honest as hn
from tutor.assess import judge as jd
from tutor.assess.catalogue import Slip
from tutor.assess.exact import cell_from, exact_value
from tutor.assess.honest import Interval, Range
from tutor.assess.ranges import Lookup, answer_range, written_places, written_range
from tutor.assess.sheet import Entry, Sheet, fill_steps
from tutor.core.engine import Cell, Derivation, Exact, Kit, Ref, Step, T
from tutor.core.rounding import scaled_half_up
from tutor.text import format as fmt
from tutor.text.cells import cell_name

if TYPE_CHECKING:
    from tutor.assess.marked import Marked

VERDICTS = ("correct", "follow-through", "wrong", "blank")
EARNS = ("correct", "follow-through")  # verdicts that earn the point


@dataclass(frozen=True, slots=True)
class Graded:
    """One cell's verdict and what it was judged against."""

    step: Step
    i: int
    j: int
    entry: Entry
    verdict: str  # one of VERDICTS
    carried: bool = False  # made from the student's own wrong (but usable) answers
    slips: tuple[Slip, ...] = ()  # the slips that explain a wrong answer (one, or a tie)
    attempt: bool = False  # a wrong answer that is a recognisable attempt at the cell

    @property
    def name(self) -> str:
        return cell_name(self.step, self.i, self.j)

    @property
    def points(self) -> int:
        return int(self.verdict in EARNS)

    @property
    def slip(self) -> Slip | None:
        """The slip that explains the answer, when exactly one does."""
        return self.slips[0] if len(self.slips) == 1 else None


@dataclass
class Report:
    """Every cell of a sheet, graded."""

    d: Derivation
    sheet: Sheet
    cells: list[Graded] = field(default_factory=list)
    # the student's entry that stands in for a cell's true value in their own working (None:
    # the true value stands), ``_Grader.usable``
    usable: Callable[[Ref], Entry | None] = lambda ref: None
    # a class's integrity flags (``tutor.assess.integrity.Flag``): said, never scored
    flags: list = field(default_factory=list)  # type: ignore[type-arg]

    def own_in(self, kit: Kit[T], written: Callable[[sympy.Expr], T]) -> Callable[[Ref], T]:
        """The student's own values in ``kit``'s numbers: a usable answer as ``written`` makes
        it, else the true value (``kit.given``); the mask and the cache read through. The
        lookup remembers its values (the verdicts are settled): make one, ask it often."""
        memo: dict[tuple[int, int, int], T] = {}

        def value(ref: Ref) -> T:
            key = (id(ref.step), ref.i, ref.j)
            if key in memo:
                return memo[key]
            step = ref.step
            if step.reads_through(ref.i, ref.j):
                got = step.combine(ref.i, ref.j, value, kit)
            elif (entry := self.usable(ref)) is None or entry.answer is None:
                got = kit.given(step.cells[ref.i][ref.j])
            else:
                got = written(entry.answer.value)
            memo[key] = got
            return got

        return value

    def own(self, step: Step, i: int, j: int) -> sympy.Expr:
        """A ``judge.Value``: the student's usable value, else the true one, exactly."""
        return self._own_exact(Ref(step, i, j))

    @functools.cached_property
    def _own_exact(self) -> Callable[[Ref], sympy.Expr]:
        return self.own_in(Exact(), lambda x: x)

    def own_value(self, g: Graded) -> sympy.Expr | None:
        """What the student's own earlier answers give for a cell made from their wrong ones."""
        return cell_from(g.step, g.i, g.j, self.own) if g.carried else None

    def own_shown(self, g: Graded) -> str | None:
        """``own_value`` rounded to the lesson's places, as shown. Worked in enclosures
        (``honest.Enclosure``): the exact forms of the true cells among the student's own
        (a Z cell's: 32 e^x, a tenth of a second to build) are built only when the range
        the enclosures give straddles a rounding boundary."""
        if not g.carried:
            return None
        places = self.d.lesson.precision
        kit, own = self._own_enclosed
        try:
            r = g.step.combine(g.i, g.j, own, kit)
        except ZeroDivisionError:  # a row total whose range holds 0: only exactly
            r = None
        if isinstance(r, Interval):
            lo, hi = (fmt.round_half_up(Cell(x), places) for x in (r.lo, r.hi))
            if lo == hi:
                return fmt.decimal_text(lo)
        return fmt.expr_rounded(self.own_value(g), places)  # type: ignore[arg-type]

    @functools.cached_property
    def _own_enclosed(self) -> tuple[hn.Enclosure, Callable[[Ref], Range]]:
        kit = hn.Enclosure()  # one per report: it remembers its softmax rows
        return kit, self.own_in(kit, answer_range)

    @property
    def score(self) -> int:
        return sum(g.points for g in self.cells)

    @property
    def total(self) -> int:
        return len(self.cells)

    def count(self, verdict: str) -> int:
        return sum(g.verdict == verdict for g in self.cells)

    def step_points(self, step: Step) -> int:
        """What a step is worth (``Derivation.step_points``)."""
        return self.d.step_points(step)

    def cell_points(self, g: Graded) -> sympy.Rational:
        """What one cell is worth: its step's points shared exactly by the cells it asks."""
        return sympy.Rational(self.step_points(g.step), len(self.d.asked(g.step)) or 1)

    def points_by_step(self) -> list[tuple[Step, sympy.Rational, int]]:
        """Each step with the points earned (exact) and the points it is worth: the cells
        earned times what each is worth (``cell_points``, the same for every cell of a step),
        one exact division per step rather than a sum of one per cell."""
        out = []
        for step, cells in self.steps():
            worth = self.step_points(step)
            right = sum(1 for g in cells if g.points)
            out.append((step, sympy.Rational(worth * right, len(self.d.asked(step)) or 1), worth))
        return out

    @property
    def points(self) -> sympy.Rational:
        """The points earned, exactly (a step's points shared by its cells may not be whole)."""
        return sum((earned for _, earned, _ in self.points_by_step()), sympy.Integer(0))

    @property
    def out_of(self) -> int:
        return sum(worth for _, _, worth in self.points_by_step())

    def steps(self) -> list[tuple[Step, list[Graded]]]:
        """The cells step by step, in the order of the computation."""
        by_step: dict[int, tuple[Step, list[Graded]]] = {}
        for g in self.cells:
            by_step.setdefault(id(g.step), (g.step, []))[1].append(g)
        return list(by_step.values())


class _Grader:
    """One sheet's grading: the verdicts so far, and the student's own values from them."""

    def __init__(self, d: Derivation, sheet: Sheet, junk: bool | None = None) -> None:
        """``junk``: whether the sheet is junk, when already known (``junk_sheet``)."""
        self.d, self.sheet = d, sheet
        self.judge = jd.judge_for(d)
        self.graded: dict[tuple[int, int, int], Graded] = {}
        self._own: dict[tuple[int, int, int], Range] = {}  # ``own`` of cells already graded
        self._attempts: dict[int, bool] = {}  # id(step) -> whether the step is an attempt
        self._now: tuple[tuple[int, int], jd.Remembered] | None = None  # ``own_now``
        self.junk = junk_sheet(d, sheet) if junk is None else junk  # the sheet: no attempt

    def usable(self, ref: Ref) -> Entry | None:
        """The student's entry for a cell, when it may stand in for the true value: right, a
        follow-through, or a recognisable attempt; or a number written over one the mask fills
        in (``overwritten``)."""
        g = self.graded.get((id(ref.step), ref.i, ref.j))
        if g is None:
            return self.overwritten(ref)
        if g.entry.answer is None:
            return None
        return g.entry if g.points or g.attempt else None

    def overwritten(self, ref: Ref) -> Entry | None:
        """A weight the mask fills in with 0 (given on the sheet, not graded) that the student
        wrote over with another number, in a step that is an attempt: what their later work
        reads (a forgotten mask, −∞ taken as 0), so it follows from it. The −∞ of the scores
        the mask hides is never read: the mask's rule fills it in whatever is written."""
        fill = self.d.fill(ref.step, ref.i, ref.j)
        if fill is None or fill.masked or not self._attempts.get(id(ref.step)):
            return None
        entry = self.sheet.entry(ref.step, ref.i, ref.j)
        if entry.answer is None or entry.answer.value == exact_value(fill):
            return None
        return entry

    def own(self, ref: Ref) -> Range:
        """A ``Lookup``: the student's usable entry as a range; for a blank, what honest
        work from the student's own answers gives; else (no attempt) the true value."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._own.get(key)
        if got is None:
            g = self.graded.get(key)
            entry = self.usable(ref)
            if entry is not None and entry.answer is not None:
                got = self._written(ref, entry)
            elif g is not None and g.verdict == "blank":
                got = self._worked(ref, self.own)
            else:  # no attempt: the true value, as the quiz's judge carries it
                got = self.judge.carried(ref)
            if g is not None or id(ref.step) in self._attempts:  # settled: no longer changes
                self._own[key] = got
        return got

    def own_now(self) -> jd.Remembered:
        """``own``, for the judge to remember ranges from while no verdict is added (while one
        step's cells are judged: they read earlier steps only)."""
        state = (len(self.graded), len(self._attempts))
        if self._now is None or self._now[0] != state:
            self._now = state, jd.Remembered(self.own)
        return self._now[1]

    def _worked(self, ref: Ref, base: Lookup | None) -> Range:
        """A cell the student did not (usably) write, as honest work gives it from ``base``
        (the true inputs when None), carried as a student may carry it."""
        J = self.judge
        r = J.range(ref.step, ref.i, ref.j, base)
        if not isinstance(r, Interval):
            return J.carried(ref)
        return hn.carried(r, J.places)

    def _written(self, ref: Ref, entry: Entry) -> Range:
        """A usable entry as a range: the value itself when it is exactly what the student's
        own inputs give (an integer score, ``1/3``), else every value it could round from."""
        answer = entry.answer
        assert answer is not None
        if answer.value.is_Rational and ref.step.cells[ref.i][ref.j].q is not None:
            # from the student's own inputs: a right 0.36 worked from their 1.0001 is a rounding
            r = self.judge.range(ref.step, ref.i, ref.j, self.own)
            if isinstance(r, Interval) and r.lo == r.hi == answer.value:
                return Interval(r.lo)
        return written_range(answer, self.judge.places)

    def leaves(self, step: Step, i: int, j: int) -> tuple[Ref, ...]:
        """``leaves``, worked once per derivation (the same for every sheet of a class)."""
        known = _LEAVES.get(self.d)
        if known is None:
            known = _LEAVES.setdefault(self.d, {})
        key = (id(step), i, j)  # the derivation keeps its steps: their ids stay theirs
        got = known.get(key)
        if got is None:
            got = known[key] = tuple(leaves(step, i, j))
        return got

    def wrong_inputs(self, step: Step, i: int, j: int) -> list[Ref]:
        """The student's own wrong (but usable) answers that cell (i, j) is made from."""
        out = []
        for ref in self.leaves(step, i, j):
            g = self.graded.get((id(ref.step), ref.i, ref.j))
            wrong = g.verdict != "correct" if g is not None else self.overwritten(ref)
            if wrong and self.usable(ref) is not None:
                out.append(ref)
        return out

    def cell(self, step: Step, i: int, j: int) -> Graded:
        entry = self.sheet.entry(step, i, j)
        if entry.blank:
            return Graded(step, i, j, entry, "blank")
        answer = entry.answer
        if answer is None:  # unreadable: wrong, and never an input to later cells
            return Graded(step, i, j, entry, "wrong")
        J = self.judge
        verdict = J.judge(step, i, j, answer)
        if verdict.right:
            return Graded(step, i, j, entry, "correct")
        carried = self.wrong_inputs(step, i, j)
        own_now = self.own_now()
        honest_own = J.follows(step, i, j, answer, own_now)
        own = bool(carried)
        if step.copy_of(i, j) is not None:  # a copy earns what the value it copies earned
            (src,) = step.sources(i, j)
            copied = self.graded.get((id(src.step), src.i, src.j))
            if copied is not None and copied.verdict in EARNS and honest_own:
                return Graded(step, i, j, entry, copied.verdict, carried=own)
            attempt = copied is not None and copied.attempt and honest_own
            return Graded(step, i, j, entry, "wrong", carried=own, attempt=attempt)
        if honest_own:
            verdict_ = "follow-through" if carried else "correct"
            return Graded(step, i, j, entry, verdict_, carried=own)
        # a slip on top of the student's own wrong answers is first looked for in their numbers
        slips = J.slips(step, i, j, answer, own_now if carried else None)
        if not slips and any(self.usable(r) for r in self.leaves(step, i, j)):
            slips = J.slips(step, i, j, answer, None if carried else own_now)
        explained = (
            bool(slips)
            or J.pen_slip(step, i, j, answer)
            or (verdict.kind == "fewer" and (written_places(answer) or 0) >= 1)
        )
        slips_ = tuple(slips)
        return Graded(step, i, j, entry, "wrong", carried=own, slips=slips_, attempt=explained)

    def attempted(self, step: Step, cells: list[Graded]) -> bool:
        """Whether a step, read as a whole, is an attempt at it (the module's docstring)."""
        written = [g for g in cells if g.entry.answer is not None]
        if not written or self.junk or copies_a_given(self.d, step, written):
            return False
        if one_number(self.d, self.sheet, step):  # one number everywhere: only if mostly right
            return 2 * sum(g.points for g in written) >= len(written)
        good = sum(bool(g.points or g.attempt) for g in written)
        if 2 * good >= len(written):
            return True
        # a step of one or two cells says little: read it with the sheet's other steps
        return len(written) < 3 and self._mostly_attempts()

    def _mostly_attempts(self) -> bool:
        done = list(self._attempts.values())
        return bool(done) and 2 * sum(done) >= len(done)


_LEAVES: weakref.WeakKeyDictionary[Derivation, dict[tuple[int, int, int], tuple[Ref, ...]]] = (
    weakref.WeakKeyDictionary()
)


def leaves(step: Step, i: int, j: int) -> list[Ref]:
    """The filled cells that cell (i, j) is made from (through the causal mask)."""
    out = []
    for ref in step.sources(i, j):
        if ref.step.reads_through(ref.i, ref.j):  # the mask, the cache: read through
            out += leaves(ref.step, ref.i, ref.j)
        elif not ref.step.given:
            out.append(ref)
    return out


def one_number(d: Derivation, sheet: Sheet, step: Step) -> bool:
    """A whole step written as one repeated number where the true values differ: no attempt."""
    cells = d.asked(step)
    answers = [sheet.entry(step, i, j).answer for i, j in cells]
    values = {a.value for a in answers if a is not None}
    written = sum(a is not None for a in answers)
    truth = {fmt.as_shown(step.cells[i][j], 10) for i, j in cells}
    return written >= 2 and len(values) == 1 and len(truth) > 1


JUNK_SHARE = 0.8  # one number in this share of a sheet's entries (when it is not the truth's)


def junk_sheet(d: Derivation, sheet: Sheet) -> bool:
    """A sheet that is, read as a whole, one number written nearly everywhere (zeros, ones)
    where the true values mostly are not that number: no step of it is an attempt."""
    places = d.lesson.precision
    seen: dict[object, int] = {}
    written = 0
    for step in fill_steps(d):
        for i, j in d.asked(step):
            answer = sheet.entry(step, i, j).answer
            if answer is not None and answer.value.is_Rational:
                value = rounded(answer.value, places)
                seen[value] = seen.get(value, 0) + 1
                written += 1
    if written < 4 or not seen:
        return False
    value, n = max(seen.items(), key=lambda kv: kv[1])
    true_share = _true_share(d)
    cells = sum(true_share.values())
    return n >= JUNK_SHARE * written and true_share.get(value, 0) < cells / 2


_TRUE_SHARE: weakref.WeakKeyDictionary[Derivation, dict[object, int]] = weakref.WeakKeyDictionary()


def _true_share(d: Derivation) -> dict[object, int]:
    """How many asked cells show each number, as the tables show them (once per derivation:
    every sheet of a class asks it)."""
    got = _TRUE_SHARE.get(d)
    if got is None:
        got = {}
        for step in fill_steps(d):
            for i, j in d.asked(step):
                shown = fmt.as_shown(step.cells[i][j], d.lesson.precision)
                got[shown] = got.get(shown, 0) + 1
        _TRUE_SHARE[d] = got
    return got


def rounded(x: sympy.Rational, places: int) -> Decimal:
    """A written rational as a table would show it (``format.as_shown``: the one rounding rule),
    to count which numbers a sheet repeats and which variant's numbers it fits."""
    from sympy.polys.domains import QQ

    return fmt.as_shown(Cell(QQ(int(x.p), int(x.q))), places)


def copies_a_given(d: Derivation, step: Step, written: list[Graded]) -> bool:
    """Written cells that are the lesson's own numbers for another matrix of the step's shape
    (X copied into Q), where the step's true values are not: no attempt. A copy that is the
    rule's own classic slip (X written as E forgets P) is an attempt (``Step.forgets``)."""
    if len(written) < 2:
        return False
    for other in d.steps:
        if not other.given or other.shape != step.shape:
            continue
        if all(g.step.cells[g.i][g.j].q == other.cells[g.i][g.j].q for g in written):
            continue  # the true values are that matrix's too: copying it is right
        if all(
            g.entry.answer is not None
            and g.entry.answer.value.is_Rational
            and other.cells[g.i][g.j].q == g.entry.answer.value
            for g in written
        ):
            return not step.forgets(other)
    return False


def grade(d: Derivation, sheet: Sheet) -> Report:
    """Judge every cell of the sheet, step by step in the order of the computation: each
    step's cells first, then the step as a whole (is it an attempt?), then the next step."""
    grader = _Grader(d, sheet)
    report = Report(d, sheet, usable=grader.usable)
    for step in fill_steps(d):
        cells = named_fairly(grader, [grader.cell(step, i, j) for i, j in d.asked(step)])
        attempt = grader.attempted(step, cells)
        grader._attempts[id(step)] = attempt
        for g in cells:
            if g.verdict == "wrong" and g.entry.answer is not None:
                g = dataclasses.replace(g, attempt=attempt)
            elif not attempt:
                g = dataclasses.replace(g, attempt=False)
            grader.graded[(id(step), g.i, g.j)] = g
            report.cells.append(g)
    return report


# ---------------------------------------------------------------------------------------------
# output as data


def named_fairly(grader: _Grader, cells: list[Graded]) -> list[Graded]:
    """A step's cells with only the slips that explain better than a slip of the pen: none on
    a junk sheet; none on a cell one digit or one unit from the truth (``Judge.near_miss``)
    unless most of the wrong cells of its row, or of the step, show the same slip (two at least).
    Such a cell stays an attempt:
    the pen slip explains it. A value cut off, not rounded (``TRUNCATED``) is one unit away by
    nature, and the judge names it only when it is the right value cut off: it stands."""
    if grader.junk:
        return [dataclasses.replace(g, slips=()) if g.slips else g for g in cells]

    def most(group: list[Graded], name: str) -> bool:
        # a row of one asked cell (the causal mask's first row) is all of itself: the slip
        # stands; a longer row or step needs more than one cell to follow it, and most of its
        # cells that are wrong (a slip changes only some cells: forgetting a bias of [0.5, 0]
        # changes the first column alone, and every cell it changes follows it)
        n = sum(any(s.name == name for s in g.slips) for g in group)
        if len(group) == 1:
            return n == 1
        wrong = sum(g.verdict == "wrong" for g in group)
        return n >= 2 and 2 * n > wrong

    out = []
    for g in cells:
        answer = g.entry.answer
        misconceptions = [s for s in g.slips if s != jd.TRUNCATED]  # a cut-off is a ±1 itself
        if (
            misconceptions
            and answer is not None
            and grader.judge.near_miss(g.step, g.i, g.j, answer)
        ):
            row = [c for c in cells if c.i == g.i]
            if not any(most(row, s.name) or most(cells, s.name) for s in g.slips):
                g = dataclasses.replace(g, slips=(), attempt=True)
        out.append(g)
    return out


def expected_text(g: Graded, places: int) -> str:
    """The true value as the walk shows it."""
    return fmt.shown(g.step.cells[g.i][g.j], g.step, places)


POINT_PLACES = 2  # points shown: 6 of 9 cells of a 10-point step earn 6.67


def points_number(x: sympy.Expr) -> int | float:
    """Points as a JSON or CSV number: whole, or rounded half up to two places."""
    if x.is_Integer:
        return int(x)
    return scaled_half_up(sympy.Rational(x), POINT_PLACES) / 10**POINT_PLACES


def points_text(x: sympy.Expr) -> str:
    """``7``, ``6.67``, ``2.5``: points for a person."""
    return f"{points_number(x):g}"


def percent(report: Report | Marked) -> float:
    """The share of the points earned, in percent, to one decimal place (0 when out of 0)."""
    if not report.out_of:
        return 0.0
    return scaled_half_up(sympy.Rational(report.points) / report.out_of, 3) / 10


def report_json(report: Report) -> dict[str, object]:
    """The ``grade --json`` contract: lesson, the sheet's student, score, total, the points
    (``points:`` of the lesson, else one per cell), one object per cell (its verdict, points and
    the slip that explains a wrong answer) and the totals of each step."""
    places = report.d.lesson.precision
    header = report.sheet.header
    lesson = report.d.lesson
    return {
        "lesson": lesson.name,
        "fingerprint": lesson.fingerprint,
        "variant": lesson.variant.id if lesson.variant else (header.variant if header else None),
        "sheet": report.sheet.path,
        "student": report.sheet.student,
        "student_id": header.student_id if header else "",
        "score": report.score,
        "total": report.total,
        "points": points_number(report.points),
        "out_of": report.out_of,
        "percent": percent(report),
        "flags": [{"kind": f.kind, "message": f.message} for f in report.flags],
        "cells": [
            {
                "step": g.step.name,
                "head": g.step.head,
                "row": g.step.rows[g.i],
                "col": g.step.cols[g.j],
                "given": g.entry.text,
                "expected": expected_text(g, places),
                "verdict": g.verdict,
                "points": g.points,
                "slip": g.slip.name if g.slip else None,
                "slips": [s.name for s in g.slips],
                "note": g.entry.note,  # why an entry could not be read or placed
            }
            for g in report.cells
        ],
        "steps": [
            {
                "step": step.name,
                "head": step.head,
                "score": sum(g.points for g in cells),
                "total": len(cells),
                "points": points_number(earned),
                "out_of": worth,
            }
            for (step, cells), (_, earned, worth) in zip(
                report.steps(), report.points_by_step(), strict=True
            )
        ],
    }
