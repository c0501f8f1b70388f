"""A quiz session, as ``attn-tutor quiz`` runs it and a notebook can: which questions to ask
(the steps given, or the review that is due from the history), then the ask-loop with an
injected console and input, and the record saved to the history when it ends, however it ends.

    plan = quiz_plan(d, review=True)
    if plan.nothing_due is None:
        sitting = QuizSitting(plan)
        sitting.run(console, io.StringIO("0.5\\nquit\\n"))
        sitting.result.score, sitting.problems
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from tutor.assess import history
from tutor.assess import quiz as qz
from tutor.assess import review as rv
from tutor.core.engine import Derivation
from tutor.text.format import plural

if TYPE_CHECKING:
    from rich.console import Console


@dataclass
class QuizPlan:
    """The questions of one quiz and why they were chosen. ``nothing_due``: with ``review``,
    when no step is due, the sentence that says when one will be (and no questions)."""

    d: Derivation
    questions: list[qz.Question]
    seed: int
    steps: list[str]  # the steps asked about: given, or those due (empty: every step)
    review: bool = False
    missed: list[str] = field(default_factory=list)  # steps missed lately, asked more
    nothing_due: str | None = None

    def heading(self) -> list[Text]:
        """The lines a quiz opens with: its title, how many questions, the seed, and why these."""
        lesson = self.d.lesson
        out = [
            Text.assemble(
                (f"Quiz: {lesson.title}", "bold"),
                f"  ({plural(len(self.questions), 'question')}, seed {self.seed}; "
                f"answers to {plural(lesson.precision, 'place')})",
            )
        ]
        if self.review:
            out.append(Text(f"Review of the steps due: {', '.join(self.steps)}", style="dim"))
        elif self.missed:
            out.append(
                Text(f"More of what you missed lately: {', '.join(self.missed)}", style="dim")
            )
        return out


def quiz_plan(
    d: Derivation,
    steps: list[str] | None = None,
    count: int | None = None,
    seed: int | None = None,
    review: bool = False,
    now: datetime | None = None,
) -> QuizPlan:
    """Choose a quiz's questions: about ``steps`` (default: every step, more of those missed
    lately), or with ``review`` only the steps the history says are due. ``seed`` (default:
    random) chooses the same questions again."""
    chosen = list(steps or [])
    seed = random.SystemRandom().randrange(1_000_000) if seed is None else seed
    now = now or datetime.now(UTC)
    name = d.lesson.name
    cards = {} if chosen else rv.cards(history.stream(), name, qz.quiz_steps(d))
    if review:
        due = rv.due(cards, name, now)
        if not due:
            return QuizPlan(d, [], seed, [], True, nothing_due=rv.nothing_due(cards, name, now))
        chosen = list(dict.fromkeys(card.name for card in due))
        count = count or min(d.lesson.quiz.count, 2 * len(chosen))
    boxes = rv.boxes(cards, name)
    questions = qz.choose(d, chosen or None, count, seed, boxes)
    missed = [step for step, box in boxes.items() if box == 1]
    return QuizPlan(d, questions, seed, chosen, review, missed)


class QuizSitting:
    """One quiz of a plan, asked and saved. ``result`` fills in as the quiz goes and
    ``problems`` says what went wrong saving the record: both are there after ``run``, even
    when it ends by an exception (an internal error, a signal)."""

    def __init__(self, plan: QuizPlan) -> None:
        self.plan = plan
        self.result = qz.Result(planned=len(plan.questions))
        self.problems: list[str] = []

    def run(
        self,
        console: Console,
        stream: TextIO | None = None,
        ending: Callable[[str], str] = lambda ended: ended,
    ) -> None:
        """Ask every question (``stream``: the answers, else the console's input); then, after
        an internal error too, save the record to the history, so what was done is kept.
        ``ending`` may give a better word for how the quiz ended (a signal, the output
        failing) just before it is saved."""
        d = self.plan.d
        try:
            qz.run(d, self.plan.questions, console, stream, result=self.result)
        finally:
            self.result.ended = ending(self.result.ended)
            when = datetime.now(UTC).isoformat(timespec="seconds")
            record = qz.record(self.result, d.lesson.name, self.plan.seed, when)
            self.problems = history.append(record)

    def next_command(self) -> str | None:
        """The line that ends the quiz (what to do next), or None when it ended in an error."""
        if self.result.ended in ("error", "output-failed"):
            return None
        return qz.next_command(self.result, self.plan.d.lesson.name)
