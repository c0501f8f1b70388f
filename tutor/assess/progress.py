"""``progress``: a student's quiz history as tables, one per lesson, and what to practise next.

Reads a ``history.Summary``; returns Rich renderables, never prints (``cli.py`` does).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from tutor.text.format import plural
from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tutor.assess import history

SHOWN_LESSONS = 20  # a table for at most this many lessons


def progress_view(found: history.Summary, where: Path) -> Iterator[RenderableType]:
    """The tables of a history summary, the legend and the step to practise next."""
    from tutor.assess import history

    if not found.quizzes:
        yield Text(f"No quizzes yet ({where}). Start one with: attn-tutor quiz")
        return
    rows = found.rows
    yield Text(f"Progress over {plural(found.quizzes, 'quiz', 'quizzes')} ({where})")
    # the lessons quizzed most recently, oldest of them first: a table per lesson stays readable
    # (and quick) however many lessons a history names
    shown = sorted(found.latest, key=found.latest.__getitem__)[-SHOWN_LESSONS:]
    by_lesson: dict[str, list[history.StepProgress]] = {name: [] for name in shown}
    for r in rows:
        by_lesson.get(r.lesson, []).append(r)
    for name, steps_done in by_lesson.items():
        # Text: names are not markup; visible: the history is a file anyone could have edited
        table = Table(title=Text(visible(name)), title_justify="left")
        for col in ("step", "asked", "first try", "after hints", "missed", "recent"):
            table.add_column(col, justify="left" if col == "step" else "right")
        for r in steps_done:
            recent = " ".join(f"{right}/{asked}" for right, asked in r.per_quiz[-5:])
            cells = (visible(r.step), str(r.asked), str(r.first), str(r.hints), str(r.missed))
            table.add_row(*map(Text, (*cells, recent)))
        yield table
    if len(found.latest) > len(shown):
        more = plural(len(found.latest) - len(shown), "more lesson")
        yield Text(f"and {more}, quizzed earlier: attn-tutor progress LESSON shows one")
    yield Text("recent: right first try / asked, in the last 5 quizzes, oldest first", style="dim")
    weakest = history.practise_next(rows)
    if weakest is not None:
        step = weakest.step.split(".")[-1]
        line = (
            f"Practise next: {weakest.step} in {weakest.lesson} "
            f"(attn-tutor quiz {shlex.quote(weakest.lesson)} --steps {step})"
        )
        yield Text(visible(line))
