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
    of ``width`` and wraps onto lines indented to where it starts.
    """
    table = [list(header), *map(list, rows)] if header else [list(r) for r in rows]
    if not table:
        return []
    n = len(table[0])
    widths = [max(cell_len(r[j]) for r in table) for j in range(n - 1)]
    indent = sum(widths) + len(GAP) * (n - 1)
    room = width - indent
    below = room < MIN_LAST  # too narrow: the last column goes under its row, indented
    if below:
        indent, room = 4, width - 4
    lines: list[Text] = []
    for k, row in enumerate(table):
        cells = [
            row[j].rjust(widths[j]) if j in right else row[j] + " " * (widths[j] - cell_len(row[j]))
            for j in range(n - 1)
        ]
        style = "bold" if header and k == 0 else ""
        if below:
            lines.append(Text(GAP.join(cells), style=style))
        last = Text(row[-1], style=style)
        prefix = " " * indent if below else GAP.join(cells) + GAP if n > 1 else ""
        if console is None or cell_len(row[-1]) <= room:
            if row[-1] or not below:
                lines.append(Text(prefix, style=style) + last)
            continue
        for m, part in enumerate(last.wrap(console, max(room, 1))):
            lines.append(Text(prefix if m == 0 else " " * indent, style=style) + part)
    for line in lines:
        line.rstrip()  # in place: no trailing blanks after an empty or wrapped last cell
    return lines
