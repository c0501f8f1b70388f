"""Grading a hand-worked answer sheet, with follow-through (error carried forward).

Pure: a read sheet (``tutor.assess.sheet``) and a derivation in, a ``Report`` of verdicts out; no
files, no YAML, no printing (``tutor.assess.report`` and ``cli.py`` do those). Every cell is judged
by the quiz's own judge (``tutor.assess.judge``) and gets one verdict:

* ``correct``: honest for the true inputs (a correct rounding of some value careful hand work
  gives from them), or for the student's own earlier answers when those were all correct;
* ``follow-through``: wrong for the true inputs but honest for the student's own, where the
  cell used at least one of the student's own wrong answers and that answer was a recognisable
  attempt at its cell (a slip of the pen, a named slip, or itself a follow-through). The slip
  is marked once, where it was made. A copy (concat) earns no more than the value it copies;
* ``wrong``: neither (also an entry that cannot be read as a number);
* ``blank``: left null.

An entry that is no recognisable attempt (0 for 2, a number from nowhere, a whole step of one
number where the true values differ, an unreadable entry) is treated like a blank: later cells
are judged against the true values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from tutor.assess import judge as jd
from tutor.assess.honest import Range
from tutor.assess.sheet import Entry, Sheet, fill_steps
from tutor.core.engine import Derivation, Ref, Step
from tutor.text import format as fmt
from tutor.text.cells import cell_name

VERDICTS = ("correct", "follow-through", "wrong", "blank")
EARNS = ("correct", "follow-through")  # verdicts that earn the point


@dataclass(frozen=True)
class Graded:
    """One cell's verdict and what it was judged against."""

    step: Step
    i: int
    j: int
    entry: Entry
    verdict: str  # one of VERDICTS
    carried: bool = False  # made from the student's own wrong (but usable) answers
    slips: tuple[jd.Slip, ...] = ()  # the slips that explain a wrong answer (one, or a tie)
    attempt: bool = False  # a wrong answer that is a recognisable attempt at the cell

    @property
    def name(self) -> str:
        return cell_name(self.step, self.i, self.j)

    @property
    def points(self) -> int:
        return int(self.verdict in EARNS)

    @property
    def slip(self) -> jd.Slip | None:
        """The slip that explains the answer, when exactly one does."""
        return self.slips[0] if len(self.slips) == 1 else None


@dataclass
class Report:
    """Every cell of a sheet, graded."""

    d: Derivation
    sheet: Sheet
    cells: list[Graded] = field(default_factory=list)
    own: jd.Value = jd.true_value  # the student's own usable values (for the working shown)

    def own_value(self, g: Graded) -> sympy.Expr | None:
        """What the student's own earlier answers give for a cell made from their wrong ones."""
        return jd.cell_from(g.step, g.i, g.j, self.own) if g.carried else None

    @property
    def score(self) -> int:
        return sum(g.points for g in self.cells)

    @property
    def total(self) -> int:
        return len(self.cells)

    def count(self, verdict: str) -> int:
        return sum(g.verdict == verdict for g in self.cells)

    def step_points(self, step: Step) -> int:
        """What a step is worth: the lesson's ``points:`` for it, else one point per cell."""
        given = self.d.lesson.step_points(step.name)
        return len(step.rows) * len(step.cols) if given is None else given

    def cell_points(self, g: Graded) -> sympy.Rational:
        """What one cell is worth: its step's points shared exactly by the step's cells."""
        return sympy.Rational(self.step_points(g.step), len(g.step.rows) * len(g.step.cols))

    def points_by_step(self) -> list[tuple[Step, sympy.Rational, int]]:
        """Each step with the points earned (exact) and the points it is worth."""
        return [
            (step, sum((self.cell_points(g) for g in cells if g.points), sympy.Integer(0)),
             self.step_points(step))
            for step, cells in self.steps()
        ]  # fmt: skip

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

    def __init__(self, d: Derivation, sheet: Sheet) -> None:
        self.d, self.sheet = d, sheet
        self.judge = jd.judge_for(d)
        self.graded: dict[tuple[int, int, int], Graded] = {}
        self._own: dict[tuple[int, int, int], Range] = {}  # ``own`` of cells already graded

    def usable(self, ref: Ref) -> Entry | None:
        """The student's entry for a cell, when it may stand in for the true value: right, a
        follow-through, or a recognisable attempt."""
        g = self.graded.get((id(ref.step), ref.i, ref.j))
        if g is None or g.entry.answer is None:
            return None
        return g.entry if g.points or g.attempt else None

    def own(self, ref: Ref) -> Range:
        """A ``judge.Lookup``: the student's usable entry as a range, else the true value."""
        key = (id(ref.step), ref.i, ref.j)
        got = self._own.get(key)
        if got is None:
            entry = self.usable(ref)
            if entry is None or entry.answer is None:
                got = self.judge.carried(ref)
            else:
                got = jd.written_range(entry.answer, self.judge.places)
            if key in self.graded:  # its verdict, hence this, no longer changes
                self._own[key] = got
        return got

    def own_exact(self, step: Step, i: int, j: int) -> sympy.Expr:
        """A ``judge.Value``: the student's usable value, else the true one (for the report)."""
        if step.op in ("mask", "append"):
            return jd.cell_from(step, i, j, self.own_exact)
        entry = self.usable(Ref(step, i, j))
        if entry is None or entry.answer is None:
            return jd.true_value(step, i, j)
        return entry.answer.value

    def wrong_inputs(self, step: Step, i: int, j: int) -> list[Ref]:
        """The student's own wrong (but usable) answers that cell (i, j) is made from."""
        out = []
        for ref in leaves(step, i, j):
            g = self.graded.get((id(ref.step), ref.i, ref.j))
            if g is not None and g.verdict != "correct" and self.usable(ref) is not None:
                out.append(ref)
        return out

    def cell(self, step: Step, i: int, j: int, junk_step: bool) -> Graded:
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
        honest_own = J.follows(step, i, j, answer, self.own)
        own = bool(carried)
        if step.op == "concat":  # a copy earns what the value it copies earned, no more
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
        slips = J.slips(step, i, j, answer, self.own if carried else None)
        if not slips and any(self.usable(r) for r in leaves(step, i, j)):
            slips = J.slips(step, i, j, answer, None if carried else self.own)
        attempt = not junk_step and (
            bool(slips)
            or J.pen_slip(step, i, j, answer)
            or (verdict.kind == "fewer" and (jd.written_places(answer) or 0) >= 1)
        )
        return Graded(step, i, j, entry, "wrong", carried=own, slips=tuple(slips), attempt=attempt)


def leaves(step: Step, i: int, j: int) -> list[Ref]:
    """The filled cells that cell (i, j) is made from (through the causal mask)."""
    out = []
    for ref in step.sources(i, j):
        if ref.step.op in ("mask", "append"):  # the cache: read through to its rows
            out += leaves(ref.step, ref.i, ref.j)
        elif ref.step.op != "input":
            out.append(ref)
    return out


def one_number(sheet: Sheet, step: Step) -> bool:
    """A whole step written as one repeated number where the true values differ: no attempt."""
    rows = range(len(step.rows))
    cols = range(len(step.cols))
    values = {
        sheet.entry(step, i, j).answer.value  # type: ignore[union-attr]
        for i in rows
        for j in cols
        if sheet.entry(step, i, j).answer is not None
    }
    written = sum(sheet.entry(step, i, j).answer is not None for i in rows for j in cols)
    truth = {fmt.as_shown(c, 10) for row in step.cells for c in row if not c.masked}
    return written >= 2 and len(values) == 1 and len(truth) > 1


def grade(d: Derivation, sheet: Sheet) -> Report:
    """Judge every cell of the sheet, step by step in the order of the computation."""
    grader = _Grader(d, sheet)
    report = Report(d, sheet, own=grader.own_exact)
    for step in fill_steps(d):
        junk = one_number(sheet, step)
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                g = grader.cell(step, i, j, junk)
                grader.graded[(id(step), i, j)] = g
                report.cells.append(g)
    return report


# ---------------------------------------------------------------------------------------------
# output as data


def expected_text(g: Graded, places: int) -> str:
    """The true value as the walk shows it."""
    return fmt.shown(g.step.cells[g.i][g.j], g.step, places)


POINT_PLACES = 2  # points shown: 6 of 9 cells of a 10-point step earn 6.67


def points_number(x: sympy.Expr) -> int | float:
    """Points as a JSON or CSV number: whole, or rounded half up to two places."""
    if x.is_Integer:
        return int(x)
    n = sympy.Rational(x) * 10**POINT_PLACES
    whole = (abs(n.p) * 2 + n.q) // (2 * n.q)
    return (whole if n >= 0 else -whole) / 10**POINT_PLACES


def points_text(x: sympy.Expr) -> str:
    """``7``, ``6.67``, ``2.5``: points for a person."""
    return f"{points_number(x):g}"


def percent(report: Report) -> float:
    """The share of the points earned, in percent, to one decimal place (0 when out of 0)."""
    if not report.out_of:
        return 0.0
    n = sympy.Rational(report.points) * 1000 / report.out_of
    return ((n.p * 2 + n.q) // (2 * n.q)) / 10  # points are never negative


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
