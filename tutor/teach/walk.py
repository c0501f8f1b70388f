"""Derivation → Rich renderables for the walk. Returns renderables; never prints.

Colour carries meaning: one colour each for Q, K and V (and the W that makes them), and in
every step the row and column that meet in the worked cell are highlighted in the tables they
come from. All numbers go through ``tutor.text.format``.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor.core import exact_size
from tutor.core.engine import Cell, Derivation, Step
from tutor.teach import focus as fc
from tutor.teach.colours import COLOURS, PLAIN
from tutor.text import format as fmt
from tutor.text import groups, nextstep, theme, words
from tutor.text import working as wk
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

WHY = {
    "X": "Each row describes one token before attention: the same vector whatever sentence the "
    "word sits in. Attention will turn these plain rows into context-aware ones.",
    "W_Q": "Learned in training. Multiplying a token's row by W_Q gives its query: what this "
    "token is looking for.",
    "W_K": "Learned in training. A token's row times W_K gives its key: how it advertises "
    "itself to the other tokens' queries.",
    "W_V": "Learned in training. A token's row times W_V gives its value: what it hands over "
    "when someone attends to it.",
    "Q": "Each entry is a row of X dotted with a column of W_Q. One multiplication makes the "
    "queries of every token at once.",
    "K": "Same recipe as Q, with W_K: a row of X dotted with a column of W_K.",
    "V": "Same recipe again, with W_V. Values may have a different width (d_v) from queries "
    "and keys (d_k).",
    "scores": "Row i, column j is token i's query dotted with token j's key: large when they "
    "point the same way. Multiplying by Kᵀ does every pair in one go.",
    "scaled": "Dot products grow with the length of the vectors, and large inputs make softmax "
    "give nearly everything to one token. Dividing by √d_k keeps them in a calm range.",
    "masked": "A decoder writes left to right, so while predicting a token it must not peek at "
    "the ones after it. Scores above the diagonal become −∞, whose e^x is exactly 0.",
    "weights": "Softmax turns each row into positive weights that add up to 1: take e^x of "
    "each entry and divide by the row's total. The biggest score gets the biggest share.",
    "Z": "Each token's new vector is a blend of every token's value, mixed in the proportions "
    "of its row of weights.",
    "concat": "Each head attended in its own way; their outputs are placed side by side, so "
    "each token's vector gets h × d_v columns (8 heads of 4 columns would give 32).",
    "W_O": "Learned in training: it mixes the concatenated heads back into one vector per token.",
    "output": "The concatenation times W_O: every head's findings blended into one row per token.",
    "x_new": "A decoder writes one token at a time. The next token arrives with its own row; "
    "everything about the earlier tokens was worked already.",
    "q_new": "Only the new token needs a query: the earlier tokens' queries were used when they "
    "arrived and are never needed again.",
    "k_new": "The new token's key, made once and kept: later tokens will read it from the cache.",
    "v_new": "The new token's value, kept in the cache beside its key.",
    "K_cache": "The keys of the earlier tokens are read from the cache, not worked again; the "
    "new key goes below them.",
    "V_cache": "The same for values: the earlier rows come from the cache, the last row is new.",
    "scores_new": "One row of scores: the new query against every cached key and its own. "
    "Nothing is masked: every key in the cache comes before the new token.",
    "scaled_new": "Divided by √d_k, as in the lesson's own scores.",
    "weights_new": "Softmax of the one row: the new token's weights over everything so far.",
    "z_new": "The new token's output: a blend of the cached values and its own.",
    "concat_new": "The heads' new rows side by side.",
    "output_new": "The new row of the concatenation times W_O.",
    "E": "Each row is a token's embedding: the same vector wherever the word stands. Attention "
    "alone cannot tell word order, so a position vector is added to each row.",
    "P": "Row i is the position vector of the i-th place in the sentence (counting from 0), "
    "whatever word stands there.",
    "X_src": "The second sentence, the one attended to: its tokens make the keys and values, "
    "while the queries still come from X.",
    "Q_rot": "Each pair of columns of a query is turned by an angle that grows with the token's "
    "position (position × θ of the pair), so a query knows where its token stands.",
    "K_rot": "The keys are turned the same way. A score of a turned query and a turned key "
    "depends on how far apart the two tokens are, not on where they both are.",
}
WHY_ADDED_X = (
    "Each token's embedding plus the position vector of its place: the same word at two "
    "places now has two different rows, so attention can tell them apart."
)


@dataclass
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
    shade = theme.heat_shade(cell.value, low, high)
    return Style(bgcolor=shade, color=theme.text_on(shade))


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
    heat = step.name == "weights"
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
    return Step(step.name, step.head, step.cols, step.rows, cells)


def transposed(step: Step) -> Step:
    """The same step turned on its side, for showing Kᵀ."""
    cells = tuple(zip(*step.cells, strict=True))
    return Step(step.name, step.head, step.cols, step.rows, cells)


# ---------------------------------------------------------------------------------------------
# working


def _rounding_note(places: int) -> Text:
    return Text(wk.rounding_note(places), style="dim")


def worked_cell(d: Derivation, step: Step, opts: WalkOptions) -> tuple[int, int]:
    """The cell the walk works in ``step`` (see ``tutor.teach.focus``)."""
    return fc.worked_cell(step, fc.for_head(d, opts.focus, step.head))


def work_matmul(
    d: Derivation, step: Step, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    """Tables left · right = result, with the meeting row and column highlighted, and the sum."""
    left, right = step.args
    i, j = cell
    out: list[RenderableType] = []
    if TURNED.get():  # Cᵀ = Bᵀ · Aᵀ: the right operand comes first (Kᵀ · Q for the scores)
        if step.transpose:  # (A · Bᵀ)ᵀ = B · Aᵀ: B as it is, which is Bᵀ of the turned B
            first = matrix_tables(
                right, places, width, exact, rows=[j], transpose_title=True, turn=False
            )
        else:
            first = matrix_tables(right, places, width, exact, cols=[j])
        parts: list[RenderableType | str] = [
            *first,
            "·",
            *matrix_tables(left, places, width, exact, rows=[i]),
            "=",
            *matrix_tables(step, places, width, exact, cell=(i, j)),
        ]
        out.append(side_by_side(parts, width))
        return out + _matmul_working(step, i, j, places)
    if step.transpose:
        right_tables = matrix_tables(
            transposed(right), places, width, exact, cols=[j], transpose_title=True
        )
    else:
        right_tables = matrix_tables(right, places, width, exact, cols=[j])
    op = "·"
    parts = [
        *matrix_tables(left, places, width, exact, rows=[i]),
        op,
        *right_tables,
        "=",
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    out.append(side_by_side(parts, width))
    return out + _matmul_working(step, i, j, places)


def _matmul_working(step: Step, i: int, j: int, places: int) -> list[RenderableType]:
    out: list[RenderableType] = []
    if step.name == "Z":
        out.extend(blend_working(step, i, places))
        return out
    w = wk.working(step, i, j, places)
    line = Text.assemble(
        (w.name, f"bold {COLOURS.get(step.name, PLAIN)}"),
        f" = {w.how}\n    = {w.numbers} {w.result(exact=False)}",
    )
    out.append(line)
    if w.rounded:
        out.append(_rounding_note(places))
    return out


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


def work_scale(
    step: Step, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    (scores,) = step.args
    i, j = cell
    parts: list[RenderableType | str] = [
        *matrix_tables(scores, places, width, exact, cell=(i, j)),
        f"÷ √{step.divisor} =",
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    w = wk.working(step, i, j, places)
    return [
        side_by_side(parts, width),
        Text(wk.scale_note(step.divisor, places), style="dim"),
        Text.assemble(
            (w.name, f"bold {COLOURS['scaled']}"), f" = {w.numbers} {w.result(limit=None)}"
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
            title or f"softmax of the {step.rows[i]} row", style=f"bold {COLOURS['weights']}"
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


def work_softmax(
    step: Step, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    (scaled,) = step.args
    i, j = cell
    title = f"softmax down the {step.rows[i]} column" if TURNED.get() else None
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


def work_concat(
    step: Step, places: int, width: int, exact: bool, cell: tuple[int, int]
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


def work_mask(
    step: Step, places: int, width: int, exact: bool, cell: tuple[int, int]
) -> list[RenderableType]:
    (scaled,) = step.args
    rows = [cell[0]]
    parts: list[RenderableType | str] = [
        *matrix_tables(scaled, places, width, exact, rows=rows),
        "→",
        *matrix_tables(step, places, width, exact, rows=rows),
    ]
    first, last = step.rows[0], step.rows[-1]
    return [
        side_by_side(parts, width),
        Text(
            f"{first} sees only itself; {last} sees every token up to and including itself.",
            style="italic",
        ),
    ]


def work_append(
    d: Derivation, step: Step, places: int, width: int, exact: bool
) -> list[RenderableType]:
    """The cache and the new row below it: the cached rows are read, only the new one is worked."""
    cache, new = step.args
    parts: list[RenderableType | str] = [
        *matrix_tables(cache, places, width, exact),
        "+",
        *matrix_tables(new, places, width, exact, rows=[0]),
        "=",
        *matrix_tables(step, places, width, exact, rows=[len(step.rows) - 1]),
    ]
    out: list[RenderableType] = [side_by_side(parts, width), Text(nextstep.reuse_line(step))]
    if step.name == "V_cache":
        out.append(Text(nextstep.saving_line(d.lesson), style="bold"))
    return out


# -- positions and cross-attention (issue 17) ----------------------------------------------

WHY_SOURCE = {
    "K": "Same recipe as Q, but from the other sentence: a row of X_src dotted with a column "
    "of W_K. Every source token advertises itself to the target's queries.",
    "V": "Same recipe again, with W_V and the rows of X_src: what each source token hands over "
    "to the target token that attends to it.",
    "scores": "Row i, column j is target token i's query dotted with source token j's key: "
    "one row per target token, one column per source token, so the table need not be square.",
}


def why_text(d: Derivation, step: Step) -> str:
    """Why the step is there, in words (cross-attention's K, V and scores say it their way)."""
    if step.op == "add":
        return WHY_ADDED_X
    if d.lesson.source is not None and step.name in WHY_SOURCE:
        return WHY_SOURCE[step.name]
    if TURNED.get() and step.name in WHY_COLUMNS:
        return WHY_COLUMNS[step.name]
    return WHY[step.name]


WHY_COLUMNS = {  # the column layout: each token's weights are a column
    "weights": "Softmax turns each column into positive weights that add up to 1: take e^x of "
    "each entry and divide by the column's total. The biggest score gets the biggest share.",
}


def _pick_position_cell(step: Step) -> tuple[int, int]:
    """A cell worth working for a position step: the second token (position 1), column 1."""
    return (1 if len(step.rows) > 1 else 0), 0


def work_add(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
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


def work_rotate(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
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
            f"{step.rows[i]} stands at position {i + step.shift} (positions count from 0), so "
            f"its pair (1, 2) turns by {wk.angle_text(step, i, 0)}: cos = {cos}, sin = {sin}.",
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
        out.append(Text(f"The other pairs of {step.rows[i]} turn by {more}.", style="dim"))
    if any(fmt.is_rounded(c, places) for c in src.cells[i]):
        out.append(_rounding_note(places))
    return out


def work_plain(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    return list(matrix_tables(step, places, width, exact))


# ---------------------------------------------------------------------------------------------
# the walk


def shape_line(step: Step) -> str:
    """The shape arithmetic: ``(3 × 4) · (4 × 2) = 3 × 2``."""
    n, m = step.shape
    if TURNED.get():  # every shape on its side, and the product's factors swapped
        if step.op == "matmul":
            (a, b), (c, e) = step.args[0].shape, step.args[1].shape
            if step.transpose:
                c, e = e, c
            turned_note = (
                "   (tokens as columns: Kᵀ is K with the tokens as rows)" if step.transpose else ""
            )
            return f"({e} × {c}) · ({b} × {a}) = {m} × {n}" + turned_note
        return f"{m} × {n}"
    if step.op == "matmul":
        turned = "   (Kᵀ is K turned on its side)" if step.transpose else ""
        return words.matmul_shape(step) + turned
    if step.op == "concat":
        h, d_vs = len(step.args), [s.shape[1] for s in step.args]
        if len(set(d_vs)) == 1:
            return f"h × d_v = {h} × {d_vs[0]} = {m} columns, so {n} × {m}"
        return f"{h} heads of {' + '.join(map(str, d_vs))} = {m} columns, so {n} × {m}"
    return f"{n} × {m}"


def step_section(d: Derivation, step: Step, opts: WalkOptions) -> RenderableType:
    """One step: heading, why, the instructor's note, shape arithmetic, tables and working
    (turned on their side when the lesson's layout is columns)."""
    token = TURNED.set(d.lesson.layout == "columns")
    try:
        return _step_section(d, step, opts)
    finally:
        TURNED.reset(token)


COLUMN_NOTES = {  # {a}, {b}: the lesson's first two tokens
    "X": "Layout columns: each token is a column of X (d_model × N). Cells keep their names "
    "from the rows layout: X[{a}, 2] is row 2 of the {a} column here.",
    "scores": "Layout columns: column j holds token j's query against every key, row i is "
    "token i's key; scores[{a}, {b}] (the query of {a}, the key of {b}) sits in column "
    "{a}, row {b}.",
    "Z": "Layout columns: each column of Z is one token's new vector, a blend of the columns of V.",
}


def _title(step: Step) -> str:
    return (TURNED.get() and COLUMN_TITLES.get(step.name)) or words.step_title(step)


COLUMN_TITLES = {  # the formulas of the column layout: each product read the other way round
    "Q": "Q = W_Q · X, the queries",
    "K": "K = W_K · X, the keys",
    "V": "V = W_V · X, the values",
    "scores": "scores = Kᵀ · Q",
    "weights": "weights = softmax down each column",
    "Z": "Z = V · weights",
    "output": "output = W_O · concat",
}


def _step_section(d: Derivation, step: Step, opts: WalkOptions) -> RenderableType:
    places = opts.precision if opts.precision is not None else d.lesson.precision
    width = opts.width
    colour = COLOURS.get(step.name, PLAIN)
    head = f"head {step.head}: " if step.head else ""
    parts: list[RenderableType] = [
        Rule(Text(head + _title(step), style=f"bold {colour}"), style=colour, align="left"),
        Text(why_text(d, step)),
    ]
    origin = words.origin(d.lesson, step)
    if origin:
        parts.append(Text(origin, style="italic"))
    if TURNED.get() and step.name in COLUMN_NOTES:
        labels = d.lesson.labels
        a, b = labels[0], labels[min(1, len(labels) - 1)]
        parts.append(Text(COLUMN_NOTES[step.name].format(a=a, b=b), style="bold"))
    note = d.lesson.notes.get(step.name)
    if note:
        parts.append(Text.assemble(("Instructor's note: ", "bold"), (note, "italic")))
    if step.op != "input":
        parts.append(Text.assemble(("shape: ", "dim"), shape_line(step)))
    cell = worked_cell(d, step, opts)
    if step.op == "matmul":
        parts += work_matmul(d, step, places, width, opts.exact, cell)
    elif step.op == "scale":
        parts += work_scale(step, places, width, opts.exact, cell)
    elif step.op == "softmax":
        parts += work_softmax(step, places, width, opts.exact, cell)
    elif step.op == "mask":
        parts += work_mask(step, places, width, opts.exact, cell)
    elif step.op == "concat":
        parts += work_concat(step, places, width, opts.exact, cell)
    elif step.op == "append":
        parts += work_append(d, step, places, width, opts.exact)
    elif step.op == "add":
        parts += work_add(step, places, width, opts.exact)
    elif step.op == "rotate":
        parts += work_rotate(step, places, width, opts.exact)
    elif step.name == "P" and not step.whole and any(c.q is None for r in step.cells for c in r):
        parts += work_sinusoidal(step, places, width, opts.exact)
    else:
        parts += work_plain(step, places, width, opts.exact)
    if opts.exact and (note := elided_note(step, places)) is not None:
        parts.append(note)
    return Group(*parts, Text(""))  # the Rule spans the terminal; a blank line closes the step


def header(d: Derivation) -> RenderableType:
    lesson = d.lesson
    facts = " · ".join(words.lesson_facts(lesson))
    body = [Text(facts)]
    if lesson.description:
        body.insert(0, Text(lesson.description))
    source = "X_src" if lesson.source is not None else "X"  # cross-attention: K, V from X_src
    if lesson.layout == "columns":
        body.append(
            Text(
                f"tokens as columns: Z = V · softmax(Kᵀ·Q / √d_k),  with Q = W_Q·X, "
                f"K = W_K·{source}, V = W_V·{source}; softmax down each column (every matrix is "
                "the rows layout turned)",
                style="bold",
            )
        )
    else:
        body.append(
            Text(
                f"Z = softmax(Q·Kᵀ / √d_k) · V,  with Q = X·W_Q, K = {source}·W_K, "
                f"V = {source}·W_V",
                style="bold",
            )
        )
    if lesson.mask == "causal":
        body.append(Text("before the softmax, scores above the diagonal become −∞", style="bold"))
    body += [Text(line, style="bold") for line in words.extra_formulas(lesson)]
    if lesson.multi_head:
        zs = " | ".join(f"Z{k}" for k in range(1, len(lesson.heads) + 1))
        tail = ",  output = concat · W_O" if lesson.W_O is not None else ""
        body.append(Text(f"once per head, then concat = [{zs}]{tail}", style="bold"))
    if lesson.next is not None:
        body.append(Text(nextstep.header_line(lesson), style="bold"))
    if (count := groups.parameters(lesson)) is not None:
        body.append(Text(count))
    return Panel(Group(*body), title=Text(lesson.title, style="bold"), title_align="left")


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
