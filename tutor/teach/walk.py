"""Derivation → Rich renderables for the walk. Returns renderables; never prints.

Colour carries meaning: one colour each for Q, K and V (and the W that makes them), and in
every step the row and column that meet in the worked cell are highlighted in the tables they
come from. All numbers go through ``tutor.text.format``.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Iterator, Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor.core import exact_size, kinds, rules
from tutor.core.engine import Cell, Derivation, Step
from tutor.core.records import record
from tutor.teach import focus as fc
from tutor.teach.colours import COLOURS, PLAIN
from tutor.text import format as fmt
from tutor.text import groups, nextstep, rope, steps, theme, words
from tutor.text import working as wk
from tutor.text.cells import dot_phrase, said, the_row
from tutor.text.plain import joined
from tutor.text.tables import (
    MatrixGrid,
    col_width,
    column_blocks,
    columns_part,
    side_by_side,
)

# layout: columns turns every table on its side (tokens as columns), for the step being drawn:
# set by ``step_section`` around one step, read by ``matrix_tables``. Presentation only: the
# steps themselves stay in rows.
TURNED: contextvars.ContextVar[bool] = contextvars.ContextVar("turned", default=False)

HIGHLIGHT = Style(reverse=True, bold=True)
HEAT_MARK = Style(italic=True)  # a worked cell on the heatmap (its row label is reversed)
ROW_MAX = Style(bold=True, underline=True)  # a row's largest weight, with or without colour
BOLD = Style(bold=True)


@record(frozen=False)
class WalkOptions:
    """What the walk shows."""

    steps: Sequence[str] | None = None  # None: all
    head: int | None = None  # None: every head
    exact: bool = False
    precision: int | None = None
    width: int = 100
    focus: fc.Focus | None = (
        None  # the reader's --cell or --row; None: the lesson's or a lively row
    )


# ---------------------------------------------------------------------------------------------
# tables


def _heat(cell: Cell, low: float, high: float) -> Style:
    """Background by weight, spread over the table's own range; the number is printed too."""
    shade, text = theme.heat_pair(cell.value, low, high)
    return Style(bgcolor=shade, color=text)


def cell_text(step: Step, i: int, j: int, places: int, exact: bool) -> str:
    """A cell as its table shows it; with ``exact``, its exact form (``…`` when too long)."""
    cell = step.cells[i][j]
    text = fmt.shown(cell, step, places)
    if exact and not cell.masked and fmt.is_rounded(cell, places):
        return f"{fmt.exact_form(step, i, j) or ELIDED} ≈ {text}"
    return text


ELIDED = "…"  # an exact form too long to show, in a table (a note under the step says so)


@functools.lru_cache(maxsize=64)  # a step's table is drawn again as the next step's operand
def cell_texts(step: Step, places: int, exact: bool) -> tuple[tuple[str, ...], ...]:
    """Every cell of a step as its table shows it."""
    n, m = step.shape
    return tuple(tuple(cell_text(step, i, j, places, exact) for j in range(m)) for i in range(n))


def elided_note(step: Step, places: int) -> Text | None:
    """The note under a step whose table elides an exact form, else None."""
    n, m = step.shape
    if not any(
        fmt.is_rounded(step.cells[i][j], places) and exact_size.too_long(step, i, j)
        for i in range(n)
        for j in range(m)
    ):
        return None
    return Text(
        f"{ELIDED}: exact form too long to show (more than {exact_size.MAX_EXPS} exponentials "
        f"or a fraction of more than {exact_size.MAX_DIGITS} digits); the decimal is computed "
        "from it all the same",
        style="dim",
    )


def matrix_tables(
    step: Step,
    places: int,
    width: int,
    exact: bool = False,
    rows: Sequence[int] = (),
    cols: Sequence[int] = (),
    cell: tuple[int, int] | None = None,
    transpose_title: bool = False,
    turn: bool | None = None,
) -> list[MatrixGrid]:
    """The step as one or more tables (column blocks) that fit in ``width`` columns.

    ``turn`` (the layout's choice when None) draws it on its side; ``rows``, ``cols`` and
    ``cell`` still name the step's own rows and columns."""
    if TURNED.get() if turn is None else turn:
        name = step.key + ("ᵀ" if transpose_title else "")
        # the texts of the step itself, turned: a turned copy is no longer the product (or
        # softmax) it was, so the guard against exact forms too long to build could not see
        # it (73 s for walk --exact of a 32-token columns lesson, 1 s in rows)
        texts = tuple(zip(*cell_texts(step, places, exact), strict=True))
        step = turned(step)
        rows, cols, cell = cols, rows, (cell[::-1] if cell else None)
        return _tables(step, name, places, width, exact, rows, cols, cell, texts)
    name = step.key + ("ᵀ" if transpose_title else "")
    return _tables(step, name, places, width, exact, rows, cols, cell)


def _tables(
    step: Step,
    name: str,
    places: int,
    width: int,
    exact: bool,
    rows: Sequence[int],
    cols: Sequence[int],
    cell: tuple[int, int] | None,
    texts: tuple[tuple[str, ...], ...] | None = None,
) -> list[MatrixGrid]:
    texts = texts or cell_texts(step, places, exact)
    label_w = col_width([*step.rows, ""]) + 1
    widths = [col_width([h] + [r[j] for r in texts]) for j, h in enumerate(step.cols)]
    blocks = column_blocks(label_w, widths, width)
    colour = COLOURS.get(step.name, PLAIN)
    heat = _lessons_own(step, rules.Softmax)  # the weights as a heatmap (not the decoding row's)
    if heat:
        shown = [c.value for row in step.cells for c in row if not c.masked]
        low, high = min(shown), max(shown)
        # each softmax's largest weight: along the rows, or down the columns of a turned table
        along = step.cells if not TURNED.get() else list(zip(*step.cells, strict=True))
        top = {
            (i, j) if not TURNED.get() else (j, i)
            for i, line in enumerate(along)
            for j in theme.row_maxima([None if c.masked else c.value for c in line])
        }
    title_base = f"{name} ({step.shape[0]} × {step.shape[1]})"
    tables = []
    for block in blocks:
        title = title_base
        if len(blocks) > 1:
            title += columns_part(step.cols, block)
        header = [(step.cols[j], widths[j] - 3) for j in block]
        body = []
        for i, row in enumerate(step.cells):
            label = (step.rows[i], HIGHLIGHT if i in rows else BOLD)
            out = []
            for j in block:
                style: Style | None = None
                if heat and not row[j].masked:
                    style = _heat(row[j], low, high) + (ROW_MAX if (i, j) in top else Style())
                if i in rows or j in cols or cell == (i, j):
                    # on the heatmap, mark the worked cells without hiding their colour
                    style = style + HEAT_MARK if style else HIGHLIGHT
                out.append((texts[i][j], style))
            body.append((label, out))
        tables.append(MatrixGrid(title, label_w - 4, header, body, colour))
    return tables


@functools.lru_cache(maxsize=64)  # the same table is drawn turned again as the next operand
def turned(step: Step) -> Step:
    """The same step turned on its side (layout: columns), keeping its name and head."""
    cells = tuple(zip(*step.cells, strict=True))
    return rules.Given(step.name, step.head, step.cols, step.rows, cells)


def transposed(step: Step) -> Step:
    """The same step turned on its side, for showing Kᵀ."""
    cells = tuple(zip(*step.cells, strict=True))
    return rules.Given(step.name, step.head, step.cols, step.rows, cells)


# ---------------------------------------------------------------------------------------------
# working


def _rounding_note(places: int) -> Text:
    return Text(wk.rounding_note(places), style="dim")


def worked_cell(d: Derivation, step: Step, opts: WalkOptions) -> tuple[int, int]:
    """The cell the walk works in ``step`` (see ``tutor.teach.focus``)."""
    return fc.worked_cell(step, fc.for_head(d, opts.focus, step.head))


@functools.singledispatch
def rule_work(
    step: Step, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """A step's tables and working in the walk, by its rule; ``cell`` is the one worked (the
    focus). A rule with no ``work_`` function of its own: the rows its cell reads of each
    source, the step with the cell marked, and the cell's working."""
    i, j = cell
    parts: list[RenderableType | str] = []
    for k, source in enumerate(step.args):
        parts += [","] if k else []
        rows = [i] if len(source.rows) == len(step.rows) else None
        parts += matrix_tables(source, places, width, exact, rows=rows)
    parts += ["→", *matrix_tables(step, places, width, exact, cell=(i, j))]
    w = wk.working(step, i, j, places)
    out: list[RenderableType] = [side_by_side(parts, width)]
    out.append(
        Text.assemble(
            (w.name, f"bold {COLOURS.get(step.name, PLAIN)}"),
            f" = {w.how}\n    = {w.numbers} {w.result(exact=False)}",
        )
    )
    if w.rounded:
        out.append(_rounding_note(places))
    return out


@rule_work.register(rules.Product)
def work_matmul(
    step: rules.Product, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """Tables left · right = result, with the meeting row and column highlighted, and the sum."""
    left, right = step.args
    i, j = cell
    parts: list[RenderableType | str]
    if TURNED.get():  # Cᵀ = Bᵀ · Aᵀ: the right operand comes first (Kᵀ · Q for the scores)
        if step.transpose:  # (A · Bᵀ)ᵀ = B · Aᵀ: B as it is, which is Bᵀ of the turned B
            first = matrix_tables(
                right, places, width, exact, rows=[j], transpose_title=True, turn=False
            )
        else:
            first = matrix_tables(right, places, width, exact, cols=[j])
        parts = [
            *first,
            "·",
            *matrix_tables(left, places, width, exact, rows=[i]),
            "=",
            *matrix_tables(step, places, width, exact, cell=(i, j)),
        ]
    else:
        if step.transpose:
            right_tables = matrix_tables(
                transposed(right), places, width, exact, cols=[j], transpose_title=True
            )
        else:
            right_tables = matrix_tables(right, places, width, exact, cols=[j])
        parts = [
            *matrix_tables(left, places, width, exact, rows=[i]),
            "·",
            *right_tables,
            "=",
            *matrix_tables(step, places, width, exact, cell=(i, j)),
        ]
    out = [side_by_side(parts, width), *_matmul_working(step, i, j, places)]
    if point := rope.relative_note(step, i, j, places):  # scores of turned Q and K
        out.append(Text(point, style="italic"))
    return out


def _matmul_working(step: Step, i: int, j: int, places: int) -> list[RenderableType]:
    out: list[RenderableType] = []
    # Z = weights · V
    if _lessons_own(step, rules.Product) and isinstance(step.args[0], rules.Softmax):
        out.extend(blend_working(step, i, places))
        return out
    w = wk.working(step, i, j, places)
    how = dot_phrase(step, i, j, turned=True) if TURNED.get() else w.how
    line = Text.assemble(
        (w.name, f"bold {COLOURS.get(step.name, PLAIN)}"),
        f" = {how}\n    = {w.numbers} {w.result(exact=False)}",
    )
    out.append(line)
    if w.rounded:
        out.append(_rounding_note(places))
    return out


def _lessons_own(step: Step, rule: type[Step]) -> bool:
    """A step of the lesson's own pipeline made by ``rule`` (not the decoding row's)."""
    return isinstance(step, rule) and not kinds.BY_NAME[step.name].decoding


def blend_working(step: Step, i: int, places: int) -> list[RenderableType]:
    """Z row i as a blend of the value rows: ``0.16 × [2, 1] + … = [0.49, 1.67]``."""
    b = wk.blend(step, i, places)
    text = Text.assemble(
        (b.name, f"bold {COLOURS['Z']}"), f" = {b.numbers}\n    = [{', '.join(b.shown)}]"
    )
    out: list[RenderableType] = [text]
    note = b.note(places)
    if note:  # the rounding trap is said in italics, the plain rounding remark dimly
        out.append(Text(note, style="italic" if b.hand else "dim"))
    return out


@rule_work.register(rules.Scale)
def work_scale(
    step: rules.Scale, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """scores ÷ √d_k = scaled, what dividing does, and the worked cell."""
    note = wk.scale_note(step, places)
    return _each_cell(step, f"÷ {wk.divisor_text(step)} =", note, places, width, exact, cell)


@rule_work.register(rules.Times)
def work_times(
    step: rules.Times, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """scaled × t = tempered, what multiplying does, and the worked cell."""
    sign = f"× {wk.factor_text(step)} ="
    return _each_cell(step, sign, wk.times_note(step), places, width, exact, cell)


def _each_cell(
    step: Step, sign: str, note: str, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """A step that works every cell from the same cell of its one source, by a constant."""
    (source,) = step.args
    i, j = cell
    parts: list[RenderableType | str] = [
        *matrix_tables(source, places, width, exact, cell=(i, j)),
        sign,
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    w = wk.working(step, i, j, places)
    return [
        side_by_side(parts, width),
        Text(note, style="dim"),
        Text.assemble(
            (w.name, f"bold {COLOURS.get(step.name, PLAIN)}"),
            f" = {w.numbers} {w.result(limit=None)}",
        ),
    ]


def softmax_table(
    step: Step, i: int, places: int, title: str | None = None, key: str = "key"
) -> tuple[Table, list[str]]:
    """The softmax of one row: each score, its e^x, the row total and each share, and the
    notes on what the rounded numbers shown do not say (see ``working.softmax_row``)."""
    r = wk.softmax_row(step, i, places)
    shift = r.power != "x"
    t = Table(
        title=Text(
            title or f"softmax of {the_row(step.rows[i])}", style=f"bold {COLOURS['weights']}"
        ),
        box=box.ROUNDED,
        border_style=COLOURS["weights"],
    )
    # Text, never str: a str cell is parsed for markup and emoji codes, and tokens are the
    # lesson author's (``:smile:`` stays as typed)
    t.add_column(Text(key))
    for head in ("score x", f"e^({r.power})" if shift else "e^x"):
        t.add_column(Text(head), justify="right")
    t.add_column(
        Text(f"share = e^({r.power}) / total" if shift else "share = e^x / total"), justify="right"
    )
    for cells in r.rows:
        t.add_row(*(Text(c) for c in cells))
    t.add_row(Text("total", style="bold"), Text(), Text(r.total, style="bold"))
    return t, list(r.notes)


@rule_work.register(rules.Softmax)
def work_softmax(
    step: rules.Softmax, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    (scaled,) = step.args
    i, j = cell
    title = f"softmax down {the_row(step.rows[i], 'column')}" if TURNED.get() else None
    table, notes = softmax_table(step, i, places, title=title)
    parts: list[RenderableType | str] = [
        *matrix_tables(scaled, places, width, exact, rows=[i]),
        "→",
        *matrix_tables(step, places, width, exact, rows=[i], cols=[j]),
    ]
    out: list[RenderableType] = [side_by_side(parts, width), table]
    out += [Text(n, style="italic") for n in notes]
    out.append(Text("e^x is computed from the exact score and shown rounded.", style="dim"))
    return out


@rule_work.register(rules.Concat)
def work_concat(
    step: rules.Concat, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """The heads' Z tables side by side, then one row of the concatenation spelled out."""
    i = cell[0]
    parts: list[RenderableType | str] = []
    for k, Z in enumerate(step.args):
        parts += ["|"] if k else []
        parts += matrix_tables(Z, places, width, exact, rows=[i])
    parts += ["=", *matrix_tables(step, places, width, exact, rows=[i])]
    name, names, pieces = wk.concat_row(step, i, places)
    line = Text.assemble(
        (name, f"bold {COLOURS['concat']}"),
        f" = [{names}]\n    = [{pieces}]",
    )
    return [side_by_side(parts, width), line]


@rule_work.register(rules.Mask)
def work_mask(
    step: rules.Mask, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    (scaled,) = step.args
    rows = [cell[0]]
    parts: list[RenderableType | str] = [
        *matrix_tables(scaled, places, width, exact, rows=rows),
        "→",
        *matrix_tables(step, places, width, exact, rows=rows),
    ]
    first, last = step.rows[0], step.rows[-1]
    # several decoding steps (masked_new): the first new token sees the cache too
    sees = f"the {step.shift} cached tokens and itself" if step.shift else "only itself"
    return [
        side_by_side(parts, width),
        Text(
            f"{first} sees {sees}; {last} sees every token up to and including itself.",
            style="italic",
        ),
    ]


@rule_work.register(rules.Append)
def work_append(
    step: rules.Append, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """The cache and the new row below it: the cached rows are read, only the new one is worked."""
    cache, new = step.args
    n = len(cache.rows)  # the rows below them are the new tokens' (one, or one per step)
    parts: list[RenderableType | str] = [
        *matrix_tables(cache, places, width, exact),
        "+",
        *matrix_tables(new, places, width, exact, rows=list(range(len(new.rows)))),
        "=",
        *matrix_tables(step, places, width, exact, rows=list(range(n, len(step.rows)))),
    ]
    out: list[RenderableType] = [side_by_side(parts, width), Text(nextstep.reuse_line(step))]
    appended = [s for s in d.steps if isinstance(s, rules.Append) and s.head == step.head]
    if step is appended[-1]:  # the head's caches are made: what they save
        out.append(Text(nextstep.saving_line(d.lesson), style="bold"))
    return out


# -- positions and cross-attention (issue 17) ----------------------------------------------


def why_text(d: Derivation, step: Step) -> str:
    """Why the step is there, in words (cross-attention's K, V and scores say it their way)."""
    return steps.say(step, "why", d.lesson, TURNED.get())


def _pick_position_cell(step: Step) -> tuple[int, int]:
    """A cell worth working for a position step: the second token (position 1), column 1."""
    return (1 if len(step.rows) > 1 else 0), 0


@rule_work.register(rules.Sum)
def work_add(
    step: rules.Sum, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """E + P = X, with one cell added up."""
    E, P = step.args
    i, j = _pick_position_cell(step)
    parts: list[RenderableType | str] = [
        *matrix_tables(E, places, width, exact, cell=(i, j)),
        "+",
        *matrix_tables(P, places, width, exact, cell=(i, j)),
        "=",
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    w = wk.working(step, i, j, places)
    out: list[RenderableType] = [
        side_by_side(parts, width),
        Text.assemble(
            (w.name, f"bold {COLOURS.get('X', PLAIN)}"),
            f" = {w.how} = {w.numbers} {w.result(exact=False)}",
        ),
    ]
    if w.rounded:
        out.append(_rounding_note(places))
    if w.hand_text is not None:
        out.append(Text(wk.hand_note(w.hand_text), style="italic"))
    return out


def work_sinusoidal(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    """The sin/cos table of positions, and one of its cells worked from the formula."""
    d = len(step.cols)
    i, j = _pick_position_cell(step)
    w = wk.working(step, i, j, places)
    return [
        *matrix_tables(step, places, width, exact, cell=(i, j)),
        Text(
            f"P[pos, 2i+1] = sin(pos / 10000^(2i/d_model)) and P[pos, 2i+2] = cos(the same "
            f"angle), counting columns from 1 and positions from 0; d_model = {d}. Each pair of "
            "columns turns at its own speed: the first pair fast, the later ones ever slower.",
        ),
        Text.assemble(
            (w.name, f"bold {COLOURS.get('P', PLAIN)}"),
            f" = {w.how} {w.result(limit=None)}",
        ),
        Text(
            "sin and cos of these angles are not fractions: the engine keeps them exact (such as "
            f"sin(1)) and shows them rounded to {places} places. Working that reads P from "
            "this table uses the rounded numbers; every result is computed from the exact ones.",
            style="dim",
        ),
    ]


@rule_work.register(rules.Rotate)
def work_rotate(
    step: rules.Rotate, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """Q (or K) → Q_rot, with one token's first pair turned term by term."""
    (src,) = step.args
    i, _ = _pick_position_cell(step)
    parts: list[RenderableType | str] = [
        *matrix_tables(src, places, width, exact, rows=[i]),
        "→",
        *matrix_tables(step, places, width, exact, rows=[i]),
    ]
    cos, sin = wk.turn_texts(step, i, 0)
    out: list[RenderableType] = [
        side_by_side(parts, width),
        Text(
            f"{said(step.rows[i])} stands at position {i + step.shift} (positions count from 0), "
            f"so its pair (1, 2) turns by {wk.angle_text(step, i, 0)}: cos = {cos}, sin = {sin}.",
        ),
    ]
    for j in range(min(2, len(step.cols))):
        w = wk.working(step, i, j, places)
        out.append(
            Text.assemble(
                (w.name, f"bold {COLOURS.get(step.name, PLAIN)}"),
                f" = {w.how}\n    = {w.numbers} {w.result(limit=None)}",
            )
        )
    if len(step.cols) > 2:
        more = ", ".join(wk.angle_text(step, i, p) for p in range(1, len(step.cols) // 2))
        out.append(Text(f"The other pairs of {said(step.rows[i])} turn by {more}.", style="dim"))
    if any(fmt.is_rounded(c, places) for c in src.cells[i]):
        out.append(_rounding_note(places))
    return out


@rule_work.register(rules.Given)
def work_given(
    step: rules.Given, d: Derivation, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """A given matrix as it is (a sinusoidal P with one of its cells worked)."""
    # the sin/cos table (P): every number a lesson gives is a fraction
    if not step.whole and any(c.q is None for r in step.cells for c in r):
        return work_sinusoidal(step, places, width, exact)
    return list(matrix_tables(step, places, width, exact))


# ---------------------------------------------------------------------------------------------
# the walk


def shape_line(step: Step) -> str:
    """The shape arithmetic: ``(3 × 4) · (4 × 2) = 3 × 2``."""
    return rule_shape_line(step)


@functools.singledispatch
def rule_shape_line(step: Step) -> str:
    """``shape_line`` by the step's rule: a rule worked cell by cell (or given) has the shape
    it has (on its side when turned); a product and a concatenation say how theirs comes."""
    n, m = step.shape
    return f"{m} × {n}" if TURNED.get() else f"{n} × {m}"


@rule_shape_line.register(rules.Product)
def _(step: rules.Product) -> str:
    n, m = step.shape
    if TURNED.get():  # every shape on its side, and the product's factors swapped
        (a, b), (c, e) = step.args[0].shape, step.args[1].shape
        if step.transpose:
            c, e = e, c
        turned_note = (
            "   (tokens as columns: Kᵀ is K with the tokens as rows)" if step.transpose else ""
        )
        return f"({e} × {c}) · ({b} × {a}) = {m} × {n}" + turned_note
    turned = "   (Kᵀ is K turned on its side)" if step.transpose else ""
    return words.matmul_shape(step) + turned


@rule_shape_line.register(rules.Concat)
def _(step: rules.Concat) -> str:
    n, m = step.shape
    if TURNED.get():
        return f"{m} × {n}"
    h, d_vs = len(step.args), [s.shape[1] for s in step.args]
    if len(set(d_vs)) == 1:
        return f"h × d_v = {h} × {d_vs[0]} = {m} columns, so {n} × {m}"
    return f"{h} heads of {' + '.join(map(str, d_vs))} = {m} columns, so {n} × {m}"


def step_section(d: Derivation, step: Step, opts: WalkOptions) -> RenderableType:
    """One step: heading, why, the instructor's note, shape arithmetic, tables and working
    (turned on their side when the lesson's layout is columns)."""
    token = TURNED.set(d.lesson.layout == "columns")
    try:
        return _step_section(d, step, opts)
    finally:
        TURNED.reset(token)


def _step_section(d: Derivation, step: Step, opts: WalkOptions) -> RenderableType:
    places = opts.precision if opts.precision is not None else d.lesson.precision
    width = opts.width
    colour = COLOURS.get(step.name, PLAIN)
    head = f"head {step.head}: " if step.head else ""
    title = words.step_title(step, d.lesson, TURNED.get())
    parts: list[RenderableType] = [
        Rule(Text(head + title, style=f"bold {colour}"), style=colour, align="left"),
        Text(why_text(d, step)),
    ]
    origin = words.origin(d.lesson, step)
    if origin:
        parts.append(Text(origin, style="italic"))
    note = steps.say(step, "note", d.lesson, TURNED.get())
    if note:
        labels = d.lesson.labels
        a, b = labels[0], labels[min(1, len(labels) - 1)]
        parts.append(Text(note.format(a=a, b=b), style="bold"))
    note = d.lesson.notes.get(step.name)
    if note:
        parts.append(Text.assemble(("What to notice: ", "bold"), (note, "italic")))
    if not step.given:
        parts.append(Text.assemble(("shape: ", "dim"), shape_line(step)))
    parts += rule_work(step, d, places, width, opts.exact, worked_cell(d, step, opts))
    if opts.exact and (note := elided_note(step, places)) is not None:
        parts.append(note)
    return Group(*parts, Text(""))  # the Rule spans the terminal; a blank line closes the step


def header(d: Derivation) -> RenderableType:
    lesson = d.lesson
    body = [joined(words.lesson_facts(lesson))]  # " · " between facts: not a product
    if lesson.description:
        body.insert(0, Text(lesson.description))
    source = "X_src" if lesson.source is not None else "X"  # cross-attention: K, V from X_src
    if lesson.qkv:  # Q, K and V given: the walk starts at the scores
        rows = "Z = V · softmax(Kᵀ·Q / √d_k)" if lesson.layout == "columns" else ""
        formula = rows or "Z = softmax(Q·Kᵀ / √d_k) · V"
        body.append(Text(f"{formula},  with Q, K and V given", style="bold"))
    elif lesson.layout == "columns":
        body.append(
            Text(
                f"tokens as columns: Z = V · softmax(Kᵀ·Q / √d_k),  with Q = W_Q·X, "
                f"K = W_K·{source}, V = W_V·{source}; softmax down each column (every matrix is "
                "the rows layout turned)",
                style="bold",
            )
        )
    else:
        by, b = words.scaled_by(lesson), functools.partial(words.plus_bias, lesson)
        body.append(
            Text(
                f"Z = softmax(Q·Kᵀ{by}) · V,  with Q = X·W_Q{b('b_Q')}, K = {source}·W_K"
                f"{b('b_K')}, V = {source}·W_V{b('b_V')}",
                style="bold",
            )
        )
    if lesson.mask == "causal":
        body.append(Text("before the softmax, scores above the diagonal become −∞", style="bold"))
    body += [Text(line, style="bold") for line in words.extra_formulas(lesson)]
    if lesson.multi_head:
        zs = " | ".join(f"Z{k}" for k in range(1, len(lesson.heads) + 1))
        tail = ",  output = concat · W_O" if lesson.W_O is not None else ""
        tail += " + b_O" if lesson.b_O is not None else ""
        body.append(Text(f"once per head, then concat = [{zs}]{tail}", style="bold"))
    if lesson.next is not None:
        body.append(Text(nextstep.header_line(lesson), style="bold"))
    body += [] if lesson.qkv else kv_table(lesson)
    return Panel(Group(*body), title=Text(lesson.title, style="bold"), title_align="left")


def kv_table(lesson) -> list[RenderableType]:  # type: ignore[no-untyped-def]
    """A lesson with heads: K/V weights and KV cache per token for MHA, GQA and MQA at its
    width (× its layers when given), its own way marked ▸; W_Q counted apart, under it."""
    rows = groups.kv_counts(lesson)
    if not rows:
        return []
    layers = lesson.layers
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column("")
    table.add_column("K/V heads", justify="right")
    table.add_column("W_K+W_V", justify="right")
    table.add_column("cache/token", justify="right")
    if layers is not None:
        table.add_column(f"W_K+W_V ×{layers}", justify="right", no_wrap=True)
        table.add_column(f"cache ×{layers}", justify="right", no_wrap=True)
    for r in rows:
        label = r.name if r.name != "GQA" else f"GQA G={r.kv_heads}"
        cells = [f"▸ {label}" if r.this else f"  {label}", str(r.kv_heads), str(r.weights)]
        cells.append(str(r.cache))
        if layers is not None:
            cells += [str(r.weights * layers), str(r.cache * layers)]
        table.add_row(*cells, style="bold" if r.this else None)
    return [Text(""), table, *(Text(line) for line in groups.kv_lines(lesson))]


def walk(d: Derivation, opts: WalkOptions) -> list[RenderableType]:
    """The whole walk as renderables, in order."""
    return [part for page in walk_pages(d, opts) for part in page]


def walk_pages(d: Derivation, opts: WalkOptions) -> Iterator[list[RenderableType]]:
    """The walk one step per page (the header joins the first), for pausing between steps."""
    return (page for _, page in step_pages(d, opts))


def step_pages(
    d: Derivation, opts: WalkOptions
) -> Iterator[tuple[Step | None, list[RenderableType]]]:
    """Each shown step with its page (the header joins the first; a walk of no step is the
    header alone, with step None), for pausing and predicting between steps.

    Pages are made as they are asked for, so a long walk holds one step's tables at a time.
    """
    page: list[RenderableType] = [header(d)]
    shown_head: int | None = None
    empty = True
    for step in d.steps:
        if opts.steps is not None and step.name not in opts.steps:
            continue
        if opts.head is not None and step.head is not None and step.head != opts.head:
            continue
        if step.head is not None and step.head != shown_head:
            shown_head = step.head
            label = words.head_label(d.lesson, step.head)
            page.append(Rule(Text(label, style="bold reverse"), characters="═", style="default"))
            if (line := groups.reads(d.lesson, step.head)) is not None:
                page.append(Text(line, style="italic"))
        page.append(step_section(d, step, opts))
        yield step, page
        page, empty = [], False
    if empty:
        yield None, page


def softmax_warmup(
    weights: Step, places: int, plain: Step | None = None, times: str = "", effect: str = ""
) -> list[RenderableType]:
    """``attn-tutor softmax``: the working of one row, and with --times (``times``, as text) what
    multiplying did (``effect``, in words)."""
    (x,) = weights.args
    title = "softmax(" + ", ".join(fmt.operand(c, places) for c in x.cells[0]) + ")"
    table, notes = softmax_table(weights, 0, places, title=title, key="#")
    out: list[RenderableType] = []
    if plain is not None:
        inputs = ", ".join(fmt.operand(c, places) for c in plain.args[0].cells[0])
        out.append(Text(f"Each of {inputs} multiplied by {times} first.", style="dim"))
    out += [table, *(Text(n, style="italic") for n in notes)]
    if plain is not None:
        before = ", ".join(fmt.number(c, places) for c in plain.cells[0])
        after = ", ".join(fmt.number(c, places) for c in weights.cells[0])
        out.append(Text(f"Shares before multiplying: {before}; after: {after}. {effect}".rstrip()))
    return out
