"""Plain aligned columns (the ``list`` output): one line per row, the last column wrapped.

``list`` runs often (an instructor scripting worksheets, a student looking for a name), so it is
printed as columns of text, the way ``pip list`` or ``ls -l`` do, rather than as a Rich table:
importing and laying out ``rich.table`` costs more than reading every lesson. Columns of text
also read well when piped into ``grep`` or a file. The lines are plain strings, wrapped here:
``list`` loads no Rich console or text (about 20 ms of its start-up; bench/README.md), only
Rich's measure of a character's width.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len  # the width table alone: rich.cells loads no console

GAP = "  "
MIN_LAST = 20  # below this the last column is left to run on rather than wrapped into a sliver


def columns(
    rows: Sequence[Sequence[str]],
    width: int,
    header: Sequence[str] = (),
    right: Sequence[int] = (),
) -> list[str]:
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
    lines: list[str] = []
    for row in table:
        cells = GAP.join(pad(row[j], widths[j], right=j in right) for j in range(inline))
        if beside:
            lines += _wrapped(row[-1], cells + GAP, indent, width)
            continue
        lines.append(cells)
        for j in range(inline, n):  # under the row: one column per line, wrapped
            if row[j]:
                lines += _wrapped(row[j], "    ", 4, width)
    return [line.rstrip() for line in lines]  # no trailing blanks after an empty or padded cell


def cells_of(text: str) -> int:
    """Terminal cells of ``text``: ``len`` for ASCII (most numbers), else Rich's measure."""
    return len(text) if text.isascii() else cell_len(text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` filled with blanks to ``width`` terminal cells (``str.ljust`` and ``rjust``
    count characters: a wide character would push the column out)."""
    blanks = " " * (width - cells_of(text))
    return blanks + text if right else text + blanks


def _wrapped(text: str, prefix: str, indent: int, width: int) -> list[str]:
    """``prefix`` then ``text``, wrapped in what is left of ``width``, later lines indented."""
    parts = wrap(text, max(width - indent, 1))
    return [(prefix if m == 0 else " " * indent) + p for m, p in enumerate(parts)]


def wrap(text: str, room: int) -> list[str]:
    """``text`` in lines of at most ``room`` terminal cells, broken at spaces; a word longer
    than a line is cut where the line ends."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        joined = f"{line} {word}" if line else word
        if cells_of(joined) <= room:
            line = joined
            continue
        if line:
            lines.append(line)
        while cells_of(word) > room:  # a word wider than the line, in pieces
            cut = _fits(word, room)
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    return [*lines, line]


def _fits(word: str, room: int) -> int:
    """How many characters of ``word`` fit in ``room`` cells (at least one)."""
    used = 0
    for k, ch in enumerate(word):
        used += cells_of(ch)
        if used > room:
            return max(k, 1)
    return len(word)
