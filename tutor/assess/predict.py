"""Predict, then see (``walk --predict``): before a step is shown, the student works its cell.

One question per step, on the cell the walk is about to work, read and judged exactly as the
quiz does (``tutor.core.numbers.read_answer``, ``tutor.assess.judge``, the quiz's verdict
words). An empty answer skips; an answer that cannot be read, or that lacks decimal places, is
asked again without counting. The verdict is returned, to be shown with the step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from tutor.assess import judge as jd
from tutor.assess import quiz as qz
from tutor.core.errors import AnswerError
from tutor.core.numbers import read_answer
from tutor.text import steps
from tutor.text.theme import ACCENT, BAD, GOOD, WARN
from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import Console

    from tutor.core.engine import Derivation, Step


class StopPredicting(Exception):
    """The student typed quit at a prediction."""


@dataclass
class Tally:
    """How the predictions went: right, wrong and skipped, counted as they come."""

    right: int = 0
    wrong: int = 0
    skipped: int = 0

    @property
    def asked(self) -> int:
        return self.right + self.wrong + self.skipped

    def line(self) -> str:
        return f"Predictions: {self.right} right, {self.wrong} not quite, {self.skipped} skipped."


def askable(step: Step, i: int, j: int) -> bool:
    """A step the quiz asks about (worked, not given: X is asked only when it is E + P), and a
    cell that is not masked away."""
    if step.name not in qz.QUIZ_STEPS or step.given:
        return False
    return not step.cells[i][j].masked and not step.hidden(i, j)


def predict(
    d: Derivation,
    step: Step,
    cell: tuple[int, int],
    console: Console,
    read: Callable[[str], str],
    places: int,
    tally: Tally,
    judge: jd.Judge | None = None,
) -> list[Text] | None:
    """Ask for the cell, judge it; the verdict to show with the step (None: nothing asked)."""
    i, j = cell
    if not askable(step, i, j):
        return None
    q = qz.Question(step, i, j)
    console.print(
        Text.assemble(("Predict ", "bold"), (q.name, f"bold {ACCENT}"), " before you see it.")
    )
    console.print(Text(steps.said(step.name, "quiz"), style="dim"))
    for line in qz.inputs(q, places):
        console.print(Text("  " + line))
    console.print(
        Text(
            "Type your answer and press Enter; Enter alone just shows the step; q stops.",
            style="dim",
        )
    )
    judge = judge or jd.judge_for(d, places)
    while True:
        text = read(f"{q.name} = ").strip()
        if text.lower() in ("q", "quit", "exit"):
            raise StopPredicting
        if not text:
            tally.skipped += 1
            return [Text(f"Skipped. {q.name} {qz.value_text(q, places)}", style="dim")]
        try:
            answer = read_answer(text)
        except AnswerError as err:
            why = str(err).removeprefix("could not read ")
            console.print(Text(f"Could not read {why}. Try again, or Enter to skip."))
            continue
        verdict = judge.judge(step, i, j, answer)
        if verdict.kind == "fewer":
            console.print(Text(f"Nearly: {verdict.message}. Try again.", style=WARN))
            continue
        said = [Text(f"You predicted {visible(text)}.", style="dim")]
        if verdict.right:
            tally.right += 1
            return [*said, Text("✓ " + qz.confirmation(q, verdict, places), style=GOOD)]
        tally.wrong += 1
        slips = judge.slips(step, i, j, answer)
        why = ": " + "; or ".join(s.message for s in slips) if slips else ""
        return [
            *said,
            Text(f"✗ Not quite{why}. {q.name} {qz.value_text(q, places)}", style=BAD),
        ]


class Predictions:
    """What ``walk --predict`` asks before each step: ``cell_of(step)`` is the cell the walk
    works there. At the end of input a terminal's reader stops (Ctrl-D ends the walk); a
    script's input running out only ends the questions (``stop_at_eof`` False)."""

    def __init__(
        self,
        d: Derivation,
        cell_of: Callable[[Step], tuple[int, int]],
        console: Console,
        read: Callable[[str], str],
        places: int,
        stop_at_eof: bool,
    ) -> None:
        self.d, self.cell_of, self.console, self.read = d, cell_of, console, read
        self.places, self.stop_at_eof = places, stop_at_eof
        self.tally = Tally()
        self.judge: jd.Judge | None = None  # made at the first question (it remembers ranges)
        self.asking = True

    def __call__(self, step: Step, heading: str) -> list[Text] | None:
        if not self.asking:
            return None
        self.judge = self.judge or jd.judge_for(self.d, self.places)
        try:
            cell = self.cell_of(step)
            return predict(
                self.d, step, cell, self.console, self.read, self.places, self.tally, self.judge
            )
        except EOFError:
            if self.stop_at_eof:
                raise
            self.asking = False
            return None
