"""A graded sheet → Rich renderables: a table per step with coloured verdicts, what to look at
again (expected value, the slip, the working), and the score. Returns renderables; never prints.

Every verdict has a mark as well as a colour, so the report reads the same under ``NO_COLOR``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal, localcontext

import sympy
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from tutor.assess.grade import EARNS, VERDICTS, Graded, Report, expected_text, points_text
from tutor.core.engine import Cell, Derivation, Ref, Step
from tutor.text import format as fmt
from tutor.text import theme
from tutor.text import working as wk
from tutor.text.tables import MatrixGrid, column_blocks, columns_part, side_by_side
from tutor.text.words import visible

MARKS = {
    "correct": ("✓", theme.GOOD),
    "follow-through": ("↪", theme.ACCENT),
    "wrong": ("✗", f"bold {theme.BAD}"),
    "blank": ("·", "dim"),
}
STYLES = {verdict: Style.parse(style) for verdict, (_, style) in MARKS.items()}
BOLD = Style(bold=True)
DIM = Style(dim=True)  # a cell the mask fills in: given, not graded
MAX_SHOWN = 10  # characters of a long entry shown in a table cell


def _shown_entry(g: Graded) -> str:
    text = visible(g.entry.text or "")  # the student's text: one line, no escape sequences
    return text if cell_len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _balanced(
    blocks: list[list[int]], label_w: int, widths: list[int], width: int
) -> list[list[int]]:
    """The same number of blocks with the columns shared out evenly, when that still fits (so
    no block is a lone column with its title cut short)."""
    columns = [j for block in blocks for j in block]
    size = -(-len(columns) // len(blocks))
    even = [columns[k : k + size] for k in range(0, len(columns), size)]
    if all(label_w + sum(widths[j] for j in block) <= width for block in even):
        return even
    return blocks


def _style(g: Graded | None) -> Style:
    return DIM if g is None else STYLES[g.verdict]


def step_tables(d: Derivation, step: Step, cells: list[Graded], width: int) -> list[MatrixGrid]:
    """The student's entries for one step, each with its verdict mark, in tables that fit; the
    cells not graded are the ones the mask fills in, shown as it fills them."""
    grid = {(g.i, g.j): g for g in cells}
    texts = {k: f"{_shown_entry(g)} {MARKS[g.verdict][0]}".strip() for k, g in grid.items()}
    for i in range(len(step.rows)):
        for j in range(len(step.cols)):
            fill = None if (i, j) in texts else d.fill(step, i, j)
            if fill is not None:  # −∞ or 0 as the mask fills it in (any other cell is graded)
                texts[i, j] = fmt.operand(fill, d.lesson.precision)
    label_w = max(cell_len(r) for r in step.rows) + 4
    widths = [
        max(cell_len(c), *(cell_len(texts[(i, j)]) for i in range(len(step.rows)))) + 3
        for j, c in enumerate(step.cols)
    ]
    earned = sum(g.verdict in EARNS for g in cells)
    title = f"{step.key} ({step.shape[0]} × {step.shape[1]}): {earned}/{len(cells)}"
    blocks = _balanced(column_blocks(label_w, widths, width), label_w, widths, width)
    tables = []
    for block in blocks:
        header = [(step.cols[j], widths[j] - 3) for j in block]
        body = [
            (
                (row, BOLD),
                [(texts[i, j], _style(grid.get((i, j)))) for j in block],
            )
            for i, row in enumerate(step.rows)
        ]
        part = columns_part(step.cols, block) if len(blocks) > 1 else ""
        tables.append(MatrixGrid(title + part, label_w - 4, header, body, "default"))
    return tables


# ---------------------------------------------------------------------------------------------
# working from the student's own answers


@functools.lru_cache(maxsize=4096)
def _num(x: sympy.Expr, places: int) -> str:
    """A value from the student's own answers: a decimal in full as written, else rounded.
    Remembered: an exact form a student wrote (``1/(2 + e^√2)``) stands in every cell of its
    row's next step."""
    if x == -sympy.oo:
        return fmt.NEG_INF_TEXT
    if x.is_Rational and fmt.decimal_places(int(x.q)) is not None:
        # a terminating decimal: every digit the student wrote
        with localcontext(prec=60):
            return fmt.decimal_text(Decimal(int(x.p)) / Decimal(int(x.q)))
    return fmt.expr_rounded(x, places)


class _AsRead:
    """A ``Kit`` for ``Report.own_in`` that only reads the mask and the cache through: each of
    the student's own operands as text, a true cell as its table shows it (its own rounding,
    never an exact form built to be rounded: a Z cell's has 32 e^x)."""

    hidden = fmt.NEG_INF_TEXT

    def __init__(self, places: int) -> None:
        self.places = places

    def given(self, cell: Cell) -> str:
        if cell.masked:
            return fmt.NEG_INF_TEXT
        if cell.q is not None:
            return _num(sympy.Rational(cell.q.numerator, cell.q.denominator), self.places)
        return fmt.decimal_text(fmt.round_half_up(cell, self.places))


def own_working(g: Graded, operand: Callable[[Ref], str], shown: str) -> str:
    """How the cell follows from the student's own earlier answers (``operand``: each as
    text), term by term; ``shown`` is their own value rounded (``Report.own_shown``)."""
    stages = wk.numbers(g.step, g.i, g.j, operand)
    return f"{g.name} = {wk.stages_text(stages)} ≈ {shown}" if stages else f"{g.name} ≈ {shown}"


def lost_working(rep: Report, places: int) -> Callable[[Graded], tuple[str | None, str]]:
    """For a cell that lost its point: what the student's own earlier answers give for it
    (None when it used none of their wrong ones), and its working from those, else from the
    true inputs. One per report: it reads each of the student's own operands once."""
    operand = rep.own_in(_AsRead(places), lambda x: _num(x, places))

    def working(g: Graded) -> tuple[str | None, str]:
        shown = rep.own_shown(g)
        if shown is None:
            return None, true_working(g.step, g.i, g.j, places)
        return shown, own_working(g, operand, shown)

    return working


# ---------------------------------------------------------------------------------------------
# the report


def true_working(step: Step, i: int, j: int, places: int) -> str:
    """The cell's working from the true inputs: the one call to a working-text function."""
    return wk.full_text(step, i, j, places)


def _slip_text(g: Graded) -> str | None:
    """What the slips that explain a wrong answer say: one, or each of a tie."""
    if not g.slips:
        return None
    return "; or ".join(s.message for s in g.slips)


def _look_again(
    g: Graded, places: int, lost: Callable[[Graded], tuple[str | None, str]]
) -> list[RenderableType]:
    expected = expected_text(g, places)
    if g.entry.note is not None:  # could not be read or placed: the note says why
        head = Text.assemble((g.name, f"bold {theme.BAD}"), f": {visible(g.entry.note)}")
    else:
        head = Text.assemble(
            (g.name, f"bold {theme.BAD}"), f": you wrote {visible(g.entry.text or '')}"
        )
    if g.entry.answer is None and g.entry.note is None:
        head.append(" (could not be read as a number)")
    shown, work = lost(g)
    if shown is not None:
        head.append(
            f"; from your own earlier answers it would be {shown} (the true value is {expected})"
        )
    else:
        head.append(f"; expected {expected}")
    out: list[RenderableType] = [head]
    slip = _slip_text(g)
    if slip is not None:
        out.append(Text(f"  {slip}", style=theme.WARN))
    out.append(Text("  " + work.replace("\n", "\n  "), style="dim"))
    return out


def _legend(verdict: str) -> tuple[tuple[str, str], str]:
    mark, style = MARKS[verdict]
    if verdict == "follow-through":
        return (mark, style), f" {verdict} (right from your own answers)   "
    return (mark, style), f" {verdict}" + ("" if verdict == VERDICTS[-1] else "   ")


# the wrong cells of a step worked again in full; past these, a line says how many more (the
# step's table shows every verdict). A whole step of 8 tokens (64) is always worked in full; an
# all-wrong sheet of 4 heads at 32 tokens had 17,021, a 6 MB report and 20 of its 35 CPU s.
LOOK_AGAIN = 64


def report(rep: Report, width: int) -> list[RenderableType]:
    """The whole grade report, in order; the score (and the lesson's points) last."""
    d, sheet = rep.d, rep.sheet
    places = d.lesson.precision
    who = f" by {visible(sheet.student)}" if sheet.student else ""
    out: list[RenderableType] = [
        Text.assemble(
            ("Grading ", "bold"),
            (visible(sheet.path), "bold"),
            f"{who} against {visible(d.lesson.name)} ({d.lesson.title})",
        ),
        Text.assemble(*(part for v in VERDICTS for part in _legend(v))),
    ]
    tables = [t for step, cells in rep.steps() for t in step_tables(d, step, cells, width)]
    out.append(side_by_side(tables, width))  # small steps side by side, as many as fit
    wrong = [(step, [g for g in cells if g.verdict == "wrong"]) for step, cells in rep.steps()]
    if any(cells for _, cells in wrong):
        out.append(Text("\nTo look at again", style="bold"))
        lost = lost_working(rep, places)
        for step, cells in wrong:
            for g in cells[:LOOK_AGAIN]:
                out += _look_again(g, places, lost)
            if len(cells) > LOOK_AGAIN:
                more = fmt.plural(len(cells) - LOOK_AGAIN, "more wrong cell")
                said = f"  … and {more} of {step.key} (marked in its table; --json lists all)"
                out.append(Text(said, style="dim"))
    if sheet.problems:
        out.append(Text("\nEntries that could not be read or placed (graded wrong)", style="bold"))
        out += [Text(visible(str(p))) for p in sheet.problems]
    counts = ", ".join(f"{rep.count(v)} {v}" for v in VERDICTS)
    out.append(Text(""))
    last = [Text(f"{counts}"), Text(f"Score: {rep.score}/{rep.total}", style="bold")]
    if d.lesson.points:  # the lesson's points: per step, shared by the step's cells
        last.append(Text(f"Points: {points_text(rep.points)}/{rep.out_of}", style="bold"))
    out.append(Group(*last))
    return out
