"""A graded sheet as a class keeps it (``Marked``): who it is, each cell's verdict packed into a
byte, the slips named, its flags; not its entries nor its cells.

A class's outputs read a sheet's points step by step, its cells' verdicts and slips (the table,
the gradebooks, the class report, the item analysis, the integrity flags): a ``Marked`` answers
each as a ``grade.Report`` does, from about a byte a cell. The outputs that show what a student
wrote (``--json``, ``--feedback``) ask for the whole report (``Marked.report``): the sheet is
read again, checked to be the file that was graded, and rebuilt from its verdicts, one sheet at
a time. So a class's memory does not grow with its sheets' entries: about 0.12 MB a sheet of
``the-cake`` kept as sheet and report, under a kilobyte kept as marks (issue 39, item 9).

Pure but for ``Marked.report``, which reads the sheet's file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import sympy

from tutor.assess import grade as gr
from tutor.assess.catalogue import Slip
from tutor.assess.sheet import Header, Sheet, fill_steps
from tutor.core.engine import Derivation, Step
from tutor.core.errors import TutorError
from tutor.text.cells import cell_name

if TYPE_CHECKING:
    from tutor.assess.integrity import Flag

VERDICT = {v: k for k, v in enumerate(gr.VERDICTS)}  # a verdict's code: its place in VERDICTS
EARNING = frozenset(VERDICT[v] for v in gr.EARNS)
CARRIED, ATTEMPT, CODE = 8, 16, 7  # a cell's byte: its verdict's code | CARRIED | ATTEMPT


@dataclass(frozen=True, slots=True)
class Head:
    """What a class's outputs say of a sheet: where it is shown, whose it is (a ``Sheet``
    without its entries; ``submissions.bind`` names it as the platform's download does)."""

    path: str
    student: str
    header: Header | None


class Mark(NamedTuple):
    """One cell's verdict, as ``grade.Graded`` gives it, without the student's entry."""

    step: Step
    i: int
    j: int
    verdict: str
    carried: bool
    slips: tuple[Slip, ...]
    attempt: bool

    @property
    def name(self) -> str:
        return cell_name(self.step, self.i, self.j)

    @property
    def points(self) -> int:
        return int(self.verdict in gr.EARNS)

    @property
    def slip(self) -> Slip | None:
        return self.slips[0] if len(self.slips) == 1 else None


class Got(NamedTuple):
    """What grading one sheet hands back to the class (from a worker: a few hundred bytes)."""

    verdicts: bytes  # one byte a cell, in ``layout`` order
    slips: dict[int, tuple[Slip, ...]]  # a cell's place -> its slips, for the cells with some
    attempts: bytes  # per step of ``fill_steps``: 1 when it was read as an attempt
    answers: bytes  # the answers' digest (``answers_digest``): identical sheets share it
    written: int  # the cells with a readable answer
    fits: tuple[int, ...]  # per variant of the class: the cells that fit its numbers


def layout(d: Derivation) -> tuple[tuple[Step, int, int], ...]:
    """Every cell a sheet is asked, step by step in ``fill_steps`` order: the order of a
    report's cells, and of a ``Got``'s bytes. Made once per derivation."""
    got = d.__dict__.get("_marked_layout")
    if got is None:
        got = tuple((step, i, j) for step in fill_steps(d) for i, j in d.asked(step))
        d.__dict__["_marked_layout"] = got
    return got


def got_of(report: gr.Report, variants: Sequence[Derivation] = ()) -> Got:
    """What a class keeps of a graded sheet; ``variants``: the class's variants, whose numbers
    its answers are fitted to (``integrity.fit``), when there are more than one."""
    from tutor.assess.integrity import answers_digest, fit

    cells = report.cells
    verdicts = bytes(VERDICT[g.verdict] | CARRIED * g.carried | ATTEMPT * g.attempt for g in cells)
    slips = {k: g.slips for k, g in enumerate(cells) if g.slips}
    grader = report.usable.__self__  # type: ignore[attr-defined]
    attempts = bytes(grader._attempts[id(step)] for step in fill_steps(report.d))
    written = sum(g.entry.answer is not None for g in cells)
    fits = tuple(fit(v, report) for v in variants) if len(variants) > 1 else ()
    return Got(verdicts, slips, attempts, answers_digest(report), written, fits)


def digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


@dataclass(slots=True, eq=False)
class Marked:
    """One graded sheet of a class: everything its outputs read but the student's entries."""

    d: Derivation
    sheet: Head
    file: str  # the file graded (``sheet.path`` is how it is shown)
    text_digest: bytes  # its text's (``digest``): read again, it must be the same
    got: Got
    flags: list[Flag] = field(default_factory=list)

    @property
    def cells(self) -> list[Mark]:
        slips = self.got.slips
        cells = zip(layout(self.d), self.got.verdicts, strict=True)
        return [
            Mark(
                step,
                i,
                j,
                gr.VERDICTS[b & CODE],
                bool(b & CARRIED),
                slips.get(k, ()),
                bool(b & ATTEMPT),
            )
            for k, ((step, i, j), b) in enumerate(cells)
        ]

    def steps(self) -> list[tuple[Step, list[Mark]]]:
        """The cells step by step, in the order of the computation (``Report.steps``)."""
        by_step: dict[int, tuple[Step, list[Mark]]] = {}
        for g in self.cells:
            by_step.setdefault(id(g.step), (g.step, []))[1].append(g)
        return list(by_step.values())

    def points_by_step(self) -> list[tuple[Step, sympy.Rational, int]]:
        """Each step with the points earned (exact) and the points it is worth
        (``Report.points_by_step``), counted from the verdicts' bytes."""
        right: dict[int, list] = {}  # id(step) -> [step, cells right]
        for (step, _, _), b in zip(layout(self.d), self.got.verdicts, strict=True):
            right.setdefault(id(step), [step, 0])[1] += (b & CODE) in EARNING
        out = []
        for step, n in right.values():
            worth = self.d.step_points(step)
            out.append((step, sympy.Rational(worth * n, len(self.d.asked(step)) or 1), worth))
        return out

    @property
    def points(self) -> sympy.Rational:
        return sum((earned for _, earned, _ in self.points_by_step()), sympy.Integer(0))

    @property
    def out_of(self) -> int:
        return sum(worth for _, _, worth in self.points_by_step())

    def report(self) -> gr.Report:
        """The whole report, as ``grade.grade`` gave it: the sheet read again (it must be the
        file that was graded) and its cells rebuilt from the verdicts; shown as ``sheet`` says,
        with the class's flags."""
        from dataclasses import replace

        sheet = read_again(self.d, self.file, self.text_digest, self.sheet.path, True)
        report = rebuilt(self.d, sheet, self.got)
        report.sheet = replace(
            sheet, path=self.sheet.path, student=self.sheet.student, header=self.sheet.header
        )
        report.flags = list(self.flags)
        return report


def read_again(d: Derivation, file: str, text_digest: bytes, shown: str, force: bool) -> Sheet:
    """The sheet read from its file again, which must be the text read first (``digest``);
    else ``TutorError`` naming it as ``shown``."""
    from tutor.assess.sheet import read_header, read_sheet, sheet_text

    text = sheet_text(file)
    if digest(text) != text_digest:
        raise TutorError(f"{shown} changed while the class was being graded; grade the class again")
    _, root = read_header(file, text)
    return read_sheet(file, d, force, root)


def rebuilt(d: Derivation, sheet: Sheet, got: Got) -> gr.Report:
    """The report ``grade.grade(d, sheet)`` gives, from its verdicts (``got_of``)."""
    grader = gr._Grader(d, sheet, junk=False)  # (read only while grading: that is done)
    report = gr.Report(d, sheet, usable=grader.usable)
    for step, attempt in zip(fill_steps(d), got.attempts, strict=True):
        grader._attempts[id(step)] = bool(attempt)
    for k, ((step, i, j), b) in enumerate(zip(layout(d), got.verdicts, strict=True)):
        entry = sheet.entry(step, i, j)
        g = gr.Graded(step, i, j, entry, gr.VERDICTS[b & CODE], bool(b & CARRIED),
                      got.slips.get(k, ()), bool(b & ATTEMPT))  # fmt: skip
        grader.graded[(id(step), i, j)] = g
        report.cells.append(g)
    return report
