"""``progress``: a student's quiz history as tables, one per lesson, and what to practise next.

Reads a ``history.Summary``; returns Rich renderables, never prints (``tutor.cli`` does).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from tutor.assess import history
from tutor.assess.slips import reminder
from tutor.core.spec import STEP_NAMES
from tutor.text.format import plural
from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import RenderableType

SHOWN_LESSONS = 20  # a table for at most this many lessons


def progress_view(found: history.Summary, where: Path) -> Iterator[RenderableType]:
    """The tables of a history summary, the slips by frequency and the step to practise next."""
    if not found.quizzes:
        yield Text(f"No quizzes yet ({where}).")
        yield Text("Next: attn-tutor learn  (or a quiz of your own: attn-tutor quiz)")
        return
    heading = f"Progress over {plural(found.quizzes, 'quiz', 'quizzes')} ({visible(str(where))})"
    yield Text(heading, no_wrap=True, overflow="ignore")  # a path is never broken mid-name
    by_lesson = _by_lesson(found)
    for name, steps_done in by_lesson.items():
        # Text: names are not markup; visible: the history is a file anyone could have edited
        table = Table(title=Text(visible(name)), title_justify="left")
        for col in ("step", "asked", "first try", "hinted", "missed", "rate", "recent"):
            table.add_column(col, justify="left" if col == "step" else "right")
        for r in steps_done:
            recent = " ".join(f"{right}/{asked}" for right, asked in r.per_quiz[-3:])
            cells = (visible(r.step), str(r.asked), str(r.first), str(r.hints), str(r.missed))
            table.add_row(*map(Text, (*cells, f"{r.first_rate:.0%}", recent)))
        yield table
        slips = sorted(
            ((n, r.step, slip) for r in steps_done for slip, n in r.slips.items()),
            key=lambda t: -t[0],
        )
        if slips:
            yield Text("Slips, most frequent first:")
            for n, step, slip in slips[:SHOWN_SLIPS]:
                yield Text(visible(f"  {step}: {reminder(slip, n)}"))
    if len(found.latest) > len(by_lesson):
        more = plural(len(found.latest) - len(by_lesson), "more lesson")
        yield Text(f"and {more}, quizzed earlier: attn-tutor progress LESSON shows one")
    yield Text(
        "rate: right at the first try, of all asked; recent: the same, last 3 quizzes", style="dim"
    )
    nxt = next_step(found)
    if nxt is not None:
        weakest, command = nxt
        yield Text(visible(f"Practise next: {weakest.step} in {weakest.lesson} ({why(weakest)})"))
        # on a line of its own, never wrapped inside: cli prints it with soft wrap
        yield Text(visible(f"  {command}"), no_wrap=True, overflow="ignore")


SHOWN_SLIPS = 8  # slip lines per lesson


def _by_lesson(found: history.Summary) -> dict[str, list[history.StepProgress]]:
    # the lessons quizzed most recently, oldest of them first: a table per lesson stays readable
    # (and quick) however many lessons a history names
    shown = sorted(found.latest, key=found.latest.__getitem__)[-SHOWN_LESSONS:]
    by_lesson: dict[str, list[history.StepProgress]] = {name: [] for name in shown}
    for r in sorted(found.rows, key=_computation_order):
        by_lesson.get(r.lesson, []).append(r)
    return by_lesson


def _computation_order(r: history.StepProgress) -> tuple[int, int]:
    """Head by head, each in the order the steps are computed (Q before scores before Z)."""
    head, _, name = r.step.rpartition(".")
    number = int(head[4:]) if head[4:].isdecimal() else 0
    return number, STEP_NAMES.index(name) if name in STEP_NAMES else len(STEP_NAMES)


def why(r: history.StepProgress) -> str:
    """``missed 2 of 2 lately``: the reason a step is the one to practise."""
    recent = r.per_quiz[-3:]
    asked = sum(a for _, a in recent)
    right = sum(x for x, _ in recent)
    helped = sum(r.recent_hints[-3:])
    missed = asked - right - helped
    if missed:
        return f"missed {missed} of {asked} lately"
    if helped:
        return f"{helped} of {asked} needed a hint lately"
    return f"asked least: {plural(r.asked, 'time')}"


def next_step(found: history.Summary) -> tuple[history.StepProgress, str] | None:
    """The step to practise next and the command that practises it."""
    weakest = history.practise_next(found.rows)
    if weakest is None:
        return None
    step = weakest.step.split(".")[-1]
    return weakest, f"attn-tutor quiz {shlex.quote(weakest.lesson)} --steps {step}"


def progress_json(found: history.Summary, where: Path) -> dict[str, object]:
    """The same facts for scripts: per lesson and step, the counts, rate and slips."""
    nxt = next_step(found)
    return {
        "history": str(where),
        "quizzes": found.quizzes,
        "lessons": [
            {
                "lesson": name,
                "steps": [
                    {
                        "step": r.step,
                        "asked": r.asked,
                        "first_try": r.first,
                        "after_hints": r.hints,
                        "missed": r.missed,
                        "first_try_rate": round(r.first_rate, 4),
                        "recent": [list(q) for q in r.per_quiz],
                        "slips": [
                            {"slip": slip, "count": n, "reminder": reminder(slip, n)}
                            for slip, n in sorted(r.slips.items(), key=lambda t: -t[1])
                        ],
                    }
                    for r in rows
                ],
            }
            for name, rows in _by_lesson(found).items()
        ],
        "next": None
        if nxt is None
        else {"lesson": nxt[0].lesson, "step": nxt[0].step, "command": nxt[1]},
        "problems": found.problems,
    }
