"""Which cells a stage of the learning path works and asks (issue 40: a stage that cannot be
passed by typing one number).

A stage opens with one cell of its step worked term by term, then asks cells in an order
fixed per stage, so that a stage is the same for every student and every sitting:

* a question's answer (as its table shows it) is never a common guess: not 0 or 1, not a
  value that three or more of the stage's cells share (typing it would pass them all), and
  not a whole number from −9 to 9 (a guesser's small integers, where a right guess at two
  tries is one in five);
* each answer differs from the answers of the questions just before it (a whole round's, when
  the stage has that many different answers), and the first differs from the worked cell's:
  typing the previous answer again never passes;
* when the lesson's own numbers cannot give a round of such answers (cats-chase-mice's K is
  mostly 1s, dog-bites-dog's X is ±1), the stage works the lesson with new numbers for the
  tokens (X, X_src, the next token's x; every W and P stays as the lesson has them), found by
  a seeded search from small numbers up, and says so. The seed is the stage's id.

Pure: no printing, no input.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from tutor.assess.learn import EXTRA, pool
from tutor.text import format as fmt

if TYPE_CHECKING:
    from tutor.assess.quiz import Question
    from tutor.core.course import Stage
    from tutor.core.engine import Derivation
    from tutor.core.lesson import Lesson, Matrix

GUESSES = (Decimal(0), Decimal(1))  # what a student types who has not worked anything
SMALL = 9  # whole numbers up to this size (either sign) are a guesser's "small integers"
SHARED = 3  # a value this many cells share is a guess that passes them all
# the practice numbers' ranges, tried in turn (smaller numbers first: less arithmetic)
RANGES = ((0, 3), (0, 4), (1, 5), (0, 6), (1, 9))
TRIES = 80  # seeded draws of new numbers per range
SHOWS = Decimal("0.1")  # a worked cell at least this large: 0.01 = 0.00·1 + … shows little


@dataclass(frozen=True)
class Plan:
    """A stage's cells: ``d`` the derivation the stage works (the lesson's own, or with new
    numbers when ``practice``), the ``worked`` cell shown first, and ``order``, the questions
    in the order they are asked (a round takes the next ones; a stage tried again goes on)."""

    d: Derivation
    worked: Question
    order: tuple[Question, ...]
    practice: tuple[str, ...] = ()  # the matrices given new numbers, when any
    own: Derivation | None = None  # the lesson's own derivation (what progress is kept of)

    @property
    def lesson(self) -> Derivation:
        """The stage's lesson as it is (its name and fingerprint go to the history)."""
        return self.own or self.d


def answer(q: Question, places: int) -> Decimal:
    """The answer as its table shows it (what a right student types)."""
    return fmt.as_shown(q.step.cells[q.i][q.j], places)


def _whole(value: Decimal) -> bool:
    return value == value.to_integral_value()


def guessable(value: Decimal, shared: set[Decimal], wholes: bool = True) -> bool:
    """Whether typing ``value`` without working is a likely guess (see the module's notes);
    ``wholes``: whether small whole numbers count (when every answer of the stage is whole)."""
    small = wholes and _whole(value) and abs(value) <= SMALL
    return value in GUESSES or value in shared or small


def fair_cells(d: Derivation, stage: Stage) -> dict[str, list[Question]]:
    """Per step asked, the cells of its idea (``learn.pool``) whose answers are not guesses.
    Small whole numbers are guesses only in a stage whose every answer is whole: where a step
    with decimals comes between, a guesser's integers break the streak there."""
    places = d.lesson.precision
    cells = pool(d, stage)
    counts: dict[Decimal, int] = {}
    for qs in cells.values():
        for q in qs:
            counts[answer(q, places)] = counts.get(answer(q, places), 0) + 1
    shared = {v for v, n in counts.items() if n >= SHARED}
    wholes = all(_whole(v) for v in counts)
    return {
        name: [q for q in qs if not guessable(answer(q, places), shared, wholes)]
        for name, qs in cells.items()
    }


def enough(d: Derivation, stage: Stage) -> bool:
    """A streak of different answers, none a guess (``count`` of them), and a fair cell in
    a step with decimals, or in every step the stage asks when all its answers are whole."""
    cells = fair_cells(d, stage)
    places = d.lesson.precision
    values = {answer(q, places) for qs in cells.values() for q in qs}
    mixed = any(not _whole(v) for v in values)
    return (mixed or all(cells.values())) and len(values) >= stage.count


def _size(d: Derivation, stage: Stage) -> tuple[bool, int, Decimal]:
    """How good a draw of new numbers is, best first: a fair cell in every step asked; fair
    cells enough for a round and a new one when it is tried again; then the least arithmetic
    (the smallest largest answer)."""
    places = d.lesson.precision
    cells = fair_cells(d, stage)
    fair = sum(map(len, cells.values()))
    top = max(abs(answer(q, places)) for qs in cells.values() for q in qs)
    return not all(cells.values()), -min(fair, stage.count + EXTRA + 1), top


def _tokens(lesson: Lesson) -> dict[str, Matrix]:
    """The token inputs a practice copy may renumber (never a W, never P)."""
    out = {"X": lesson.X}
    if lesson.X_src is not None:
        out["X_src"] = lesson.X_src
    if lesson.next is not None:
        out["x_new"] = (lesson.next.x,)
    return out


def _renumbered(lesson: Lesson, numbers: dict[str, Matrix]) -> Lesson:
    nxt = lesson.next
    if nxt is not None:
        nxt = replace(nxt, x=numbers["x_new"][0])
    return replace(lesson, X=numbers["X"], X_src=numbers.get("X_src", lesson.X_src), next=nxt)


def practice(lesson: Lesson, stage: Stage) -> tuple[Derivation, tuple[str, ...]] | None:
    """The lesson with new whole numbers for its tokens that give ``enough`` fair cells: a
    search seeded by the stage's id, smallest numbers first, the best draw by ``_size`` (the
    range stops growing once a draw is as good as it gets); None when none is found."""
    from tutor.core.engine import derive
    from tutor.core.errors import TutorError

    rng = random.Random(f"stage:{stage.id}")
    names = tuple(_tokens(lesson))
    best: list[Derivation] = []
    for low, high in RANGES:
        for _ in range(TRIES):
            numbers = {
                name: tuple(tuple((rng.randint(low, high), 1) for _ in row) for row in m)
                for name, m in _tokens(lesson).items()
            }
            try:
                d = derive(_renumbered(lesson, numbers))
            except TutorError:
                continue
            if enough(d, stage):
                best = sorted([*best, d], key=lambda d: _size(d, stage))[:1]
        if best and _size(best[0], stage)[:2] == (False, -(stage.count + EXTRA + 1)):
            break  # as good as a draw gets: no need of larger numbers
    return (best[0], names) if best else None


def _ordered(cells: dict[str, list[Question]], rng: random.Random, places: int) -> list[Question]:
    """Every fair cell once: each step's cells shuffled, the steps taken in turn (as a round
    alternates them), each time the first cell whose answer is not among the last answers
    (a round's worth), else the first."""
    queues = {name: rng.sample(qs, len(qs)) for name, qs in cells.items() if qs}
    window = max(1, len({answer(q, places) for qs in queues.values() for q in qs}) - 1)
    out: list[Question] = []
    names = list(queues)
    turn = 0
    while any(queues.values()):
        name = names[turn % len(names)]
        turn += 1
        queue = queues[name]
        if not queue:
            continue
        recent = {answer(q, places) for q in out[-window:]}
        pick = next((q for q in queue if answer(q, places) not in recent), queue[0])
        queue.remove(pick)
        out.append(pick)
    return out


def _worked(d: Derivation, stage: Stage, first: Question) -> Question:
    """The cell worked before the questions: in the first question's step, not near 0, next to it
    (same row, then same column), with another answer; a cell of the idea when there is one."""
    from tutor.assess import quiz as qz

    places = d.lesson.precision
    step = first.step
    idea = [q for q in pool(d, stage).get(step.name, []) if q.step is step]
    every = [q for q in qz.choose(d, [step.name], len(step.rows) * len(step.cols) * 4, 0)]
    every = [q for q in every if q.step is step]
    near = sorted(
        (q for q in idea + every if (q.i, q.j) != (first.i, first.j)),
        key=lambda q: (
            abs(answer(q, places)) < SHOWS,  # a cell of (nearly) nothing shows little
            q.i != first.i,
            q.j != first.j,
            abs(q.i - first.i) + abs(q.j - first.j),
        ),
    )
    other = [q for q in near if answer(q, places) != answer(first, places)]
    return (other or near or [first])[0]


@functools.lru_cache(maxsize=64)
def plan(d: Derivation, stage: Stage) -> Plan:
    """The stage's cells (see the module's notes); the same for the same stage and lesson."""
    places = d.lesson.precision
    own = d
    made: tuple[str, ...] = ()
    if not enough(d, stage):
        found = practice(d.lesson, stage)
        if found is not None:
            d, made = found
    rng = random.Random(f"order:{stage.id}")
    cells = fair_cells(d, stage)
    if not any(cells.values()):  # a course's own stage with no fair cell: its idea's cells
        cells = pool(d, stage)
    order = _ordered(cells, rng, places)
    worked = _worked(d, stage, order[0])
    order = [q for q in order if (q.step, q.i, q.j) != (worked.step, worked.i, worked.j)]
    return Plan(d, worked, tuple(order), made, own)


def questions(p: Plan) -> Iterator[Question]:
    """The plan's questions, round after round without end (from the start again when every
    cell was asked), never the same answer twice in a row."""
    places = p.d.lesson.precision
    last = answer(p.worked, places)
    while True:
        for q in p.order:
            if answer(q, places) == last and len(p.order) > 1:
                continue
            last = answer(q, places)
            yield q
