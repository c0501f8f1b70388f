"""Practice that remembers: a Leitner box per (lesson, step), replayed from the quiz history.

Each quiz that asks about a step moves it: every cell right at the first try sends the step up
one box (at most ``MAX_BOX``); a miss, or a cell that needed a hint, sends it back to box 1.
A step is due again ``INTERVAL_DAYS[box]`` days after it was last asked: box 1 at once, box 5
after two weeks. Nothing is stored but the history itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

INTERVAL_DAYS = {1: 0, 2: 1, 3: 3, 4: 7, 5: 14}
MAX_BOX = max(INTERVAL_DAYS)
MAX_CARDS = 10_000  # (lesson, step) pairs followed; a history of more is not one person's


@dataclass
class Card:
    """One step of one lesson: its box and when it was last asked."""

    lesson: str
    step: str  # "scores", "head2.Z"
    box: int = 1
    seen: datetime | None = None

    @property
    def due(self) -> datetime:
        start = self.seen or datetime.min.replace(tzinfo=UTC)
        return start + timedelta(days=INTERVAL_DAYS[self.box])

    @property
    def name(self) -> str:
        """The step name without its head: what ``quiz --steps`` takes."""
        return self.step.rsplit(".", 1)[-1]


def _when(text: object) -> datetime | None:
    if not isinstance(text, str) or len(text) > 40:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def cards(
    records: Iterable[dict],  # type: ignore[type-arg]
    lesson: str | None = None,
    steps: Collection[str] | None = None,
) -> dict[tuple[str, str], Card]:
    """Every (lesson, step) the history asked about, with its box, oldest record first; only
    ``steps`` (names without the head) when given: a history is a file anyone may have edited,
    and a step the lesson cannot ask about is never chosen, shown or due."""
    out: dict[tuple[str, str], Card] = {}
    for rec in records:
        name = str(rec.get("lesson"))
        if lesson is not None and name != lesson:
            continue
        good: dict[str, bool] = {}
        for cell in rec.get("cells", []):
            if not isinstance(cell, dict) or not isinstance(cell.get("step"), str):
                continue
            if steps is not None and cell["step"] not in steps:
                continue
            head = cell.get("head")
            key = f"head{head}.{cell['step']}" if type(head) is int else cell["step"]
            good[key] = good.get(key, True) and cell.get("outcome") == "first"
        when = _when(rec.get("time"))
        for step, right in good.items():
            if (name, step) not in out and len(out) >= MAX_CARDS:
                continue
            card = out.setdefault((name, step), Card(name, step))
            card.box = min(card.box + 1, MAX_BOX) if right else 1
            card.seen = when or card.seen
    return out


def boxes(found: dict[tuple[str, str], Card], lesson: str) -> dict[str, int]:
    """A lesson's box per step name (the lowest of its heads): what ``quiz.choose`` weighs."""
    out: dict[str, int] = {}
    for card in found.values():
        if card.lesson == lesson:
            out[card.name] = min(out.get(card.name, MAX_BOX), card.box)
    return out


def due(found: dict[tuple[str, str], Card], lesson: str, now: datetime) -> list[Card]:
    """The lesson's steps due now, lowest box first."""
    ready = [c for c in found.values() if c.lesson == lesson and c.due <= now]
    return sorted(ready, key=lambda c: (c.box, c.due))


def next_due(found: dict[tuple[str, str], Card], lesson: str) -> Card | None:
    """The lesson's step that comes due soonest."""
    mine = [c for c in found.values() if c.lesson == lesson]
    return min(mine, key=lambda c: c.due) if mine else None


def when_text(when: datetime, now: datetime) -> str:
    """``in 3 days (2026-12-04)``, ``tomorrow (2026-12-02)``, ``in 5 hours``."""
    left = when - now
    if left < timedelta(days=1):
        hours = max(1, round(left.total_seconds() / 3600))
        return f"in {hours} hour{'s' if hours != 1 else ''}"
    days = round(left.total_seconds() / 86400)
    word = "tomorrow" if days == 1 else f"in {days} days"
    return f"{word} ({when.date().isoformat()})"


def nothing_due(found: dict[tuple[str, str], Card], lesson: str, now: datetime) -> str:
    """What ``quiz --review`` says when nothing is due: when the next step is, or how to start."""
    card = next_due(found, lesson)
    if card is None:
        return f"Nothing to review in {lesson} yet: no quizzes of it. Start with: attn-tutor quiz"
    return (
        f"Nothing is due for review in {lesson}. Next due: {card.step}, {when_text(card.due, now)}."
    )
