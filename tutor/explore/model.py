"""The explorer's lesson as a pure, editable model: no Textual here, so it is tested directly.

``Explorer`` holds a lesson and the explorer's own settings (mask on or off, what the scores
are divided by, a factor on the scaled scores), works them with the engine's own ``derive``
(the settings are its ``Options``; a memo reuses the steps an edit did not touch), and after
every change says which values went up or down and where a row's strongest key moved.
Edits and settings are undoable. Every given matrix can be edited: X (or E and P), X_src, the
heads' W_Q, W_K, W_V (a group's, for grouped heads), W_O and the next token's x.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from tutor.core import engine as en
from tutor.core import kinds
from tutor.core.engine import Cell, Derivation, Step
from tutor.core.errors import AnswerError
from tutor.core.lesson import Lesson, Matrix
from tutor.core.numbers import EXPECTED_ARGUMENT, LESSON_NUMBERS, read_rational
from tutor.core.spec import MAX_DENOMINATOR_DIGITS
from tutor.text import format as fmt
from tutor.text.cells import cell_name
from tutor.text.lessonyaml import entry_text

DIVISORS = ("root", "one", "d_k")  # scores ÷ √d_k, ÷ 1 (no scaling), ÷ d_k
DIVISOR_TEXT = {"root": "√d_k", "one": "1", "d_k": "d_k"}
# the lesson's own scale: (issue 41), which the d key starts from ("lesson" in the settings)
SAME_DIVISOR = {"sqrt_d_k": "root", "none": "one"}


def divisors(lesson: Lesson) -> tuple[str, ...]:
    """The d key's cycle: the lesson's own scale first, then the explorer's others."""
    same = SAME_DIVISOR.get(lesson.scale)
    return ("lesson", *(d for d in DIVISORS if d != same))


def divisor_text(divisor: str, lesson: Lesson) -> str:
    """A divisor setting as the explorer shows it: ``√d_k``, ``1``, ``√d_model``, ``2.5``."""
    if divisor != "lesson":
        return DIVISOR_TEXT[divisor]
    same = SAME_DIVISOR.get(lesson.scale)
    if same is not None:
        return DIVISOR_TEXT[same]
    if lesson.scale_by is not None:
        from tutor.text.working import number_text

        return number_text(lesson.scale_by)
    return "√d_model"


# factors a student steps through with [ and ]: 0 makes every row even, 10 makes it pick one
FACTORS: tuple[tuple[int, int], ...] = ((0, 1), (1, 4), (1, 2), (1, 1), (2, 1), (4, 1), (10, 1))
UP, DOWN = "▲", "▼"


# the explorer's variations of the lesson's computation are the engine's options (one pipeline)
Settings = en.Options


def factor_text(settings: Settings) -> str:
    """The factor on the scaled scores as a student reads it: ``2``, ``1/4``."""
    p, q = settings.factor
    return str(p) if q == 1 else f"{p}/{q}"


Times = en.Times  # the tempered step (scaled × t) is the engine's: one pipeline


Memo = en.Memo  # a step by what it was made from


# ---------------------------------------------------------------------------------------------
# editing a lesson's given matrices


EDITABLE = kinds.EDITABLE


def given_matrix(lesson: Lesson, name: str, head: int | None) -> Matrix:
    """The given matrix ``name`` (X or E, P, X_src, W_Q, W_K, W_V, W_O, x_new; Q, K, V when the
    lesson gives them) of ``head`` (1-based, or None); raise ``AnswerError`` for one the
    explorer cannot edit."""
    kind = kinds.BY_NAME.get(name)
    held = kind.held if kind is not None and (kind.editable or lesson.qkv) else None
    if kind is not None and held is not None:
        if kind.decoding and lesson.next is not None:
            return tuple(getattr(t, held) for t in lesson.decoding)  # a row per new token
        if kind.per_head:
            return getattr(lesson.heads[(head or 1) - 1], held)  # type: ignore[no-any-return]
        if not kind.decoding and getattr(lesson, held) is not None:
            return getattr(lesson, held)  # type: ignore[no-any-return]
        if held == "P":  # the lesson's P is empty: its sinusoidal positions are worked
            raise AnswerError(
                f"{name} is the sin/cos table of positions: worked from its formula, not typed"
            )
    raise AnswerError(f"{name} cannot be edited here; edit {', '.join(EDITABLE)}")


def _replaced(m: Matrix, i: int, j: int, entry: tuple[int, int]) -> Matrix:
    return tuple(
        tuple(entry if (r, c) == (i, j) else e for c, e in enumerate(row))
        for r, row in enumerate(m)
    )


def with_entry(
    lesson: Lesson, name: str, head: int | None, i: int, j: int, entry: tuple[int, int]
) -> Lesson:
    """The lesson with one entry of one given matrix replaced."""
    m = _replaced(given_matrix(lesson, name, head), i, j, entry)
    kind = kinds.BY_NAME[name]
    held = kind.held
    assert held is not None  # (given_matrix found it)
    if kind.decoding:  # the new tokens' rows
        assert lesson.next is not None
        new = [
            dataclasses.replace(t, **{held: row}) for t, row in zip(lesson.decoding, m, strict=True)
        ]
        return dataclasses.replace(lesson, next=new[0], next_after=tuple(new[1:]))
    if not kind.per_head:
        return dataclasses.replace(lesson, **{held: m})
    # a head's matrix; with grouped heads, W_K and W_V belong to the group: every head of it
    number = head or 1
    edited = (number,)
    if kind.grouped and lesson.kv_groups is not None:
        edited = lesson.group_heads(lesson.group_of(number))
    heads = [
        dataclasses.replace(h, **{held: m}) if k in edited else h
        for k, h in enumerate(lesson.heads, 1)
    ]
    return dataclasses.replace(lesson, heads=tuple(heads))


def read_entry(text: str, m: Matrix, i: int, j: int, name: str) -> tuple[int, int]:
    """A typed entry, read exactly (never evaluated), and held to the lesson format's limits;
    raises ``AnswerError`` saying what was found and what is expected."""
    if not text.strip():
        raise AnswerError(f"nothing typed; expected {EXPECTED_ARGUMENT}")
    entry = read_rational(text, EXPECTED_ARGUMENT, LESSON_NUMBERS)
    den = 1
    for r, row in enumerate(m):
        for c, (_, q) in enumerate(row):
            den = math.lcm(den, entry[1] if (r, c) == (i, j) else q)
    if den >= 10**MAX_DENOMINATOR_DIGITS:
        raise AnswerError(
            f"with {text.strip()} the entries of {name} would have a common denominator of more "
            f"than {MAX_DENOMINATOR_DIGITS} digits; use a few denominators (halves, thirds, …)"
        )
    return entry


# ---------------------------------------------------------------------------------------------
# what changed


def _compare(c: Cell) -> object:
    return -math.inf if c.masked else c.approx


SAME_DIGITS = en.APPROX_DIGITS - 5  # two irrational values alike to this many digits: the same
SAME = en.MP.mpf(10) ** -SAME_DIGITS


def _moved(old: Cell, new: Cell) -> bool:
    """True when a cell's value changed (its shown text may change with no change of value:
    a step's format goes from integers to decimals when one entry becomes 1/3). Rational
    values are compared exactly; an irrational one by its 40-digit approximation, taken as
    unchanged when the two agree to 35 digits (a row of scores all shifted by the same amount
    gives the same weights, worked along another path)."""
    if old.masked or new.masked:
        return old.masked != new.masked
    if old.q is not None and new.q is not None:
        return bool(old.q != new.q)
    a, b = old.approx, new.approx
    return a != b and bool(abs(a - b) > max(abs(a), abs(b)) * SAME)


Texts = dict[str, list[list[str]]]  # every step's cells as its table shows them


def texts_of(
    d: Derivation, places: int, old: Derivation | None = None, known: Texts | None = None
) -> Texts:
    """Every cell as shown; a step reused from ``old`` keeps its texts from ``known``."""
    kept = {id(s) for s in old.steps} if old is not None and known is not None else set()
    same = {s.key for s in d.steps if id(s) in kept}
    return {
        s.key: known[s.key]
        if known and s.key in same
        else [[fmt.shown(c, s, places) for c in row] for row in s.cells]
        for s in d.steps
    }


def marks(old: Derivation, new: Derivation) -> dict[tuple[str, int, int], str]:
    """▲ or ▼ for every cell whose value changed between two derivations (cells of a step
    that is new, or changed shape, are not marked: there is nothing to compare)."""
    before = {s.key: s for s in old.steps}
    out: dict[tuple[str, int, int], str] = {}
    for s in new.steps:
        o = before.get(s.key)
        if o is None or o is s or o.shape != s.shape:  # a reused step: nothing changed
            continue
        for i, (a_row, b_row) in enumerate(zip(o.cells, s.cells, strict=True)):
            for j, (a, b) in enumerate(zip(a_row, b_row, strict=True)):
                if _moved(a, b):
                    out[(s.key, i, j)] = UP if _compare(b) > _compare(a) else DOWN
    return out


def strongest(step: Step, i: int) -> int:
    """The key a row of weights gives most (the first of equals)."""
    row = step.cells[i]
    return max(range(len(row)), key=lambda k: (row[k].approx, -k))


class Move(NamedTuple):
    """A row of weights whose strongest key moved: ``weights[it]: cake → it``."""

    key: str  # the weights step, ``weights`` or ``head2.weights``
    row: int
    label: str  # the row's token
    before: str  # the key it gave most, and gives most now
    after: str

    def __str__(self) -> str:
        return f"{self.key}[{self.label}]: {self.before} → {self.after}"


def moves(old: Derivation, new: Derivation) -> list[Move]:
    """Every row of weights whose strongest key moved."""
    out = []
    for s in new.every("weights"):
        if not old.has("weights", s.head):
            continue
        o = old.step("weights", s.head)
        if o is s:
            continue
        for i in range(len(s.rows)):
            a, b = strongest(o, i), strongest(s, i)
            if a != b:
                out.append(Move(s.key, i, s.rows[i], s.cols[a], s.cols[b]))
    return out


# ---------------------------------------------------------------------------------------------
# the session


@dataclass(frozen=True)
class State:
    lesson: Lesson
    settings: Settings


@dataclass
class Explorer:
    """An editing session: the lesson as it is now, its derivation, undo and redo, and what
    the last change did (``marks``, ``moved``)."""

    original: Lesson
    state: State = field(init=False)
    derivation: Derivation = field(init=False)
    marks: dict[tuple[str, int, int], str] = field(default_factory=dict, init=False)
    moved: list[Move] = field(default_factory=list, init=False)
    done: list[State] = field(default_factory=list, init=False)
    undone: list[State] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.state = State(self.original, Settings(mask=self.original.mask == "causal"))
        self.memo: Memo = {}
        self.derivation = en.derive(self.state.lesson, self.state.settings, self.memo)
        self.texts = texts_of(self.derivation, self.places)

    @property
    def lesson(self) -> Lesson:
        return self.state.lesson

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def places(self) -> int:
        return self.original.precision

    @property
    def edited(self) -> bool:
        return self.lesson != self.original

    def _go(self, state: State) -> None:
        old, was = self.derivation, self.texts
        self.state = state
        self.derivation = en.derive(state.lesson, state.settings, self.memo)
        self.texts = texts_of(self.derivation, self.places, old, was)
        self.marks = marks(old, self.derivation)
        self.moved = moves(old, self.derivation)

    def _change(self, state: State) -> None:
        if state == self.state:
            self.marks, self.moved = {}, []
            return
        self.done.append(self.state)
        self.undone.clear()
        self._go(state)

    def edit(self, step: Step, i: int, j: int, text: str) -> str:
        """Replace entry (i, j) of a given matrix with the number typed; returns what was done.
        Raises ``AnswerError`` (nothing changes) when the text is not a number it may hold."""
        if not step.given:
            given = sorted({s.name for s in self.derivation.steps if s.given})
            raise AnswerError(
                f"{step.key} is worked out from other steps; edit a given matrix "
                f"({', '.join(given)})"
            )
        m = given_matrix(self.lesson, step.name, step.head)
        entry = read_entry(text, m, i, j, step.key)
        lesson = with_entry(self.lesson, step.name, step.head, i, j, entry)
        self._change(State(lesson, self.settings))
        return f"{cell_name(step, i, j)} = {typed_text(entry)}"

    def set_from(self, step: Step, i: int, j: int) -> str | None:
        """The lesson's own entry at (i, j) of a given matrix, as typed, when the student has
        set another one there (None: the entry is the lesson's, or the step is not editable)."""
        try:
            was = given_matrix(self.original, step.name, step.head)[i][j]
            now = given_matrix(self.lesson, step.name, step.head)[i][j]
        except (AnswerError, IndexError):
            return None
        return None if was == now else typed_text(was)

    def configure(self, **changes: object) -> None:
        """Change a setting (``mask``, ``divisor``, ``factor``), undoably."""
        self._change(State(self.lesson, dataclasses.replace(self.settings, **changes)))

    def undo(self) -> bool:
        if not self.done:
            return False
        self.undone.append(self.state)
        self._go(self.done.pop())
        return True

    def redo(self) -> bool:
        if not self.undone:
            return False
        self.done.append(self.state)
        self._go(self.undone.pop())
        return True


def typed_text(entry: tuple[int, int]) -> str:
    """An entry as a student types it: ``2``, ``0.5``, ``1/3`` (a lesson file quotes fractions)."""
    return entry_text(entry).strip('"')
