"""Derivation → Rich renderables for the walk. Returns renderables; never prints.

Colour carries meaning: one colour each for Q, K and V (and the W that makes them), and in
every step the row and column that meet in the worked cell are highlighted in the tables they
come from. All numbers go through ``tutor.format``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from rich import box
from rich.cells import cell_len
from rich.color import Color
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.panel import Panel
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor import exact_size, words
from tutor import format as fmt
from tutor.cells import cell_name, dot_phrase
from tutor.columns import pad
from tutor.engine import Cell, Derivation, Step

COLOURS = {
    "X": "yellow",
    "W_Q": "dodger_blue1",
    "Q": "dodger_blue1",
    "W_K": "green3",
    "K": "green3",
    "W_V": "orchid",
    "V": "orchid",
    "scores": "cyan",
    "scaled": "cyan",
    "masked": "cyan",
    "weights": "dark_orange",
    "Z": "bright_white",
    "concat": "bright_white",
    "W_O": "gold3",
    "output": "gold3",
}
HIGHLIGHT = Style(reverse=True, bold=True)
HEAT_MARK = Style(bold=True, underline=True)
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
}


@dataclass
class WalkOptions:
    """What the walk shows."""

    steps: Sequence[str] | None = None  # None: all
    head: int | None = None  # None: every head
    exact: bool = False
    precision: int | None = None
    width: int = 100


# ---------------------------------------------------------------------------------------------
# tables


def _heat(cell: Cell) -> Style:
    """Background by weight, dark (0) to orange (1); the number is always printed too."""
    w = max(0.0, min(1.0, cell.value))
    low, high = (38, 38, 38), (230, 110, 20)
    rgb = tuple(int(a + (b - a) * w) for a, b in zip(low, high, strict=True))
    return Style(bgcolor=Color.from_rgb(*rgb), color="black" if w > 0.55 else "white")


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


def _col_width(texts: Iterable[str]) -> int:
    return max(cell_len(t) for t in texts) + 3  # padding 1 + 1, border 1


def columns_part(cols: Sequence[str], block: Sequence[int]) -> str:
    """The title's note for one block of a table split by width: ``, columns 1–4``."""
    first, last = cols[block[0]], cols[block[-1]]
    return f", column {first}" if first == last else f", columns {first}–{last}"


def column_blocks(label_width: int, widths: Sequence[int], width: int) -> list[list[int]]:
    """Column indices split into blocks that fit in ``width`` beside the row labels."""
    blocks: list[list[int]] = [[]]
    used = label_width
    for j, w in enumerate(widths):
        if blocks[-1] and used + w > width:
            blocks.append([])
            used = label_width
        blocks[-1].append(j)
        used += w
    return blocks


def matrix_tables(
    step: Step,
    places: int,
    width: int,
    exact: bool = False,
    rows: Sequence[int] = (),
    cols: Sequence[int] = (),
    cell: tuple[int, int] | None = None,
    transpose_title: bool = False,
) -> list[MatrixGrid]:
    """The step as one or more tables (column blocks) that fit in ``width`` columns."""
    texts = cell_texts(step, places, exact)
    label_w = _col_width([*step.rows, ""]) + 1
    widths = [_col_width([h] + [r[j] for r in texts]) for j, h in enumerate(step.cols)]
    blocks = column_blocks(label_w, widths, width)
    colour = COLOURS.get(step.name, "white")
    name = step.key + ("ᵀ" if transpose_title else "")
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
                if step.name == "weights" and not row[j].masked:
                    style = _heat(row[j])
                if i in rows or j in cols or cell == (i, j):
                    # on the heatmap, mark the worked cells without hiding their colour
                    style = style + HEAT_MARK if style else HIGHLIGHT
                out.append((texts[i][j], style))
            body.append((label, out))
        tables.append(MatrixGrid(title, label_w - 4, header, body, colour))
    return tables


class MatrixGrid:
    """A matrix drawn like a rounded Rich table, line by line.

    Rich's Table measures and lays out every cell generically; a 32-token lesson has tens of
    thousands of cells, so matrices are drawn here directly with known column widths.
    """

    def __init__(
        self,
        title: str,
        label_width: int,
        header: list[tuple[str, int]],
        body: list[tuple[tuple[str, Style], list[tuple[str, Style | None]]]],
        colour: str,
    ) -> None:
        self.title, self.label_width, self.header, self.body = title, label_width, header, body
        self.border = Style.parse(colour)
        self.strong = Style.parse(f"bold {colour}")
        table = label_width + 3 + sum(w + 3 for _, w in header) + 1
        self.width = max(table, cell_len(title))  # a long title is never cut off
        self.indent = Segment(" " * ((self.width - table) // 2))  # centre a narrow table
        self.row_width = len(self.indent.text) + table  # a line of the table, with the indent

    def __rich_measure__(self, console: object, options: object) -> Measurement:
        return Measurement(self.width, self.width)

    def _rule(self, left: str, mid: str, right: str) -> tuple[list[Segment], int]:
        widths = [self.label_width] + [w for _, w in self.header]
        rule = left + mid.join("─" * (w + 2) for w in widths) + right
        return [self.indent, Segment(rule, self.border)], self.row_width

    def _lines(self) -> list[tuple[list[Segment], int]]:
        """Each line as plain segments and its width in cells (no padding on the right).

        Made when drawn and not kept: a walk holds every table until it ends, and a 128 × 512
        matrix is half a million segments."""
        # plain segments, not Text: no wrapping or span bookkeeping for thousands of cells
        title_w = cell_len(self.title)
        left = max(0, (self.width - title_w) // 2)
        lines = [([Segment(" " * left), Segment(self.title, self.strong)], left + title_w)]
        lines.append(self._rule("╭", "┬", "╮"))
        bar = Segment("│", self.border)
        head = [self.indent, bar, Segment(" " * (self.label_width + 2)), bar]
        for text, w in self.header:
            head += [Segment(" " + pad(text, w, right=True) + " ", self.strong), bar]
        lines.append((head, self.row_width))
        lines.append(self._rule("├", "┼", "┤"))
        for (label, label_style), cells in self.body:
            line = [self.indent, bar, Segment(" ")]
            line.append(Segment(pad(label, self.label_width), label_style))
            line += [Segment(" "), bar]
            for (text, style), (_, w) in zip(cells, self.header, strict=True):
                line += [Segment(" " + pad(text, w, right=True) + " ", style), bar]
            lines.append((line, self.row_width))
        lines.append(self._rule("╰", "┴", "╯"))
        return lines

    def padded_lines(self) -> list[list[Segment]]:
        """The lines, each filled with blanks to ``self.width`` (for drawing beside others)."""
        return [
            [*line, Segment(" " * (self.width - n))] if n < self.width else line
            for line, n in self._lines()
        ]

    def __rich_console__(self, console: object, options: object) -> Iterable[Segment]:
        for line, _ in self._lines():
            yield from line
            yield Segment.line()


def transposed(step: Step) -> Step:
    """The same step turned on its side, for showing Kᵀ."""
    cells = tuple(zip(*step.cells, strict=True))
    return Step(step.name, step.head, step.cols, step.rows, cells)


@functools.cache
def _probe() -> Console:
    """A wide console that only measures (never prints), made once."""
    return Console(width=10_000, file=None, color_system=None, emoji=False)


class Beside:
    """Renderables in a row, one space apart, each centred vertically on the tallest.

    What ``Table.grid`` with ``vertical="middle"`` draws, without its generic per-cell layout
    (it was half the time of a small walk); the widths are measured once by ``side_by_side``.
    """

    def __init__(self, items: Sequence[RenderableType], widths: Sequence[int]) -> None:
        self.items, self.widths = items, widths

    def __rich_measure__(self, console: object, options: object) -> Measurement:
        total = sum(self.widths) + len(self.widths) - 1
        return Measurement(total, total)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        blocks = [
            item.padded_lines()
            if isinstance(item, MatrixGrid)  # already laid out: no need to measure it again
            else console.render_lines(item, options.update(width=w, height=None), pad=True)
            for item, w in zip(self.items, self.widths, strict=True)
        ]
        height = max((len(b) for b in blocks), default=0)  # nothing beside nothing: no lines
        blank = [[Segment(" " * w)] for w in self.widths]
        gap = Segment(" ")
        for row in range(height):
            for k, lines in enumerate(blocks):
                top = (height - len(lines)) // 2
                if k:
                    yield gap
                inside = 0 <= row - top < len(lines)
                yield from lines[row - top] if inside else blank[k]
            yield Segment.line()


def side_by_side(parts: Sequence[RenderableType | str], width: int) -> RenderableType:
    """Tables in a row with operators between them if they fit, else one under another."""
    items = [Text(p, style="bold") if isinstance(p, str) else p for p in parts]
    probe = _probe()
    lines: list[list[tuple[RenderableType, int]]] = [[]]
    used = 0
    for item in items:
        w = Measurement.get(probe, probe.options, item).maximum
        if lines[-1] and used + w + 1 > width:
            lines.append([])
            used = 0
        lines[-1].append((item, w))
        used += w + 1
    rows = [Beside([item for item, _ in line], [w for _, w in line]) for line in lines]
    return rows[0] if len(rows) == 1 else Group(*rows)


# ---------------------------------------------------------------------------------------------
# working


def value_text(cell: Cell, step: Step, places: int) -> str:
    """``= 2`` or ``≈ 0.49`` depending on whether the shown value is exact."""
    shown = fmt.shown(cell, step, places)
    return f"= {shown}" if not fmt.is_rounded(cell, places) else f"≈ {shown}"


def _rounding_note(places: int) -> Text:
    return Text(
        f"(numbers in the working are shown rounded to {places} places; the result is "
        "computed from the exact values)",
        style="dim",
    )


def _pick_worked_cell(step: Step) -> tuple[int, int]:
    """Which cell to work: the first row's largest score for scores, else the corner."""
    if step.name == "scores":
        row = step.cells[0]
        best = max(range(len(row)), key=lambda j: row[j].approx)
        return 0, best
    return 0, 0


def work_matmul(
    d: Derivation, step: Step, places: int, width: int, exact: bool
) -> list[RenderableType]:
    """Tables left · right = result, with the meeting row and column highlighted, and the sum."""
    left, right = step.args
    i, j = _pick_worked_cell(step)
    out: list[RenderableType] = []
    if step.transpose:
        right_tables = matrix_tables(
            transposed(right), places, width, exact, cols=[j], transpose_title=True
        )
    else:
        right_tables = matrix_tables(right, places, width, exact, cols=[j])
    op = "·"
    parts: list[RenderableType | str] = [
        *matrix_tables(left, places, width, exact, rows=[i]),
        op,
        *right_tables,
        "=",
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    out.append(side_by_side(parts, width))
    sum_text, rounded = fmt.dot_working(step, i, j, places)
    if step.name == "Z":
        out.extend(blend_working(step, i, places))
        return out
    what = dot_phrase(step, i, j)
    cell = step.cells[i][j]
    line = Text.assemble(
        (cell_name(step, i, j), f"bold {COLOURS.get(step.name, 'white')}"),
        f" = {what}\n    = {sum_text} {value_text(cell, step, places)}",
    )
    out.append(line)
    if rounded:
        out.append(_rounding_note(places))
    return out


def blend_working(step: Step, i: int, places: int) -> list[RenderableType]:
    """Z row i as a blend of the value rows: ``0.16 × [2, 1] + … = [0.49, 1.67]``."""
    weights, V = step.args
    row_w = weights.cells[i]
    terms = []
    for k, w in enumerate(row_w):
        if weights.hidden(i, k):
            continue
        vec = ", ".join(fmt.operand(v, places) for v in V.cells[k])
        terms.append(f"{fmt.operand(w, places)} × [{vec}]")
    result = ", ".join(fmt.shown(c, step, places) for c in step.cells[i])
    text = Text.assemble(
        (f"{step.key}[{step.rows[i]}]", f"bold {COLOURS['Z']}"),
        f" = {' + '.join(terms)}\n    = [{result}]",
    )
    out: list[RenderableType] = [text]
    # what a student gets from the rounded weights, and whether it differs
    by_hand = [fmt.rounded_dot(step.terms(i, j), places) for j in range(len(step.cols))]
    exact_rounded = [fmt.round_half_up(c, places) for c in step.cells[i]]
    if by_hand != exact_rounded:
        shown_hand = ", ".join(fmt.decimal_text(x) for x in by_hand)
        out.append(
            Text(
                f"Note: multiplying the rounded weights shown gives [{shown_hand}]. The exact "
                f"weights give [{result}]; the difference comes from rounding the weights to "
                f"{places} places, not from a slip. Carry one more decimal when working by hand.",
                style="italic",
            )
        )
    elif any(fmt.is_rounded(w, places) for w in row_w):
        out.append(_rounding_note(places))
    return out


def work_scale(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    (scores,) = step.args
    i, j = 0, max(range(len(step.cols)), key=lambda j: scores.cells[0][j].approx)
    parts: list[RenderableType | str] = [
        *matrix_tables(scores, places, width, exact, cell=(i, j)),
        f"÷ √{step.divisor} =",
        *matrix_tables(step, places, width, exact, cell=(i, j)),
    ]
    cell = step.cells[i][j]
    d_k = step.divisor
    root = math.isqrt(d_k)
    whole = root * root == d_k  # √4 = 2: the division stays exact
    line = f" = {fmt.operand(scores.cells[i][j], places)} / √{d_k}"
    if whole:
        line += f" = {fmt.operand(scores.cells[i][j], places)} / {root}"
    if fmt.is_rounded(cell, places):
        form = fmt.exact_form(step, i, j)
        line += f" = {form} ≈ " if form else " ≈ "
        line += fmt.shown(cell, step, places)
    else:
        line += f" = {fmt.operand(cell, places)}"
    divisor = (
        f"√{d_k} = {root}, and the scaled scores stay exact"
        if whole
        else f"√{d_k} ≈ {fmt.decimal_text(fmt.sqrt_rounded(d_k, places))}"
    )
    return [
        side_by_side(parts, width),
        Text(f"d_k = {d_k}, so every score is divided by {divisor}.", style="dim"),
        Text.assemble((cell_name(step, i, j), f"bold {COLOURS['scaled']}"), line),
    ]


SHIFT_ABOVE, SHIFT_BELOW = 10, -2  # outside this range the largest x is subtracted first


def softmax_table(
    step: Step, i: int, places: int, title: str | None = None, key: str = "key"
) -> tuple[Table, list[str]]:
    """The softmax of one row: each score, its e^x, the row total and each share.

    When the largest score is big (or very negative), e^x would be unreadable or overflow, so
    the largest score m is subtracted first: e^(x−m) / Σ e^(x−m) is the same share.
    """
    from tutor.engine import MP

    (scaled,) = step.args
    row = scaled.cells[i]
    seen = [k for k, c in enumerate(row) if not c.masked]
    top = max(seen, key=lambda k: row[k].approx)
    shift = not SHIFT_BELOW <= row[top].approx <= SHIFT_ABOVE
    power = "x − m" if shift else "x"
    t = Table(
        title=Text(title or f"softmax of the {step.rows[i]} row", style="bold dark_orange"),
        box=box.ROUNDED,
        border_style="dark_orange",
    )
    # Text, never str: a str cell is parsed for markup and emoji codes, and tokens are the
    # lesson author's (``:smile:`` stays as typed)
    t.add_column(Text(key))
    for head in ("score x", f"e^({power})" if shift else "e^x"):
        t.add_column(Text(head), justify="right")
    t.add_column(
        Text(f"share = e^({power}) / total" if shift else "share = e^x / total"), justify="right"
    )
    m = row[top].approx if shift else 0
    exps = {k: MP.exp(row[k].approx - m) for k in seen}
    total = MP.fsum(exps.values())
    for k in seen:
        e_text = _mp_rounded(exps[k], places)
        share = step.cells[i][k]
        eq = "≈" if fmt.is_rounded(share, places) else "="
        t.add_row(
            Text(step.cols[k]),
            Text(fmt.operand(row[k], places)),
            Text(e_text),
            Text(f"{e_text} / {_mp_rounded(total, places)} {eq} {fmt.number(share, places)}"),
        )
    t.add_row(Text("total", style="bold"), Text(), Text(_mp_rounded(total, places), style="bold"))
    notes = [_share_sum(step, i, places)]
    if shift:
        notes.append(
            f"m = {fmt.operand(row[top], places)} is the largest x. Subtracting it changes no "
            "share (e^(−m) cancels above and below the line) and keeps every e^x readable: "
            "no overflow, no rounding to 0."
        )
    hidden = [step.cols[k] for k, c in enumerate(row) if c.masked]
    if hidden:
        notes.append(
            f"Masked keys ({', '.join(hidden)}) have e^(−∞) = 0, so they get no weight "
            "and are left out of the total."
        )
    return t, notes


def _share_sum(step: Step, i: int, places: int) -> str:
    shares = [fmt.round_half_up(c, places) for c in step.cells[i]]
    total = sum(shares, Decimal(0))
    text = f"The shares add up to {fmt.decimal_text(total)}"
    return text + (" ✓" if total == 1 else "; exactly 1 before rounding ✓")


def _mp_rounded(x, places: int) -> str:  # type: ignore[no-untyped-def]

    return fmt.decimal_text(fmt.round_decimal(fmt.mp_decimal(x), places))


def work_softmax(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    (scaled,) = step.args
    i = _softmax_row_to_work(scaled)
    table, notes = softmax_table(step, i, places)
    parts: list[RenderableType | str] = [
        *matrix_tables(scaled, places, width, exact, rows=[i]),
        "→",
        *matrix_tables(step, places, width, exact, rows=[i]),
    ]
    out: list[RenderableType] = [side_by_side(parts, width), table]
    out += [Text(n, style="italic") for n in notes]
    out.append(Text("e^x is computed from the exact score and shown rounded.", style="dim"))
    return out


def _softmax_row_to_work(scaled: Step) -> int:
    """The row with the most visible keys; under a mask, the fullest row that still hides one."""
    rows = range(len(scaled.rows))
    hiding = [r for r in rows if any(c.masked for c in scaled.cells[r])]
    return max(hiding or rows, key=lambda r: (sum(not c.masked for c in scaled.cells[r]), -r))


def work_concat(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    """The heads' Z tables side by side, then one row of the concatenation spelled out."""
    parts: list[RenderableType | str] = []
    for k, Z in enumerate(step.args):
        parts += ["|"] if k else []
        parts += matrix_tables(Z, places, width, exact, rows=[0])
    parts += ["=", *matrix_tables(step, places, width, exact, rows=[0])]
    pieces = " | ".join(", ".join(fmt.shown(c, Z, places) for c in Z.cells[0]) for Z in step.args)
    names = " | ".join(f"{Z.key}[{step.rows[0]}]" for Z in step.args)
    line = Text.assemble(
        (f"{step.key}[{step.rows[0]}]", f"bold {COLOURS['concat']}"),
        f" = [{names}]\n    = [{pieces}]",
    )
    return [side_by_side(parts, width), line]


def work_mask(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    (scaled,) = step.args
    parts: list[RenderableType | str] = [
        *matrix_tables(scaled, places, width, exact),
        "→",
        *matrix_tables(step, places, width, exact),
    ]
    first, last = step.rows[0], step.rows[-1]
    return [
        side_by_side(parts, width),
        Text(
            f"{first} sees only itself; {last} sees every token up to and including itself.",
            style="italic",
        ),
    ]


def work_plain(step: Step, places: int, width: int, exact: bool) -> list[RenderableType]:
    return list(matrix_tables(step, places, width, exact))


# ---------------------------------------------------------------------------------------------
# the walk


def shape_line(step: Step) -> str:
    """The shape arithmetic: ``(3 × 4) · (4 × 2) = 3 × 2``."""
    n, m = step.shape
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
    """One step: heading, why, the instructor's note, shape arithmetic, tables and working."""
    places = opts.precision if opts.precision is not None else d.lesson.precision
    width = opts.width
    colour = COLOURS.get(step.name, "white")
    head = f"head {step.head}: " if step.head else ""
    parts: list[RenderableType] = [
        Rule(
            Text(head + words.TITLES[step.name], style=f"bold {colour}"), style=colour, align="left"
        ),
        Text(WHY[step.name]),
    ]
    note = d.lesson.notes.get(step.name)
    if note:
        parts.append(Text.assemble(("Instructor's note: ", "bold"), (note, "italic")))
    if step.op != "input":
        parts.append(Text.assemble(("shape: ", "dim"), shape_line(step)))
    if step.op == "matmul":
        parts += work_matmul(d, step, places, width, opts.exact)
    elif step.op == "scale":
        parts += work_scale(step, places, width, opts.exact)
    elif step.op == "softmax":
        parts += work_softmax(step, places, width, opts.exact)
    elif step.op == "mask":
        parts += work_mask(step, places, width, opts.exact)
    elif step.op == "concat":
        parts += work_concat(step, places, width, opts.exact)
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
    body.append(
        Text("Z = softmax(Q·Kᵀ / √d_k) · V,  with Q = X·W_Q, K = X·W_K, V = X·W_V", style="bold")
    )
    if lesson.mask == "causal":
        body.append(Text("before the softmax, scores above the diagonal become −∞", style="bold"))
    if lesson.multi_head:
        zs = " | ".join(f"Z{k}" for k in range(1, len(lesson.heads) + 1))
        tail = ",  output = concat · W_O" if lesson.W_O is not None else ""
        body.append(Text(f"once per head, then concat = [{zs}]{tail}", style="bold"))
    return Panel(Group(*body), title=Text(lesson.title, style="bold"), title_align="left")


def walk(d: Derivation, opts: WalkOptions) -> list[RenderableType]:
    """The whole walk as renderables, in order."""
    return [part for page in walk_pages(d, opts) for part in page]


def walk_pages(d: Derivation, opts: WalkOptions) -> Iterator[list[RenderableType]]:
    """The walk one step per page (the header joins the first), for pausing between steps.

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
            page.append(Rule(Text(label, style="bold reverse"), characters="═"))
        page.append(step_section(d, step, opts))
        yield page
        page, empty = [], False
    if empty:
        yield page


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


def walk_document(d: Derivation, kind: str, width: int = 100) -> str:
    """The walk as the terminal shows it, colours included, as an SVG or HTML document."""
    import html
    import io

    from rich.console import Console

    console = Console(
        record=True,
        width=width,
        file=io.StringIO(),  # recorded, not shown
        force_terminal=True,
        color_system="truecolor",
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for part in walk(d, WalkOptions(width=width)):
        console.print(part)
    title = f"attn-tutor walk {words.visible(d.lesson.name)}"  # a file name: no control characters
    if kind == "svg":
        return console.export_svg(title=title)
    page = console.export_html(inline_styles=True)
    # rich's page has no <title>; the lesson's title names the browser tab
    charset = '<meta charset="UTF-8">'
    head = html.escape(f"{d.lesson.title}: {title}")
    return page.replace(charset, f"{charset}\n<title>{head}</title>", 1)
