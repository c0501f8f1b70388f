"""Matrices drawn as tables, for every view that shows one (the walk, the grade report): a
rounded grid drawn line by line with known column widths, tables side by side, and blocks of
columns that fit the width. Plain layout: no arithmetic, no colour choices of its own.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from tutor.text.columns import pad


def col_width(texts: Iterable[str]) -> int:
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


@functools.cache
def _probe() -> Console:
    """A wide console that only measures (never prints), made once."""
    return Console(
        width=10_000, file=io.StringIO(), color_system=None, emoji=False, force_jupyter=False
    )


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
    probe = _probe()
    # an operator (a str) goes with what follows it, never left hanging at a line's end: each
    # unit is an operator and the table after it, or one table
    units: list[list[tuple[RenderableType, int]]] = []
    glue = False
    for p in parts:
        item = Text(p, style="bold") if isinstance(p, str) else p
        w = Measurement.get(probe, probe.options, item).maximum
        if glue:
            units[-1].append((item, w))
        else:
            units.append([(item, w)])
        glue = isinstance(p, str)
    lines: list[list[tuple[RenderableType, int]]] = [[]]
    used = 0
    for unit in units:
        w = sum(uw + 1 for _, uw in unit) - 1
        if lines[-1] and used + w + 1 > width:
            lines.append([])
            used = 0
        # an operator that would start a line goes on a line of its own (centred beside a
        # table it would look like a pointer at one of its rows), and so does one whose table
        # is too wide to share a line with it
        if len(unit) > 1 and (not lines[-1] or w > width):
            lines[-1].append(unit[0])
            lines.append([])
            unit, used = unit[1:], 0
            w = unit[0][1]
        lines[-1].extend(unit)
        used += w + 1
    rows = [Beside([item for item, _ in line], [w for _, w in line]) for line in lines]
    return rows[0] if len(rows) == 1 else Group(*rows)
