"""Quiz mode: pure question choice and texts, and a thin ask-loop with an injected console.

The loop never prints except through the console it is given, and reads from the stream it is
given (a file or ``io.StringIO``) or, when there is none, from the terminal. Judging lives in
``tutor.assess.judge`` so the worksheet grader judges exactly the same way.
"""

from __future__ import annotations

import functools
import random
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from rich.table import Table
from rich.text import Text

from tutor.assess import judge as jd
from tutor.core import engine as en
from tutor.core import kinds
from tutor.core.decode import Append
from tutor.core.engine import Derivation, Step
from tutor.core.errors import AnswerError, UsageError
from tutor.core.numbers import Answer, read_answer
from tutor.core.positions import Rotate
from tutor.text import format as fmt
from tutor.text import steps, theme
from tutor.text import working as wk
from tutor.text.cells import cell_name, said
from tutor.text.words import visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

# the steps a quiz asks, in the order they are worked, and where the extra questions go when
# the count does not split evenly (the later, harder steps first): tutor.core.kinds
QUIZ_STEPS, PRIORITY = kinds.QUIZ_STEPS, kinds.PRIORITY  # (as the table has them at import)
MAX_TRIES = 3
MASTERED = 4  # a step in this Leitner box or above is asked only when there is room
COMMANDS = ("hint", "skip", "show", "quit")
MissHint = Callable[["Question", int], str]  # (question, places) -> the hint after a miss


def formula(d: Derivation, step: Step, turned: bool = False) -> str:
    """The formula a question's cell follows, as the quiz shows it above the inputs (its words
    in ``tutor.text.steps``: cross-attention, RoPE and the column layout have their own)."""
    return steps.say(step, "quiz", d.lesson, turned)


# ---------------------------------------------------------------------------------------------
# choosing questions (pure)


@dataclass(frozen=True)
class Question:
    """One cell to compute."""

    step: Step
    i: int
    j: int

    @property
    def name(self) -> str:
        """``Q[cats, 1]``, ``head2.Z[cats, 1]``."""
        return cell_name(self.step, self.i, self.j)


def quiz_steps(d: Derivation) -> list[str]:
    """The steps of this lesson that can be asked about, in the order they are computed."""
    made = {s.name for s in d.steps if not s.given}
    return [name for name in kinds.QUIZ_STEPS if name in made]


def _askable(step: Step, i: int, j: int) -> bool:
    """Not a masked score, and not a weight that the mask forces to 0."""
    if step.cells[i][j].masked:
        return False
    return not step.hidden(i, j)


def choose(
    d: Derivation,
    steps: list[str] | None = None,
    count: int | None = None,
    seed: int = 0,
    boxes: dict[str, int] | None = None,
) -> list[Question]:
    """About ``count`` cells across ``steps``, in the order of the computation, random within a
    step; the same seed gives the same questions. Defaults come from the lesson's ``quiz:``.

    ``boxes`` (a step's Leitner box from the history, 1 = missed last time; a step not in it is
    new) weights the share: a step in box 1 (missed or hinted last time) gets three cells a round,
    the rest one, and steps mastered (box 4 and up) come last in each round."""
    available = quiz_steps(d)
    names = steps or list(d.lesson.quiz.steps) or available
    for name in names:
        if name not in available:
            raise UsageError(
                f"cannot quiz on {name!r} in this lesson; quiz steps: {', '.join(available)}"
            )
    total = count or d.lesson.quiz.count
    names = [n for n in kinds.QUIZ_STEPS if n in names]
    pools = {
        n: [
            (s, i, j)
            for s in d.steps
            if s.name == n
            for i in range(len(s.rows))
            for j in range(len(s.cols))
            if _askable(s, i, j)
        ]
        for n in names
    }
    share = dict.fromkeys(names, 0)
    order = [n for n in kinds.PRIORITY if n in names]
    per_round = dict.fromkeys(names, 1)
    if boxes:
        order.sort(key=lambda n: boxes.get(n, 3) >= MASTERED)  # stable: priority within
        per_round = {n: 3 if boxes.get(n) == 1 else 1 for n in names}
    left = total
    while left and any(share[n] < len(pools[n]) for n in order):
        for n in order:
            for _ in range(per_round[n]):
                if left and share[n] < len(pools[n]):
                    share[n] += 1
                    left -= 1
    rng = random.Random(seed)
    out = []
    for n in names:  # computation order; within a step, the random order of the draw
        picks = rng.sample(pools[n], share[n])
        picks.sort(key=lambda p: p[0].head or 0)  # stable: head 1 before head 2
        out += [Question(s, i, j) for s, i, j in picks]
    return out


# ---------------------------------------------------------------------------------------------
# what the student sees (pure)


def _values(cells: Iterable, places: int) -> str:  # type: ignore[type-arg]
    return "[" + ", ".join(fmt.operand(c, places) for c in cells) + "]"


def turned_words(line: str) -> str:
    """An input line for the column layout: every table is turned, so a row is a column."""
    return re.sub(r"\b(row|column)\b", lambda m: "column" if m[0] == "row" else "row", line)


def inputs(q: Question, places: int) -> list[str]:
    """The inputs the cell needs: the row and column involved, as the walk shows them."""
    return rule_inputs(q.step, q.i, q.j, places)


@functools.singledispatch
def rule_inputs(step: Step, i: int, j: int, places: int) -> list[str]:
    """``inputs`` by the step's rule: for a rule with no registration of its own, each cell
    it reads (once, though the rule may read it twice), as its table shows it."""
    return [
        ", ".join(
            f"{cell_name(*r)} = {fmt.operand(r.step.cells[r.i][r.j], places)}"
            for r in dict.fromkeys(step.sources(i, j))
        )
    ]


@rule_inputs.register(en.Given)
@rule_inputs.register(en.Mask)
@rule_inputs.register(en.Concat)
@rule_inputs.register(Append)
def _(step: Step, i: int, j: int, places: int) -> list[str]:
    return []  # given, or a copy of a cell: nothing to work from


@rule_inputs.register
def _(step: en.Product, i: int, j: int, places: int) -> list[str]:
    left, right = step.args
    if step.transpose:
        return [
            f"query of {said(step.rows[i])} (row {said(left.rows[i])} of {left.key}): "
            + _values(left.cells[i], places),
            f"key of {said(step.cols[j])} (row {said(right.rows[j])} of {right.key}): "
            + _values(right.cells[j], places),
        ]
    return [
        f"row {said(left.rows[i])} of {left.key}: {_values(left.cells[i], places)}",
        f"column {right.cols[j]} of {right.key}: {_values(right.column(j), places)}",
    ]


@rule_inputs.register
def _(step: en.Scale, i: int, j: int, places: int) -> list[str]:
    (scores,) = step.args
    name = cell_name(scores, i, j)
    if step.by is not None or step.of != "d_k":  # the lesson's own scale (issue 41)
        by = f"{step.of} = {step.divisor}" if step.by is None else f"s = {wk.divisor_text(step)}"
        return [f"{name} = {fmt.operand(scores.cells[i][j], places)}", by]
    return [f"{name} = {fmt.operand(scores.cells[i][j], places)}", f"d_k = {step.divisor}"]


@rule_inputs.register
def _(step: en.Times, i: int, j: int, places: int) -> list[str]:
    (scaled,) = step.args
    name = cell_name(scaled, i, j)
    return [f"{name} = {fmt.operand(scaled.cells[i][j], places)}", f"t = {wk.factor_text(step)}"]


@rule_inputs.register
def _(step: en.Sum, i: int, j: int, places: int) -> list[str]:
    return [
        f"{cell_name(*r)} = {fmt.operand(r.step.cells[r.i][r.j], places)}"
        for r in step.sources(i, j)
    ]


@rule_inputs.register
def _(step: Rotate, i: int, j: int, places: int) -> list[str]:
    a, b = step.sources(i, j)
    cos, sin = wk.turn_texts(step, i, j // 2)
    return [
        f"{cell_name(*a)} = {fmt.operand(a.step.cells[a.i][a.j], places)}, "
        f"{cell_name(*b)} = {fmt.operand(b.step.cells[b.i][b.j], places)}",
        f"{said(step.rows[i])} is at position {i + step.shift} (counting from 0): angle "
        f"{wk.angle_text(step, i, j // 2)}, cos = {cos}, sin = {sin}",
    ]


@rule_inputs.register
def _(step: en.Softmax, i: int, j: int, places: int) -> list[str]:
    (src,) = step.args
    row = ", ".join(
        f"{c} {fmt.operand(x, places)}" for c, x in zip(src.cols, src.cells[i], strict=True)
    )
    return [f"row {said(src.rows[i])} of {src.key}: {row}"]


HINT_LEVELS = 3  # which row and column; the terms with blanks; the terms filled in
_NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?")


def hint(q: Question, places: int, level: int = HINT_LEVELS) -> str:
    """Hints come in steps: 1 names the row and column, 2 lays out the terms with blanks,
    3 fills the terms in (the arithmetic is still left to do)."""
    w = wk.working(q.step, q.i, q.j, places)
    if w.hint is None:
        return f"{q.name}: see the walk of {q.step.key}"
    if level <= 1:
        return f"{q.name} = {w.how}"
    if level == 2:
        blanks = _NUMBER.sub("__", wk.plain(w.work[0]))
        tail = w.blanks.split("  ", 1)[1] if "  " in w.blanks else ""
        joint = "\n  = " if "\n" in w.hint else " = "  # laid out as the full hint is
        return f"{q.name} = {w.how}{joint}{blanks}" + (f"  {tail}" if tail else "")
    return w.hint


def value_text(q: Question, places: int) -> str:
    """``= 2``, ``= 2√2 ≈ 2.83`` or ``= 1/(2 + e^√2) ≈ 0.16``: the exact form when it is short."""
    return wk.working(q.step, q.i, q.j, places).result()


def working(q: Question, places: int) -> str:
    """The full working of the cell, ending in its value."""
    return wk.full_text(q.step, q.i, q.j, places)


def read_as(answer: Answer, places: int) -> str | None:
    """How an expression answer was read: ``read as 2/√2 = √2 ≈ 1.41``; None for a number."""
    if answer.plain:
        return None
    typed = fmt.typed_text(answer.text)
    parts = [f"read as {typed}"]
    if answer.exact_form:
        exact = fmt.exact_text(answer.value)
        if exact != typed and len(exact) <= 50:
            parts.append(exact)
    if answer.value.is_Integer:  # "= 3" says it all; "≈ 3.00" would only add noise
        return " = ".join(parts)
    approx = fmt.expr_rounded(answer.value, places)
    if not (answer.value.is_Rational and approx == parts[-1].removeprefix("read as ")):
        return " = ".join(parts) + f" ≈ {approx}"
    return " = ".join(parts)


def confirmation(q: Question, verdict: jd.Verdict, places: int) -> str:
    """What a right answer earns: a short confirmation, with the exact form when it is nicer."""
    if verdict.kind == "hand":
        return f"Right, {verdict.way}. Exactly, {q.name} {value_text(q, places)}."
    return f"Right: {q.name} {value_text(q, places)}"


# ---------------------------------------------------------------------------------------------
# the ask-loop


TIE = "|"  # between the slips that explain one answer equally well (history: one slip)


@dataclass
class Item:
    """How one question went."""

    question: Question
    outcome: str = "missed"  # "first" | "hints" | "missed"
    tries: int = 0
    hinted: bool = False
    hints: int = 0  # how many hint steps were shown (see HINT_LEVELS)
    skipped: bool = False
    slips: list[str] = field(default_factory=list)
    unfinished: bool = False  # the quiz ended while this question was being worked (missed)


@dataclass
class Result:
    """A quiz so far: what was asked and how it ended."""

    planned: int
    items: list[Item] = field(default_factory=list)
    ended: str = "finished"  # "finished" | "quit" | "ctrl-c" | "ctrl-d" | "error"

    @property
    def score(self) -> int:
        """Right at the first try: the count that says what the student can do alone."""
        return self.count("first")

    def count(self, outcome: str) -> int:
        return sum(item.outcome == outcome for item in self.items)


MAX_LINE = 1000  # characters of one typed line that are kept: far more than an answer may have


class _Quit(Exception):
    """The student typed quit."""


def read_line(console: Console, stream: TextIO | None, prompt: str) -> str:
    """One line of input; EOFError at the end. Echoes lines read from a stream.

    Input that cannot be decoded (``PYTHONIOENCODING=utf-16`` with a UTF-8 terminal) ends the
    quiz as a closed input does, with a word about why: the next line could not be read either.
    """
    try:
        if stream is None:
            return console.input(Text(prompt, style="bold"))
        console.print(Text(prompt, style="bold"), end="")
        line = stream.readline(MAX_LINE + 1)
    except UnicodeError:
        encoding = getattr(stream or sys.stdin, "encoding", None) or "the expected encoding"
        console.print()
        console.print(
            Text(f"The input could not be read as {encoding} text (see PYTHONIOENCODING).")
        )
        raise EOFError from None
    if not line:
        console.print()
        raise EOFError
    if len(line) > MAX_LINE and not line.endswith("\n"):  # drop the rest; keep enough to refuse
        length = len(line) + _skip_line(stream)
        console.print(Text(f"{visible(line[:40])}… ({length} characters)"))
        return line
    console.print(Text(visible(line.rstrip("\r\n"))))  # as typed, escape sequences spelled out
    return line


def _skip_line(stream: TextIO) -> int:
    """Read the rest of a line (a chunk at a time, never all at once); return its length."""
    skipped = 0
    while chunk := stream.readline(MAX_LINE):
        skipped += len(chunk.rstrip("\r\n"))
        if chunk.endswith("\n"):
            break
    return skipped


def ask(
    d: Derivation,
    q: Question,
    number: int,
    total: int,
    console: Console,
    stream: TextIO | None,
    places: int,
    item: Item | None = None,
    miss_hint: MissHint | None = None,
) -> Item:
    """Ask one question until it is right, missed, skipped or shown. ``item`` (a fresh one by
    default) is filled in as the student goes, so a quiz ended mid-question still has it.
    ``miss_hint``: the hint after a first miss (the learning path works the first term);
    by default the first step of the hints."""
    item = Item(q) if item is None else item
    console.print()
    console.print(
        Text.assemble((f"Question {number}/{total}: ", "bold"), (q.name, f"bold {theme.ACCENT}"))
    )
    columns = d.lesson.layout == "columns"  # the cell as the turned tables show it
    shown = formula(d, q.step, turned=columns)
    console.print(Text(shown, style="dim"))
    if columns:
        row, col = said(q.step.cols[q.j]), said(q.step.rows[q.i])
        where = f"row {row}, column {col} of the turned {q.step.key}"
        console.print(Text(f"  (layout columns: {where})", style="dim"))
    for line in inputs(q, places):
        console.print(Text("  " + (turned_words(line) if columns else line)))
    while True:
        text = read_line(console, stream, f"{q.name} = ").strip()
        command = text.lower()
        if command in ("quit", "exit", "q"):
            raise _Quit
        if command == "hint":
            _give_hint(console, q, places, item)
            continue
        if command in ("skip", "show"):
            item.skipped = True
            if command == "show":
                console.print(Text(working(q, places)))
            else:
                console.print(Text(f"Skipped. {q.name} {value_text(q, places)}"))
            return item
        if not text or command in ("help", "?"):
            from tutor.text.plain import reads_as

            console.print(  # e^1.41 is read aloud as a power: the plain view says what to type
                Text.assemble(
                    "Type a number (0.16, 1/3, sqrt(2), ",
                    reads_as("e^1.41", "exp(1.41)"),
                    f"/(...)), or {', '.join(COMMANDS)}.",
                )
            )
            continue
        try:
            answer = read_answer(text)
        except AnswerError as err:
            why = str(err).removeprefix("could not read ")
            console.print(Text(f"Could not read {why}. That did not use a try."))
            continue
        echo = read_as(answer, places)
        if echo:  # it quotes the typed text: escape sequences spelled out
            console.print(Text(visible(echo), style="dim"))
        judge = jd.judge_for(d, places)
        verdict = judge.judge(q.step, q.i, q.j, answer)
        if verdict.kind == "fewer":  # right as far as it goes: ask for the places, no try used
            console.print(
                Text(f"Nearly: {verdict.message}. That did not use a try.", style=theme.WARN)
            )
            continue
        item.tries += 1
        if verdict.right:
            item.outcome = "first" if item.tries == 1 and not item.hinted else "hints"
            console.print(Text("✓ " + confirmation(q, verdict, places), style=theme.GOOD))
            return item
        slips = judge.slips(q.step, q.i, q.j, answer)
        if slips:
            # one wrong answer is one slip: a tie of two explanations is kept as "a|b"
            item.slips.append(TIE.join(slip.name for slip in slips))
            named = "; or ".join(slip.message for slip in slips)
            console.print(Text(f"✗ Not quite: {named}.", style=theme.BAD))
        else:
            console.print(Text("✗ Not quite.", style=theme.BAD))
        left = MAX_TRIES - item.tries
        if not left:
            console.print(Text("Here is the working:"))
            console.print(Text(working(q, places)))
            return item
        if item.tries == 1 and not item.hinted and miss_hint is not None:
            item.hinted, item.hints = True, 1
            console.print(Text("Hint: " + miss_hint(q, places), style=theme.WARN))
        elif item.tries == 1 and not item.hinted:  # the first step only: never the terms
            _give_hint(console, q, places, item)
        console.print(Text(f"Try again ({left} {'tries' if left > 1 else 'try'} left)."))


def _give_hint(console: Console, q: Question, places: int, item: Item) -> None:
    """The next step of hints (the last one again, with a word about ``show``)."""
    item.hinted = True
    item.hints = min(item.hints + 1, HINT_LEVELS)
    console.print(Text("Hint: " + hint(q, places, item.hints), style=theme.WARN))
    if item.hints == HINT_LEVELS:
        console.print(Text("That was the last hint; show gives the whole working.", style="dim"))


def run(
    d: Derivation,
    questions: Iterable[Question],
    console: Console,
    stream: TextIO | None = None,
    places: int | None = None,
    result: Result | None = None,
    summarise: bool = True,
    miss_hint: MissHint | None = None,
) -> Result:
    """Ask every question; Ctrl-C, Ctrl-D and ``quit`` end the quiz with what was done so far.

    ``result`` (a fresh one by default) is filled in as the quiz goes: a caller that passes its
    own still has what was done when a bug ends the quiz (``ended`` is then "error"), to save it
    before the error is reported. ``questions`` may be a generator that reads ``result`` to
    decide whether to ask more (``learn`` stops at a streak); ``result.planned`` is then the
    most it may ask, shown as each question's total. ``summarise``: print the summary table.
    """
    places = d.lesson.precision if places is None else places
    if result is None:
        questions = list(questions)
        result = Result(planned=len(questions))
    console.print(
        Text(
            "Type your answer to each question (a number, a fraction or an expression), or "
            f"{', '.join(COMMANDS)}.",
            style="dim",
        )
    )
    current: Item | None = None
    try:
        for n, q in enumerate(questions, 1):
            current = Item(q)
            result.items.append(
                ask(d, q, n, result.planned, console, stream, places, current, miss_hint)
            )
            current = None
    except _Quit:
        result.ended = "quit"
    except KeyboardInterrupt:
        result.ended = "ctrl-c"
        console.print()
    except EOFError:
        result.ended = "ctrl-d"
    except Exception:
        result.ended = "error"
        raise
    finally:
        if current is not None and (current.tries or current.hinted):
            # ended mid-question after a try or a hint: it was asked, and it counts as missed
            current.unfinished = True
            result.items.append(current)
    for part in summary(result) if summarise else ():
        console.print(part)
    return result


def summary(result: Result) -> list[RenderableType]:
    """Per step: right first try, right after hints, missed; the score on the last line."""
    out: list[RenderableType] = [Text()]
    done = len(result.items)
    if result.ended != "finished":
        out.append(
            Text(f"Quiz ended early: {done} of {fmt.plural(result.planned, 'question')} asked.")
        )
        for item in result.items:
            if item.unfinished:
                out.append(Text(f"{item.question.name} was left unfinished; it counts as missed."))
    if result.items:
        table = Table(title="Summary")
        for col in ("step", "right first try", "right after hints", "missed"):
            table.add_column(col, justify="left" if col == "step" else "right")
        rows: dict[str, list[int]] = {}
        for item in result.items:
            counts = rows.setdefault(item.question.step.key, [0, 0, 0])
            counts[("first", "hints", "missed").index(item.outcome)] += 1
        for key, counts in rows.items():
            table.add_row(key, *(str(c) for c in counts))
        out.append(table)
    out.append(Text(score_line(result), style="bold"))
    return out


def score_line(result: Result) -> str:
    """``Score: 2/8 at the first try (3 after a hint, 3 missed)``: the score is what was right
    without help; the others are shown beside it."""
    done = len(result.items)
    line = f"Score: {result.score}/{done} at the first try"
    if done > result.score:
        line += f" ({result.count('hints')} after a hint, {result.count('missed')} missed)"
    return line


def next_command(result: Result, lesson: str) -> str:
    """The one line that ends a quiz: what to do next, and why."""
    import shlex

    if not result.items:
        return "Next: attn-tutor learn  (the path, stage by stage)"
    if any(item.outcome != "first" for item in result.items):
        return f"Next: attn-tutor quiz {shlex.quote(lesson)} --review  (what you missed comes back)"
    return "Next: attn-tutor progress  (your record, step by step)"


def record(result: Result, lesson: str, seed: int, when: str) -> dict[str, object]:
    """The history record of one quiz (JSON-ready)."""
    return {
        "version": 1,
        "lesson": lesson,
        "time": when,
        "seed": seed,
        "ended": result.ended,
        "planned": result.planned,
        "score": result.score,
        "cells": [
            {
                "step": it.question.step.name,
                "head": it.question.step.head,
                "row": it.question.step.rows[it.question.i],
                "col": it.question.step.cols[it.question.j],
                "outcome": it.outcome,
                "tries": it.tries,
                "hints": it.hints,
                "skipped": it.skipped,
                "slips": it.slips,
                "unfinished": it.unfinished,
            }
            for it in result.items
        ],
    }
