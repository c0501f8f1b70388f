"""Grading a hand-worked answer sheet, with follow-through (error carried forward).

Pure: reads the sheet into data, judges every cell, returns a ``Report``; printing lives in
``tutor.grade_render`` and ``cli.py``. The sheet is read like a lesson (the YAML node tree with
positions, no anchors, aliases or odd tags), and every entry is read by ``numbers.read_answer``:
a small parser of our own, never eval or sympify.

Each cell gets one verdict:

* ``correct``: right for the true value, by the quiz's own judge (``judge.judge_cell``: exact
  forms exactly, decimals to the lesson's precision or from the rounded inputs shown), or right
  for the student's own earlier answers when those were themselves judged correct (so rounding
  the weights to 2 places and computing Z from them is right);
* ``follow-through``: wrong for the true value, but right for the student's own earlier answers,
  at least one of which was wrong. The slip is marked once, where it was made;
* ``wrong``: neither (also an entry that cannot be read as a number);
* ``blank``: left null.

The student's own values stand in for the inputs of a later step wherever they were given and
readable; blank or unreadable inputs are replaced by the true values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import sympy
import yaml

from tutor import format as fmt
from tutor import judge as jd
from tutor.cells import cell_name
from tutor.decimal_comma import comma_note
from tutor.engine import Derivation, Step
from tutor.errors import AnswerError, LessonError, Problem
from tutor.lesson import Checker, compose, describe, read_text
from tutor.numbers import Answer, read_answer
from tutor.worksheet import FILL, fill_steps

VERDICTS = ("correct", "follow-through", "wrong", "blank")
EARNS = ("correct", "follow-through")  # verdicts that earn the point
NULLS = ("", "~", "null", "Null", "NULL")


@dataclass(frozen=True)
class Entry:
    """One cell as the student wrote it."""

    text: str | None  # as written; None when left blank
    answer: Answer | None = None  # None when blank or unreadable

    @property
    def blank(self) -> bool:
        return self.text is None


BLANK = Entry(None)


@dataclass(frozen=True)
class Sheet:
    """A read answer sheet: the student's entries per step key (``Q``, ``head2.Z``...)."""

    path: str
    student: str
    entries: dict[str, tuple[tuple[Entry, ...], ...]]
    problems: tuple[Problem, ...]  # unreadable cells: reported, graded wrong

    def entry(self, step: Step, i: int, j: int) -> Entry:
        rows = self.entries.get(step.key)
        return rows[i][j] if rows is not None else BLANK


# ---------------------------------------------------------------------------------------------
# reading


def read_sheet(path: str | Path, d: Derivation) -> Sheet:
    """Read and check an answer sheet against the lesson; raise ``LessonError`` for a sheet
    that is not one (bad YAML, unknown steps, wrong shapes), listing every problem."""
    shown = str(path)
    root = compose(read_text(path, "answer sheet"), shown)
    c = Checker(shown)
    if root is None:
        raise LessonError.at(shown, 1, 1, "the sheet is empty; make one with attn-tutor export")
    lesson = d.lesson
    steps = fill_steps(d)
    top = ("lesson", "student")
    if lesson.multi_head:
        top += ("heads", *(s.name for s in steps if s.head is None))
    else:
        top += tuple(s.name for s in steps)
    keys = c.mapping(root, top, "the answer sheet") or {}
    student = ""
    if "lesson" in keys:
        node = keys["lesson"][1]
        name = c.scalar(node, "lesson")
        if name is not None and name != lesson.name:
            c.error(
                node, f"this sheet is for lesson {name!r}, but it is graded against {lesson.name!r}"
            )
    if "student" in keys:
        node = keys["student"][1]
        student = "" if _is_null(node) else (c.scalar(node, "student") or "")
    found: dict[str, tuple[yaml.Node, yaml.Node]] = {
        k: v for k, v in keys.items() if k not in ("lesson", "student", "heads")
    }
    scopes: list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]] = [(None, found)]
    if "heads" in keys:
        scopes += _heads(c, keys["heads"][1], d)
    entries: dict[str, tuple[tuple[Entry, ...], ...]] = {}
    unreadable: list[Problem] = []
    for head, mapping in scopes:
        for name, (_, node) in mapping.items():
            step = d.step(name, head)
            rows = _matrix(c, node, step, shown, unreadable)
            if rows is not None:
                entries[step.key] = rows
    if c.problems:
        raise LessonError(c.problems)
    return Sheet(shown, student, entries, tuple(unreadable))


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and not node.style and node.value in NULLS


def _heads(
    c: Checker, node: yaml.Node, d: Derivation
) -> list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]]:
    count = d.head_count
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != count:
        c.error(
            node,
            f"heads should be a list of {count} heads (one mapping of {', '.join(FILL)} per "
            f"head), but found {describe(node)}",
        )
        return []
    out: list[tuple[int | None, dict[str, tuple[yaml.Node, yaml.Node]]]] = []
    for h, item in enumerate(node.value, 1):
        if _is_null(item):  # a head left out entirely: every cell blank
            continue
        keys = c.mapping(item, FILL, f"head {h} of the answer sheet")
        if keys is not None:
            out.append((h, keys))
    return out


def _matrix(
    c: Checker, node: yaml.Node, step: Step, path: str, unreadable: list[Problem]
) -> tuple[tuple[Entry, ...], ...] | None:
    """The student's matrix for one step, checked against the step's shape."""
    n, m = step.shape
    shape = (
        f"this lesson's {step.key} is {n} × {m} (rows {', '.join(step.rows)}; "
        f"columns {', '.join(step.cols)})"
    )
    if _is_null(node):
        return None  # the whole step left out: every cell blank
    if not isinstance(node, yaml.SequenceNode):
        c.error(
            node, f"{step.key} should be a list of {n} rows, but found {describe(node)}; {shape}"
        )
        return None
    if len(node.value) != n:
        c.error(node, f"{step.key} has {len(node.value)} rows; {shape}, so it needs {n} rows")
        return None
    rows = []
    for i, row in enumerate(node.value):
        if not isinstance(row, yaml.SequenceNode) or len(row.value) != m:
            found = (
                f"{len(row.value)} entries" if isinstance(row, yaml.SequenceNode) else describe(row)
            )
            c.error(
                row,
                f"row {i + 1} of {step.key} ({step.rows[i]}) should be a list of {m} entries "
                f"(columns {', '.join(step.cols)}), but found {found}{comma_note(row, m)}",
            )
            return None
        rows.append(
            tuple(
                _entry(x, cell_name(step, i, j), path, unreadable) for j, x in enumerate(row.value)
            )
        )
    return tuple(rows)


def _entry(node: yaml.Node, name: str, path: str, unreadable: list[Problem]) -> Entry:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    if _is_null(node) or (isinstance(node, yaml.ScalarNode) and not node.value.strip()):
        return BLANK
    if not isinstance(node, yaml.ScalarNode):
        why = f"{name}: found {describe(node)}, expected one number; graded wrong"
        unreadable.append(Problem(path, line, col, why, "warning"))
        return Entry(describe(node), None)
    try:
        return Entry(node.value.strip(), read_answer(node.value))
    except AnswerError as err:
        unreadable.append(Problem(path, line, col, f"{name}: {err}; graded wrong", "warning"))
        return Entry(node.value.strip(), None)


# ---------------------------------------------------------------------------------------------
# grading


@dataclass(frozen=True)
class Graded:
    """One cell's verdict and what it was judged against."""

    step: Step
    i: int
    j: int
    entry: Entry
    verdict: str  # one of VERDICTS
    own: sympy.Expr | None = (
        None  # the value the student's own earlier answers give, if they differ
    )
    slip: jd.Slip | None = None  # the misconception a wrong answer matches

    @property
    def name(self) -> str:
        return cell_name(self.step, self.i, self.j)


@dataclass
class Report:
    """Every cell of a sheet, graded."""

    d: Derivation
    sheet: Sheet
    cells: list[Graded] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(g.verdict in EARNS for g in self.cells)

    @property
    def total(self) -> int:
        return len(self.cells)

    def count(self, verdict: str) -> int:
        return sum(g.verdict == verdict for g in self.cells)


def grade(d: Derivation, sheet: Sheet) -> Report:
    """Judge every cell of the sheet, step by step in the order of the computation."""
    places = d.lesson.precision
    verdicts: dict[tuple[str, int, int], str] = {}
    own = own_values(sheet)
    report = Report(d, sheet)
    for step in fill_steps(d):
        for i in range(len(step.rows)):
            for j in range(len(step.cols)):
                g = _grade_cell(d, step, i, j, sheet.entry(step, i, j), own, verdicts, places)
                # an unreadable entry carries nothing forward: its true value stands in
                verdicts[(step.key, i, j)] = g.verdict if g.entry.answer else "blank"
                report.cells.append(g)
    return report


def own_values(sheet: Sheet) -> jd.Value:
    """A ``judge.Value`` lookup: the student's value for a cell where given and readable,
    else the true one; the causal mask (not on the sheet) applied to the student's scaled."""

    def own(step: Step, i: int, j: int) -> sympy.Expr:
        if step.op == "mask":
            return jd.cell_from(step, i, j, own)
        answer = sheet.entry(step, i, j).answer
        return answer.value if answer is not None else jd.true_value(step, i, j)

    return own


def _grade_cell(
    d: Derivation,
    step: Step,
    i: int,
    j: int,
    entry: Entry,
    own: jd.Value,
    verdicts: dict[tuple[str, int, int], str],
    places: int,
) -> Graded:
    if entry.blank:
        return Graded(step, i, j, entry, "blank")
    if entry.answer is None:
        return Graded(step, i, j, entry, "wrong")
    answer = entry.answer
    if jd.judge_cell(step, i, j, answer.value, places, exact_form=answer.exact_form).right:
        return Graded(step, i, j, entry, "correct")
    # what the student's own earlier answers give, and whether any of them was a slip
    used: list[tuple[str, int, int]] = []

    def recording(s: Step, a: int, b: int) -> sympy.Expr:
        if s.op == "mask":
            return jd.cell_from(s, a, b, recording)
        used.append((s.key, a, b))
        return own(s, a, b)

    mine = jd.cell_from(step, i, j, recording)
    carried = any(verdicts.get(k) in ("wrong", "follow-through") for k in used)
    hand = jd.cell_from(step, i, j, own, jd.shown_root(places))  # √d_k rounded, as by hand
    verdict = jd.judge(
        answer.value,
        mine,
        places,
        exact_form=answer.exact_form,
        hand=hand,
        hand_slack=jd.slack(step, places),
    )
    if verdict.right:
        if carried:
            return Graded(step, i, j, entry, "follow-through", own=mine)
        return Graded(step, i, j, entry, "correct")
    slip = jd.misconception(d, step, i, j, answer.value, places, exact_form=answer.exact_form)
    if slip is None and carried:
        slip = jd.misconception(
            d, step, i, j, answer.value, places, exact_form=answer.exact_form, value=own
        )
    return Graded(step, i, j, entry, "wrong", own=mine if carried else None, slip=slip)


# ---------------------------------------------------------------------------------------------
# output as data


def expected_text(g: Graded, places: int) -> str:
    """The true value as the walk shows it."""
    return fmt.shown(g.step.cells[g.i][g.j], g.step, places)


def report_json(report: Report) -> dict[str, object]:
    """The ``grade --json`` contract: lesson, score, total and one object per cell."""
    places = report.d.lesson.precision
    return {
        "lesson": report.d.lesson.name,
        "score": report.score,
        "total": report.total,
        "cells": [
            {
                "step": g.step.name,
                "head": g.step.head,
                "row": g.step.rows[g.i],
                "col": g.step.cols[g.j],
                "given": g.entry.text,
                "expected": expected_text(g, places),
                "verdict": g.verdict,
            }
            for g in report.cells
        ],
    }
