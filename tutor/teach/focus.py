"""Which cell each step of the walk works: the reader's choice, the lesson's, or a lively row.

A focus names a token's row (``it``) and, for the N × N steps, a key's column (``cake``); it
may also pin a column of one step (``Q[it, 2]``). Each step then works the cell where that row
meets that column: Q, scores, scaled, weights, Z, concat and output on the row's token, K and V
on the key's token (the key and value that ``scores[it, cake]`` and ``Z[it]`` read).

Without a focus, the worked row is the most decisive row of the head's weights: the one whose
largest and smallest weights lie furthest apart (the first such row on a tie), never a uniform
row while another exists. Under a causal mask the rows that see at least half of the tokens and
still hide one come first, so the walk shows the mask at work. The key is then that row's
largest weight. Pure: no printing, no colour.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tutor.core import kinds
from tutor.core.errors import UsageError
from tutor.core.records import record
from tutor.text.cells import parse_place

if TYPE_CHECKING:
    from tutor.core.engine import Derivation, Step
    from tutor.core.lesson import Focus as LessonFocus

N_BY_N, TOKEN_ROWS = kinds.SQUARE, kinds.TOKEN_ROWS  # a column per token; a row per token
KEY_ROWS = kinds.KEY_ROWS  # a row per key (the tokens a query looks at)


@record
class Focus:
    """A row (token index), a key (token index) and one step's pinned column, each optional.

    ``head`` None applies to every head; a number only to that head (``head2.weights[…]``).
    """

    row: int | None = None
    key: int | None = None
    step: str | None = None  # the step name whose column ``col`` is pinned
    col: int | None = None
    head: int | None = None


def from_cell(d: Derivation, text: str) -> Focus:
    """``--cell``: a cell name as ``explain`` reads it, on a step with a row per token. In a
    lesson with heads, a per-head step without ``headN.`` means that cell in every head."""
    name = text.strip()
    step_name = name.split("[", 1)[0].strip()
    every_head = d.lesson.multi_head and d.has(step_name, 1) and not step_name.startswith("head")
    try:
        step, i, j = parse_place(d, f"head1.{name}" if every_head else name)
    except UsageError as err:
        said = str(err).replace(repr(f"head1.{name}"), repr(name))  # as the reader typed it
        listed = "rows:" in said or "columns:" in said
        tokens = "" if listed else f"; tokens: {', '.join(d.lesson.labels)}"
        raise UsageError(f"--cell: {said}{tokens}") from None
    if step.name not in TOKEN_ROWS:
        here = [s for s in TOKEN_ROWS if d.has(s) or d.has(s, 1)]  # this lesson's: no masked...
        raise UsageError(
            f"--cell {name[:40]!r}: {step.key} has no row per token; name a cell of "
            f"{', '.join(here)}, like weights[{d.lesson.labels[-1]}, {d.lesson.labels[0]}]"
        )
    head = None if every_head else step.head
    if j is None:  # a row, as the walk prints it (Z[cats] = …): that row worked
        return Focus(row=i, head=head)
    if step.name in N_BY_N:
        return Focus(row=i, key=j, head=head)
    return Focus(row=i, step=step.name, col=j, head=head)


def from_row(d: Derivation, text: str) -> Focus:
    """``--row``: a token's label (``the#2`` for a repeat)."""
    labels = d.lesson.labels
    word = text.strip()
    if word in labels:
        return Focus(row=labels.index(word))
    repeats = [lab for lab in labels if lab.split("#")[0] == word]
    if repeats:
        raise UsageError(
            f"--row {word!r} appears {len(repeats)} times; say which: {', '.join(repeats)}"
        )
    shown = ", ".join(labels)
    raise UsageError(f"--row {word[:40]!r} is not a token of this lesson; tokens: {shown}")


def from_lesson(d: Derivation, focus: LessonFocus | None, head: int | None = None) -> Focus:
    """The lesson's ``focus:`` (already checked against its tokens) as indices."""
    if focus is None:
        return Focus()
    labels = d.lesson.labels
    row = labels.index(focus.row)
    if focus.col is None:
        return Focus(row=row, head=head)
    if focus.step in N_BY_N or focus.step is None:
        keys = d.lesson.source_labels if d.lesson.source is not None else labels  # cross
        return Focus(row=row, key=keys.index(focus.col), head=head)
    return Focus(row=row, step=focus.step, col=int(focus.col) - 1, head=head)


def for_head(d: Derivation, chosen: Focus | None, head: int | None) -> Focus:
    """The focus a head's steps use: the reader's choice if it applies to this head, else the
    head's own ``focus:``, else the lesson's, each completed by the automatic row."""
    lesson = d.lesson
    base = Focus()
    if chosen is not None and (chosen.head is None or chosen.head == head):
        base = chosen
    elif head is not None and lesson.heads[head - 1].focus is not None:
        base = from_lesson(d, lesson.heads[head - 1].focus, head)
    elif lesson.focus is not None:
        base = from_lesson(d, lesson.focus)
    elif head is None and lesson.multi_head and lesson.heads[0].focus is not None:
        base = replace(from_lesson(d, lesson.heads[0].focus, 1), step=None, col=None)
    weights = d.step("weights", head or (1 if lesson.multi_head else None))
    if base.row is None:
        base = replace(base, row=lively_row(weights))
    if base.key is None:  # the key of the row's largest weight (a key the mask lets it see)
        base = replace(base, key=_largest(weights, base.row))
    return base


def lively_row(weights: Step) -> int:
    """The most decisive row of a weights step (see the module's docstring)."""
    n, keys = len(weights.rows), len(weights.cols)  # keys: the source's, in cross-attention
    seen = [[j for j in range(keys) if not weights.hidden(i, j)] for i in range(n)]
    candidates = [i for i in range(n) if len(seen[i]) >= 2] or list(range(n))
    if any(len(s) < keys for s in seen):  # causal: rows that see enough and hide something
        wide = [i for i in candidates if 2 * len(seen[i]) >= keys and len(seen[i]) < keys]
        candidates = wide or candidates

    def spread(i: int) -> float:
        values = [float(weights.cells[i][j].approx) for j in seen[i]]
        return max(values) - min(values)

    return max(candidates, key=lambda i: (round(spread(i), 12), -i))


def _largest(step: Step, i: int) -> int:
    row = step.cells[i]
    visible = [j for j in range(len(row)) if not row[j].masked and not step.hidden(i, j)]
    return max(
        visible or range(len(row)),
        key=lambda j: (row[j].approx if not row[j].masked else -1e300, -j),
    )


def worked_cell(step: Step, focus: Focus) -> tuple[int, int]:
    """The cell of ``step`` that the walk works under ``focus`` (whose row is set)."""
    row = focus.row or 0
    col = focus.col if focus.step == step.name and focus.col is not None else 0
    if step.name in KEY_ROWS:
        return (focus.key if focus.key is not None else row), col
    if step.name in N_BY_N:
        return row, (focus.key if focus.key is not None else _largest(step, row))
    if step.name in TOKEN_ROWS:
        return row, min(col, len(step.cols) - 1)
    return 0, 0  # a W matrix: no row per token
