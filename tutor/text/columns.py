"""Plain aligned columns (the ``list`` output): one line per row, the last column wrapped.

``list`` runs often (an instructor scripting worksheets, a student looking for a name), so it is
printed as columns of text, the way ``pip list`` or ``ls -l`` do, rather than as a Rich table:
importing and laying out ``rich.table`` costs more than reading every lesson. Columns of text
also read well when piped into ``grep`` or a file.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

GAP = "  "
MIN_LAST = 20  # below this the last column is left to run on rather than wrapped into a sliver


def columns(
    rows: Sequence[Sequence[str]],
    width: int,
    header: Sequence[str] = (),
    right: Sequence[int] = (),
    console: Console | None = None,
) -> list[Text]:
    """``rows`` as lines of aligned columns; ``right`` holds the indices aligned right.

    Every column but the last is as wide as its widest entry. The last column fills what is left
    of ``width`` and wraps onto lines indented to where it starts. When that leaves less than
    ``MIN_LAST`` columns, the last column goes under its row, indented by four, and so does
    every column before it that does not fit beside the first ones (one per line).
    """
    table = [list(header), *map(list, rows)] if header else [list(r) for r in rows]
    if not table:
        return []
    n = len(table[0])
    widths = [max(cell_len(r[j]) for r in table) for j in range(n)]

    def span(k: int) -> int:  # the first k columns side by side
        return sum(widths[:k]) + len(GAP) * max(k - 1, 0)

    inline = n - 1  # the columns side by side on the row's line
    beside = span(inline) + len(GAP) + MIN_LAST <= width  # the last wraps beside them
    while not beside and inline > 1 and span(inline) > width:
        inline -= 1
    indent = span(inline) + len(GAP)
    lines: list[Text] = []
    for k, row in enumerate(table):
        style = "bold" if header and k == 0 else ""
        cells = GAP.join(pad(row[j], widths[j], right=j in right) for j in range(inline))
        if beside:
            lines += _wrapped(row[-1], cells + GAP, indent, width, style, console)
            continue
        lines.append(Text(cells, style=style))
        for j in range(inline, n):  # under the row: one column per line, wrapped
            if row[j]:
                lines += _wrapped(row[j], "    ", 4, width, style, console)
    for line in lines:
        line.rstrip()  # in place: no trailing blanks after an empty or padded cell
    return lines


def cells_of(text: str) -> int:
    """Terminal cells of ``text``: ``len`` for ASCII (most numbers), else Rich's measure."""
    return len(text) if text.isascii() else cell_len(text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` filled with blanks to ``width`` terminal cells (``str.ljust`` and ``rjust``
    count characters: a wide character would push the column out)."""
    blanks = " " * (width - cells_of(text))
    return blanks + text if right else text + blanks


def _wrapped(
    text: str, prefix: str, indent: int, width: int, style: str, console: Console | None
) -> list[Text]:
    """``prefix`` then ``text``, wrapped in what is left of ``width``, later lines indented."""
    room = max(width - indent, 1)
    if console is None or cell_len(text) <= room:
        return [Text(prefix, style=style) + Text(text, style=style)]
    parts = Text(text, style=style).wrap(console, room)
    return [Text(prefix if m == 0 else " " * indent, style=style) + p for m, p in enumerate(parts)]
