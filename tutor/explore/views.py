"""What the explorer shows, as plain data and text (no Textual): its pages, a cell's working
for the side panel, and the cells a cell comes from.

The working is ``tutor.text.working``'s (numbers first, then the exact form); only the
explorer's own variations (the divisor and the factor t) are worded here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tutor.core import kinds
from tutor.core.engine import Derivation, Ref, Scale, Step
from tutor.explore.model import DIVISOR_TEXT, Settings, Times, factor_text
from tutor.text import format as fmt
from tutor.text import steps, words
from tutor.text import working as wk
from tutor.text.cells import cell_name


@dataclass(frozen=True)
class Page:
    """One tab: rows of steps side by side; ``home`` are the steps this page is about (where
    following a cell goes)."""

    id: str
    title: str
    rows: tuple[tuple[str, ...], ...]
    home: tuple[str, ...]


def pages(d: Derivation) -> list[Page]:
    """The pipeline, a tab a step, for every lesson kind (``kinds.TABS``): the views a lesson has
    no step for are left out (positions, rotations, a source sentence, the tempered and masked
    scores, the decoding row), and keys and values come from X where there is no X_src."""

    def shown(names: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for name in names:
            instead = kinds.BY_NAME[name].instead
            out.append(instead if instead is not None and not d.has(name) else name)
        return tuple(out)

    return [
        Page(t.id, t.title, tuple(shown(row) for row in t.rows), shown(t.home))
        for t in kinds.TABS
        if t.when is None or d.has(t.when)
    ]


PER_HEAD = kinds.PER_HEAD


def find(d: Derivation, name: str, head: int) -> Step | None:
    """The step ``name`` as the explorer shows it for ``head`` (1-based), if it exists."""
    h = head if d.lesson.multi_head and name in PER_HEAD else None
    if h is not None and not d.has(name, h) and d.lesson.kv_groups is not None:
        h = d.lesson.group_heads(d.lesson.group_of(h))[0]  # the K, V of the head's group
    return d.step(name, h) if d.has(name, h) else None


def sources(step: Step, i: int, j: int) -> list[Ref]:
    """The cells cell (i, j) is made from (a hidden key's weight: none; masked scores left out)."""
    if step.hidden(i, j):
        return []
    return [r for r in step.sources(i, j) if not r.step.cells[r.i][r.j].masked]


def title(step: Step, settings: Settings) -> str:
    """A view's heading: what the step is, and its shape."""
    n, m = step.shape
    what = steps.say(step, "short")
    if isinstance(step, Times):  # the explorer's own variations: the factor and the divisor
        what = f"{step.args[0].name} × {factor_text(settings)}"
    elif isinstance(step, Scale):  # the lesson's and the decoding row's
        what = f"{step.args[0].name} ÷ {_divisor(step, settings)}"
    if not what:  # the other kinds of step: the walk's own heading (one home for it)
        what = "given" if step.given else words.step_title(step).split(" = ", 1)[-1]
    return f"{step.key} ({n} × {m}) {what}"


@functools.singledispatch
def working_text(step: Step, i: int, j: int, places: int, settings: Settings) -> str:
    """The side panel's working of one cell, by its rule: how it is made, the numbers, then
    the value (with its exact form when short): the working ``tutor.text.working`` writes.
    The explorer's own variations (the divisor, the factor t) are worded as its settings
    have them."""
    return _worked(step, i, j, places)


@working_text.register
def _(step: Times, i: int, j: int, places: int, settings: Settings) -> str:
    name = cell_name(step, i, j)
    cell = step.cells[i][j]
    x = fmt.operand(step.args[0].cells[i][j], places)
    rel = "≈" if fmt.is_rounded(cell, places) else "="
    lines = [f"{name} = {cell_name(step.args[0], i, j)} × {factor_text(settings)}"]
    lines.append(f"  = {wk.factor(x)} × {factor_text(settings)}")
    lines.append(f"  {_result(step, i, j, rel, fmt.shown(cell, step, places))}")
    return "\n".join(lines)


@working_text.register
def _(step: Scale, i: int, j: int, places: int, settings: Settings) -> str:
    return _worked(step, i, j, places, _divisor(step, settings))


def _divisor(step: Scale, settings: Settings) -> str:
    """The divisor as the settings have it; the lesson's own (``scale:``) read off the step."""
    if settings.divisor != "lesson":
        return DIVISOR_TEXT[settings.divisor]
    return wk.divisor_text(step) if step.by is not None else f"√{step.of}"


def set_text(step: Step, i: int, j: int, places: int) -> str:
    """The side panel's working of a given cell the student set (not "given in the lesson")."""
    return _worked(step, i, j, places, how="you set this")


def _worked(
    step: Step, i: int, j: int, places: int, divisor: str | None = None, how: str | None = None
) -> str:
    """The working ``tutor.text.working`` writes; a scaled cell's √d_k as the explorer's
    ``divisor`` setting says; ``how``: said instead of the working's own words."""
    name = cell_name(step, i, j)
    w = wk.working(step, i, j, places, wk.Elide(6, 3, 2))
    if how is None:
        how = w.how if divisor is None else w.how.replace("√d_k", divisor)
    lines = [f"{name} = {how}" if how else name]
    if w.work:
        lines.append(f"  = {w.numbers}")
    lines.append(f"  {_result(step, i, j, w.rel, w.shown)}")
    if w.aside:
        lines.append(f"  {w.aside}")
    if w.hand_text is not None:
        lines.append("  " + wk.hand_note(w.hand_text))
    return "\n".join(lines)


def _result(step: Step, i: int, j: int, rel: str, shown: str) -> str:
    if rel == "=":
        return f"= {shown}"
    exact = fmt.exact_form(step, i, j)
    if exact is None:
        return f"≈ {shown}  {fmt.too_long_note(step, i, j)}"
    if len(exact) > wk.MAX_EXACT:
        return f"≈ {shown}\n  exact: {exact}"
    return f"= {exact} ≈ {shown}"


def from_text(step: Step, refs: list[Ref], was: str | None = None) -> str:
    """Where the cell comes from, in words: the row and column (or row) it reads; for a given
    cell the student changed, ``was`` is the lesson's own entry."""
    if step.given and was is not None:
        return f"you set this; the lesson gave {was}: type a number to change it"
    if step.given:
        return "given in the lesson: type a number to change it"
    if not refs:
        return "from nothing: a hidden key's weight is 0"
    keys = sorted({r.step.key for r in refs}, key=[r.step.key for r in refs].index)
    parts = []
    for key in keys:
        mine = [r for r in refs if r.step.key == key]
        s = mine[0].step
        rows = {r.i for r in mine}
        cols = {r.j for r in mine}
        if len(mine) == 1:
            parts.append(cell_name(s, mine[0].i, mine[0].j))
        elif len(rows) == 1:
            parts.append(f"row {s.rows[mine[0].i]} of {key}")
        elif len(cols) == 1:
            parts.append(f"column {s.cols[mine[0].j]} of {key}")
        else:
            parts.append(f"{len(mine)} cells of {key}")
    return "from " + " and ".join(parts)


def _partitions(items: list[int]) -> list[list[list[int]]]:
    """Every way to split ``items`` into groups (each group in order, groups by their first)."""
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for tail in _partitions(rest):
        out.append([[first], *tail])
        for k in range(len(tail)):
            out.append([*tail[:k], [first, *tail[k]], *tail[k + 1 :]])
    return [sorted(p, key=lambda line: line[0]) for p in out]


def packing(widths: list[int], heights: list[int], room: int, gap: int = 1) -> list[list[int]]:
    """A row of tables (their widths and heights) in lines that fit ``room`` columns: the
    arrangement of least height (at 80 columns the-cake's Q beside X, the rows it shares,
    and W_Q under them, rather than three tables one under another), then the one with its
    fuller lines first and the tables in order. ``gap``: the rows between two lines."""

    def fits(line: list[int]) -> bool:
        return len(line) == 1 or sum(widths[k] for k in line) <= room

    def cost(p: list[list[int]]) -> tuple[int, int, list[int], bool]:
        height = sum(max(heights[k] for k in line) for line in p) + gap * (len(p) - 1)
        order = [k for line in p for k in line]
        return height, len(p), [-len(line) for line in p], order != sorted(order)

    shapes = [p for p in _partitions(list(range(len(widths)))) if all(fits(x) for x in p)]
    return min(shapes, key=cost) if shapes else []


Span = tuple[int, int]  # from, to (not included): rows or columns of a page


def window(at: int, size: int, limit: int, must: Span, wanted: list[Span], then: Span) -> int:
    """Where to scroll a page (0 … ``limit``) with ``size`` rows (or columns) in sight, now at
    ``at``: ``must`` in sight (the cursor's cell), and as many of ``wanted`` whole as can be
    (the cells it comes from), then ``then`` (its table's heading), then as much of ``wanted``
    as can be, moving the least."""
    lo, hi = must

    def seen(t: int, span: Span) -> int:
        return max(0, min(span[1], t + size) - max(span[0], t))

    def whole(t: int, span: Span) -> bool:
        return seen(t, span) == span[1] - span[0]

    starts = {at, lo, hi - size, then[0]} | {a for a, _ in wanted} | {b - size for _, b in wanted}
    shown = [t for t in {max(0, min(limit, t)) for t in starts} if whole(t, must)]
    if not shown:  # the cell is wider than the page: its start
        return max(0, min(limit, lo))
    return max(
        shown,
        key=lambda t: (
            sum(whole(t, s) for s in wanted),
            whole(t, then),
            sum(seen(t, s) for s in wanted),
            -abs(t - at),
        ),
    )
