"""What a class got wrong, as data: per step and per cell the share who earned the point, the
named slips by how many students made them, and the cells most often wrong.

Pure: graded reports in (``tutor.assess.classgrade``), a ``ClassSummary`` out. The renderers
(``tutor.assess.class_view``: terminal tables, Markdown, HTML) read it. Variants of a lesson
share its tokens and shapes, so a cell (``Z[cats, 1]``) means the same place on every sheet.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.assess.grade import percent, points_text
from tutor.assess.items import Item, items, reading
from tutor.assess.marked import Marked

# what each named slip of the judge (``judge.alternatives``) means, said of a student
SLIP_SUMMARY = {
    "used-W_Q": "multiplied X by W_Q where another W belonged",
    "used-W_K": "multiplied X by W_K where another W belonged",
    "used-W_V": "multiplied X by W_V where another W belonged",
    "row-of-W": "went across a row of W instead of down its column",
    "query-query": "took query · query for a score",
    "key-key": "took key · key for a score",
    "swapped": "swapped query and key in a score",
    "k-not-transposed": "multiplied by K instead of Kᵀ",
    "not-scaled": "did not divide by √d_k",
    "divided-by-dk": "divided by d_k instead of √d_k",
    "dmodel-for-dk": "divided by √d_model instead of √d_k",
    "dv-for-dk": "divided by √d_v instead of √d_k",
    "softmax-column": "took the softmax down a column instead of along the row",
    "unnormalised": "wrote e^x without dividing by the row's total",
    "softmax-of-raw-scores": "took the softmax of the raw scores, not the scaled ones",
    "inf-as-zero": "counted the masked −∞ as 0 in the softmax",
    "forgot-mask": "forgot the causal mask",
    "mask-after-softmax": "masked after the softmax without sharing out again",
    "wrong-V-column": "blended the wrong column of V",
    "weights-column": "used a column of the weights instead of a row",
    "truncated": "cut digits off instead of rounding",
    "usual-scale": "divided by √d_k where the lesson divides by its own scale",
    "forgot-bias": "left the bias row out of a product",
    "root-too-early": "rounded √d_k too early, before dividing",
    "typed-scaled": "wrote the score already divided by √d_k",
    "no-exp": "took x / Σx, without e^, for the softmax",
}
HARDEST = 10  # cells listed as most often wrong


def said_of(slip: str) -> str:
    """What a named slip means, said of a student: the summary above, else the reminder's
    first words (every slip the judge names has one: ``slips.REMINDERS``)."""
    from tutor.assess.slips import REMINDERS

    return SLIP_SUMMARY.get(slip) or REMINDERS.get(slip, (slip, ""))[0]


NOT_ASKED = (0, 0, 0)  # a cell the mask fills in: on no sheet, so in no share


@dataclass(frozen=True)
class CellShare:
    """One cell across the class: how many earned its point, of how many sheets."""

    step: str  # the step's key: "Z", "head2.weights"
    row: str
    col: str
    name: str  # "Z[cats, 1]"
    got: int
    of: int
    wrong: int  # answered and wrong (not blank)

    @property
    def share(self) -> float:
        return self.got / self.of if self.of else 0.0

    @property
    def asked(self) -> bool:
        return self.of > 0


@dataclass(frozen=True)
class StepShare:
    """One step across the class: cells earned and points earned."""

    step: str
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    cells: tuple[tuple[CellShare, ...], ...]
    got: int  # cells earned, over every sheet
    of: int  # cells, over every sheet
    points: float  # points earned, over every sheet
    worth: int  # points, over every sheet

    @property
    def share(self) -> float:
        return self.got / self.of if self.of else 0.0


@dataclass(frozen=True)
class SlipCount:
    """A named slip: how many students made it (at least once, where it alone explains the
    answer), in how many cells, and how many more gave an answer it explains as well as
    another slip does (a tie: counted apart, as "perhaps")."""

    id: str
    description: str
    students: int
    cells: int
    perhaps: int = 0
    who: tuple[str, ...] = ()  # the students it surely explains, in the order graded


@dataclass(frozen=True)
class StudentLine:
    """One sheet in the class report: who, the score, the flags, the slips named."""

    student: str
    student_id: str
    sheet: str
    points: str
    out_of: int
    percent: float
    flags: tuple[str, ...]
    slips: tuple[str, ...]


@dataclass(frozen=True)
class ClassSummary:
    lesson: str  # the lesson (or the lesson the variants were made of)
    sheets: int
    steps: tuple[StepShare, ...]
    slips: tuple[SlipCount, ...]  # most frequent first
    hardest: tuple[CellShare, ...]  # least often right first (only cells someone missed)
    mean_percent: float
    students: tuple[StudentLine, ...] = ()  # one per sheet, in the order graded
    set_aside: tuple[tuple[str, str], ...] = ()  # (sheet, reason) of each sheet not graded
    held: tuple[tuple[str, str], ...] = ()  # (who, why) of each grade held (--hold-flagged)
    items: tuple[Item, ...] = ()  # item analysis: each step, then each named slip
    reading: str = ""  # the item analysis in one line for the instructor


def named_slips(r: Marked) -> list[str]:
    """The slips named on a sheet (each cell one slip alone explains), none for a sheet worked
    on another variant's numbers (they say nothing of a misconception)."""
    if any(f.kind == "other-variant" for f in r.flags):
        return []
    return sorted({g.slip.name for g in r.cells if g.slip is not None})


def student_line(r: Marked) -> StudentLine:
    h = r.sheet.header
    named = named_slips(r)
    return StudentLine(
        r.sheet.student,
        h.student_id if h else "",
        r.sheet.path,
        points_text(r.points),
        r.out_of,
        percent(r),
        tuple(f.message for f in r.flags),
        tuple(named),
    )


def _who(r: Marked) -> str:
    h = r.sheet.header
    return r.sheet.student or (h.student_id if h else "") or r.sheet.path


def summarize(
    reports: list[Marked], set_aside: tuple[tuple[str, str], ...] = (), hold: bool = False
) -> ClassSummary:
    """The class's summary; the cells of variants are matched by step, row and column. With
    ``hold``, each flagged sheet is listed as a grade held (who, and the flags' words)."""
    got: dict[tuple[str, int, int], list[int]] = {}  # (step key, i, j) -> [got, of, wrong]
    steps: dict[str, dict] = {}  # step key -> facts
    slip_students: dict[str, int] = {}
    slip_cells: dict[str, int] = {}
    slip_perhaps: dict[str, int] = {}
    slip_who: dict[str, list[str]] = {}
    lesson = ""
    for r in reports:
        lesson = lesson or (r.d.lesson.variant.of if r.d.lesson.variant else "") or r.d.lesson.name
        # worked on another variant's numbers: its slips say nothing of a misconception
        evidence = not any(f.kind == "other-variant" for f in r.flags)
        points = {step.key: (earned, worth) for step, earned, worth in r.points_by_step()}
        made: set[str] = set()
        tied: set[str] = set()
        for step, cells in r.steps():
            facts = steps.setdefault(
                step.key, {"step": step, "got": 0, "of": 0, "points": 0, "worth": 0}
            )
            earned, worth = points[step.key]
            facts["points"] += earned
            facts["worth"] += worth
            for g in cells:
                tally = got.setdefault((step.key, g.i, g.j), [0, 0, 0])
                tally[0] += bool(g.points)
                tally[1] += 1
                tally[2] += g.verdict == "wrong"
                facts["got"] += bool(g.points)
                facts["of"] += 1
                if not evidence:
                    continue
                if g.slip is not None:  # one slip explains it
                    slip_cells[g.slip.name] = slip_cells.get(g.slip.name, 0) + 1
                    made.add(g.slip.name)
                else:  # a tie (or none): each slip of it, perhaps
                    tied.update(sl.name for sl in g.slips)
        for name in made:
            slip_students[name] = slip_students.get(name, 0) + 1
            slip_who.setdefault(name, []).append(_who(r))
        for name in tied - made:
            slip_perhaps[name] = slip_perhaps.get(name, 0) + 1
    step_shares = []
    all_cells = []
    for key, facts in steps.items():
        step = facts["step"]
        grid = tuple(
            tuple(
                CellShare(key, row, col, f"{key}[{row}, {col}]", *got.get((key, i, j), NOT_ASKED))
                for j, col in enumerate(step.cols)
            )
            for i, row in enumerate(step.rows)
        )
        all_cells += [c for line in grid for c in line]
        step_shares.append(
            StepShare(
                key,
                tuple(step.rows),
                tuple(step.cols),
                grid,
                facts["got"],
                facts["of"],
                float(facts["points"]),
                facts["worth"],
            )
        )
    slips = sorted(
        (
            SlipCount(
                name,
                said_of(name),
                slip_students.get(name, 0),
                slip_cells.get(name, 0),
                slip_perhaps.get(name, 0),
                tuple(slip_who.get(name, ())),
            )
            for name in {**slip_students, **slip_perhaps}
        ),
        key=lambda s: (-s.students, -s.cells, s.id),
    )
    missed = [c for c in all_cells if c.asked and c.got < c.of]
    hardest = sorted(missed, key=lambda c: (c.share, -c.wrong))[:HARDEST]
    total_points = sum(float(r.points) for r in reports)
    total_worth = sum(r.out_of for r in reports)
    mean = 100 * total_points / total_worth if total_worth else 0.0
    analysed = items(reports, {sl.id: sl.description for sl in slips if sl.students})
    return ClassSummary(
        lesson,
        len(reports),
        tuple(step_shares),
        tuple(slips),
        tuple(hardest),
        round(mean, 1),
        tuple(student_line(r) for r in reports),
        set_aside,
        tuple(held_lines(reports) if hold else ()),
        tuple(analysed),
        reading(analysed),
    )


def held_lines(reports: list[Marked]) -> list[tuple[str, str]]:
    """``(who, why)`` for each flagged sheet, whose grade ``--hold-flagged`` leaves blank."""
    out = []
    for r in reports:
        if r.flags:
            h = r.sheet.header
            sid = h.student_id if h else ""
            who = (r.sheet.student or r.sheet.path) + (f" (id {sid})" if sid else "")
            out.append((who, "; ".join(f.message for f in r.flags)))
    return out
