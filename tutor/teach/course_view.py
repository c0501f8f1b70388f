"""What ``learn`` shows before a stage's questions (issue 40: a course that teaches before it
tests): the softmax warm-up when the stage has one, the tables its questions need (every W
they are made with), ONE cell of its own step worked term by term, as the walk works it, and
the cell next to it as the student's first question. Returns renderables; never prints.

``page`` shows a stage's opening a screen at a time at a terminal, its heading on top of
every screen, so the heading and the idea never scroll away before the first question.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from rich.console import Console, Group, RenderableType
from rich.text import Text

from tutor.core import engine as en
from tutor.core.course import Stage
from tutor.core.engine import Derivation, Step
from tutor.teach.colours import COLOURS, PLAIN
from tutor.teach.walk import matrix_tables, softmax_warmup
from tutor.teach.warmup import softmax_row
from tutor.text import format as fmt
from tutor.text import working as wk
from tutor.text.cells import cell_name
from tutor.text.tables import side_by_side


class Plan(Protocol):
    """What a stage's opening reads of its plan (``tutor.assess.stageplan.Plan``, which this
    layer does not import): the derivation it works, the worked cell, the questions in order,
    and the matrices given new numbers."""

    d: Derivation
    worked: Any  # a question: .step, .i, .j, .name
    order: tuple[Any, ...]
    practice: tuple[str, ...]


def _marks(step: Step, i: int, j: int, arg: Step) -> dict[str, object]:
    """How to highlight what cell (i, j) reads of ``arg``: its row, its column or its cells."""
    refs = [(r.i, r.j) for r in step.sources(i, j) if r.step is arg]
    if not refs:
        return {}
    rows, cols = {r for r, _ in refs}, {c for _, c in refs}
    if len(rows) == 1 and len(refs) > 1:
        return {"rows": sorted(rows)}
    if len(cols) == 1 and len(refs) > 1:
        return {"cols": sorted(cols)}
    return {"cell": refs[0]}


def _tables(steps: Sequence[Step], places: int, width: int, marks: Callable) -> RenderableType:  # type: ignore[type-arg]
    parts: list[RenderableType | str] = []
    for s in steps:
        parts += matrix_tables(s, places, width, **marks(s))
    return side_by_side(parts, width)


def needed(p: Plan, stage: Stage) -> list[Step]:
    """The tables the stage's questions read, beyond the worked cell's: the inputs of every
    step asked (of the worked cell's head, or of no head), then the course's ``show:``;
    never a table that holds an answer (a step asked, or one made from it)."""
    d, head = p.d, p.worked.step.head

    def holds_answers(s: Step) -> bool:  # a step asked, or a table made from one
        return s.name in stage.steps or any(holds_answers(a) for a in s.args)

    out: list[Step] = []
    for s in d.steps:
        if s.name in stage.steps and s.head in (None, head):
            out += [a for a in s.args if a.head in (None, head)]
    out += [s for s in d.steps if s.name in stage.show and s.head in (None, head)]
    return [s for s in dict.fromkeys(out) if not holds_answers(s)]


@functools.singledispatch
def rule_worked(step: Step, i: int, j: int, places: int) -> list[str]:
    """Lines a rule adds under a worked cell's working (the e^x of a softmax row); for every
    other rule, none: the working's one line says it all."""
    return []


@rule_worked.register
def _(step: en.Softmax, i: int, j: int, places: int) -> list[str]:
    row = wk.softmax_row(step, i, places)
    exps = ", ".join(f"e^{wk.factor(x)} ≈ {e}" for _, x, e, _ in row.rows)
    share = next(s for key, _, _, s in row.rows if key == step.cols[j])
    return [f"    {exps}", f"    total {row.total}, so {share}"]


def worked_cell(p: Plan, width: int) -> list[RenderableType]:
    """The worked cell: the tables it reads (the row and column it meets highlighted), then
    its working term by term, as the walk writes it."""
    q, places = p.worked, p.d.lesson.precision
    step = q.step
    colour = COLOURS.get(step.name, PLAIN)
    w = wk.working(step, q.i, q.j, places)
    lines = [f" = {w.how}" if w.how else ""]
    if w.work:
        lines.append(f"    = {w.numbers} {w.result(exact=False)}")
    else:
        lines.append(f"    {w.result(exact=False)}" + (f" ({w.aside})" if w.aside else ""))
    lines += rule_worked(step, q.i, q.j, places)
    return [  # one part: the pager never puts the tables and their working on two screens
        Group(
            _tables(step.args, places, width, lambda a: _marks(step, q.i, q.j, a)),
            Text.assemble(
                ("Worked for you: ", "bold"), (q.name, f"bold {colour}"), "\n".join(lines)
            ),
        )
    ]


def stage_intro(p: Plan, stage: Stage, width: int) -> list[RenderableType]:
    """The warm-up (if any), new numbers said when the stage has them, the worked cell, the
    other tables the questions read, and the student's first cell, the one next to it."""
    places = p.d.lesson.precision
    out: list[RenderableType] = []
    if stage.warmup:
        weights = softmax_row(list(stage.warmup))
        numbers = ", ".join(fmt.operand(c, places) for c in weights.args[0].cells[0])
        out.append(Text(f"Warm-up: softmax of {numbers}, worked by hand", style="bold"))
        out += softmax_warmup(weights, places)
    if p.practice:
        names = " and ".join(p.practice)
        out.append(
            Text(
                f"This stage gives {names} new numbers (every W as in {p.d.lesson.name}), "
                "so that no answer is one a guess would hit.",
                style="italic",
            )
        )
    out += worked_cell(p, width)
    shown = set(p.worked.step.args)
    rest = [s for s in needed(p, stage) if s not in shown]
    if rest:
        label = Text("Your questions also read:", style="bold")
        out.append(Group(label, _tables(rest, places, width, lambda a: {})))
    if p.order:
        first = p.order[0]
        out.append(
            Text.assemble(
                ("Your turn: ", "bold"),
                (first.name, f"bold {COLOURS.get(first.step.name, PLAIN)}"),
                ", worked the same way.",
            )
        )
    return out


def first_term_hint(q: object, places: int) -> str:
    """The hint after a miss: the first term of the cell worked (``tutor.text.working``)."""
    return f"{cell_name(q.step, q.i, q.j)}: " + wk.first_term(q.step, q.i, q.j, places)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# a screen at a time


def screens_of(sizes: Sequence[int], height: int, reserve: int) -> list[list[int]]:
    """Which parts (by their heights in lines, the first the heading) go on which screen: as
    many whole parts as fit, never a paragraph or a table cut in two unless it is taller than a
    screen (then cut by lines: such a part is a screen of its own); every screen after the
    first starts with the heading again and keeps a row for the pager's line, and the last
    leaves ``reserve`` rows for what follows."""
    room = max(1, height - 1)  # the pager's line at the bottom
    pages: list[list[int]] = [[]]
    used = 0
    for k, size in enumerate(sizes):
        top = 0 if len(pages) == 1 else sizes[0]  # the heading again
        if pages[-1] and top + used + size > room:
            pages.append([])
            used = 0
        pages[-1].append(k)
        used += size
    while len(pages[-1]) > 1:  # the last screen: its parts, then the rule and a question
        top = 0 if len(pages) == 1 else sizes[0]
        if top + sum(sizes[k] for k in pages[-1]) + reserve <= height:
            break
        pages.append([pages[-1].pop()])
        while (
            len(pages[-2]) > 1
            and sizes[0] + sum(sizes[k] for k in pages[-1]) + sizes[pages[-2][-1]] + reserve
            <= height
        ):
            pages[-1].insert(0, pages[-2].pop())
    return pages


def _pieces(lines: list[str], room: int) -> list[list[str]]:
    """A part's lines, cut into pieces that fit a screen under the heading when it is taller
    (between two tables, or two rows of one, as the walk's pager cuts)."""
    from tutor.teach.lecture import _clean_cut

    out, start = [], 0
    while len(lines) - start > room:
        cut = _clean_cut(lines, start, start + room, room)
        cut = cut if cut > start else start + room
        out.append(lines[start:cut])
        start = cut
    return [*out, lines[start:]]


def page(
    console: Console,
    parts: Sequence[RenderableType],
    key: Callable[[], str] | None,
    read: Callable[[str], str],
    reserve: int,
) -> str:
    """Show ``parts`` (the first the stage's heading) a screen at a time (``screens_of``).
    A key (Enter or a space) goes on, ``q`` stops; returns "go", "stopped", "ctrl-c" or
    "ctrl-d"."""
    from tutor.teach.lecture import STOP, draw

    height = max(8, console.size.height)
    drawn = [piece for part in parts for piece in _pieces(draw(console, [part]), height - 2)]
    pages = screens_of([len(d) for d in drawn], height, reserve)
    for n, kept in enumerate(pages):
        lines = [line for k in ([0] if n and 0 not in kept else []) + kept for line in drawn[k]]
        console.file.write("\n".join(lines) + "\n")  # a part taller than a screen scrolls
        if n + 1 == len(pages):
            break
        console.print(Text(f"── {n + 1}/{len(pages)} · Enter: more · q: stop ──", style="dim"),
                      end="")  # fmt: skip
        console.file.flush()
        try:
            answer = (key() if key else read("")).strip().lower()
        except EOFError:
            console.print()
            return "ctrl-d"
        except KeyboardInterrupt:
            console.print()
            return "ctrl-c"
        if key:
            console.print()  # a key is not echoed: end its line
        if answer in STOP:
            return "stopped"
    return "go"
