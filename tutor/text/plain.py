"""The plain view (``--plain``, ``ATTN_TUTOR_PLAIN=1``): what a screen reader should read.

Every renderable the tutor prints is turned into lines of words before it reaches the
terminal: a matrix is read row by row with the row's name ("row cats: 2, 0"), a table row by
row with its column names, a heading is its words on a line of their own, a panel its title
then its body. No box drawing, no rule lines, no colour: a screen reader speaks every
``│ ─ ╭`` it is given, and a table laid out with spaces is read across its columns.

Layout only: the words and numbers are the ones the other view prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.style import Style
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from tutor.text.tables import Beside, MatrixGrid

# patterns as text: re compiles (and keeps) each on first use, so a walk that is not plain
# compiles none of them at start-up
BOX = "[\u2500-\u257f\u2580-\u259f]+"  # box drawing and block elements
# signs a speech synthesizer skips or spells out (espeak-ng reads "2·2 + 0·1" as "two two
# plus zero one", Kᵀ as a code point's name, e^x as "e x" and ✓ not at all), in words
SPOKEN = (
    # learn --status: "✓  3. Scores": the mark before a numbered stage, in words
    (r"^(\s*)[✓✔](?=\s+\d+\.)", r"\1passed:"),
    (r"^(\s*)[✗✘](?=\s+\d+\.)", r"\1tried:"),
    (r"^(\s*)—(?=\s+\d+\.)", r"\1not yet:"),
    (r" · (?=(?:Enter|[a-z]):)", "; "),  # "Enter: next · b: back": keys, not a product
    (r"\s*·\s*", " times "),
    ("ᵀ", " transposed"),
    (r"\^", " to the "),  # e^x, e^1.41, e^(x − m): a power
    (r"[✓✔](?=\s+\w)|[✗✘](?=\s+\w)", ""),  # "✓ Right": the word says it
    ("[✓✔]", "(checks)"),
    ("[✗✘]", "(does not check)"),
    ("▸", "(marked)"),  # the lesson's own row of a comparison, said
)


OPERATORS = {"times", "=", "+", "→"}  # between two tables: a line of their own
BAR = r"\[[█░]+\] ?"  # a progress bar: the count after it says it


def words_of(text: str) -> str:
    """A line in words: box drawing left in it (a rule drawn by hand) taken out, and the
    signs a screen reader would skip said as words."""
    text = re.sub(BAR, "", text)
    if re.search(BOX, text):
        text = re.sub(BOX, " ", text).strip()
    for sign, said in SPOKEN:
        text = re.sub(sign, said, text)
    return text.lstrip() if text[:1] == " " and not text.startswith("  ") else text


def reads_as(shown: str, plain: str) -> Text:
    """``shown`` in the usual view and ``plain`` in the plain one: a `` · `` between facts is
    a separator, where everywhere else it is a product."""
    return Text(shown, style=Style(meta={"plain": plain}))


def joined(parts: Iterable[str], sep: str = " · ", plain_sep: str = "; ") -> Text:
    """``parts`` joined by ``sep``, read as ``plain_sep`` in the plain view."""
    return reads_as(sep, plain_sep).join(Text(p) for p in parts)


def _spoken(text: Text) -> str:
    """A Text's words, each span marked by ``reads_as`` replaced by its plain words."""
    marks = sorted(
        (span.start, span.end, span.style.meta["plain"])
        for span in text.spans
        if isinstance(span.style, Style) and "plain" in span.style.meta
    )
    if not marks:
        return words_of(text.plain)
    out, at = [], 0
    for start, end, plain in marks:
        out += [words_of(text.plain[at:start]), plain]
        at = end
    return "".join([*out, words_of(text.plain[at:])])


def _text(value: object) -> str:
    if isinstance(value, Text):
        return value.plain
    return str(value) if value is not None else ""


def _line(text: str) -> Text:
    return Text(words_of(text).strip())


def _marked(style: Style | None) -> bool:
    """Is this cell one the walk works (drawn reversed; italic on the weights' heatmap)?"""
    return style is not None and bool(style.reverse or style.italic)


def matrix_lines(grid: MatrixGrid) -> Iterator[Text]:
    """A matrix: its title, its columns, then each row with the row's name; the worked row,
    column or cell said to be the worked one (the usual view shows it reversed)."""
    yield _line(grid.title.strip())
    rows = [_marked(style) for (_, style), _ in grid.body]
    cols = [
        bool(grid.body) and all(_marked(cells[j][1]) for _, cells in grid.body)
        for j in range(len(grid.header))
    ]
    heads = [
        h.strip() + (" (worked column)" if cols[j] else "") for j, (h, _) in enumerate(grid.header)
    ]
    yield _line("columns: " + ", ".join(heads))
    for ((label, _), cells), worked in zip(grid.body, rows, strict=True):
        values = [
            text.strip()
            + (" (worked)" if not worked and not cols[j] and _marked(st) else "")
            + (" (largest)" if st is not None and st.underline else "")  # the row's top weight
            for j, (text, st) in enumerate(cells)
        ]
        name = label.strip() + (" (worked row)" if worked else "")
        yield _line(f"row {name}: {', '.join(values)}")


def table_lines(table: Table) -> Iterator[Text]:
    """A table: its title, then each row as ``first cell: column value, column value``."""
    if table.title:
        yield _line(_text(table.title))
    columns = table.columns
    cells = [list(c.cells) for c in columns]
    heads = [_text(c.header).strip() for c in columns]
    for r in range(table.row_count):
        row = [_text(col[r]).strip() if r < len(col) else "" for col in cells]
        first, rest = row[0], row[1:]
        parts = [
            f"{head} {value}" if head else value
            for head, value in zip(heads[1:], rest, strict=True)
            if value
        ]  # each value with its column's name; the first column names the row
        yield _line(f"{first}: {', '.join(parts)}" if first else ", ".join(parts))


def tree_lines(tree: Tree, depth: int = 0) -> Iterator[Text]:
    """A tree: each node on a line of its own, indented two spaces a level (no guides)."""
    label = tree.label
    said = _spoken(label) if isinstance(label, Text) else words_of(_text(label))
    yield Text("  " * depth + said)
    for child in tree.children:
        yield from tree_lines(child, depth + 1)


def plain_lines(item: RenderableType) -> Iterator[RenderableType]:
    """What ``item`` says, as lines (or renderables with no decoration of their own)."""
    if isinstance(item, MatrixGrid):
        yield from matrix_lines(item)
    elif isinstance(item, Beside):
        for part in item.items:
            yield from plain_lines(part)
    elif isinstance(item, Group):
        for part in item.renderables:
            yield from plain_lines(part)
    elif isinstance(item, Rule):
        yield Text("")
        if _text(item.title).strip():
            yield _line(_text(item.title))
    elif isinstance(item, Panel):
        if item.title:
            yield _line(_text(item.title))
        yield from plain_lines(item.renderable)
    elif isinstance(item, Table):
        yield from table_lines(item)
    elif isinstance(item, Tree):
        yield from tree_lines(item)
    elif isinstance(item, Text):
        said = _spoken(item)
        yield Text(said.strip() if said.strip() in OPERATORS else said)
    elif isinstance(item, str):
        yield Text(words_of(item))
    else:  # something else rich can draw: drawn, then its lines taken as they are
        yield item


def plain(objects: Iterable[object]) -> list[object]:
    """The objects a console was asked to print, each in its plain view."""
    out: list[object] = []
    for obj in objects:
        if isinstance(obj, str):
            out.append(words_of(obj))
        elif isinstance(obj, MatrixGrid | Beside | Group | Rule | Panel | Table | Tree | Text):
            out.append(Group(*plain_lines(obj)))
        else:
            out.append(obj)
    return out
