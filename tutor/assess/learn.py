"""The learning path: a course's stages in order, each a short explanation then questions
until the student has answered ``count`` (3) in a row right, each at the first or second try
with at most one hint. A round that can no longer reach the streak ends, and the stage is
tried again in place with new cells. The questions are cells that test the stage's idea (see
``pool``). Which stages are passed is kept in ``course.json`` beside the quiz history; steps
of passed stages come back for review when the history says they are due (``review.py``).

The loop takes its console and input stream (as the quiz does) and is handed, per stage, the
lesson's derivation and the explanation to show: it never imports the walk itself.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from tutor.assess import history
from tutor.core.course import Course, Stage
from tutor.core.errors import LessonError, TutorError
from tutor.text import theme

if TYPE_CHECKING:
    from datetime import datetime

    from rich.console import Console, RenderableType

    from tutor.assess import quiz as qz
    from tutor.assess.stageplan import Plan
    from tutor.core.engine import Derivation
    from tutor.core.lesson import Lesson

STATE_FILE = "course.json"
MAX_STATE_BYTES = 1_000_000
NOUN = "a course progress file"
BAR_WIDTH = 20
EXTRA = 2  # questions a round may ask beyond the streak it needs (a miss or two, early)
MAX_REVIEW = 3  # questions of review at the start of a sitting, at most


def state_path() -> Path:
    return history.history_dir() / STATE_FILE


def newcomer() -> bool:
    """True before the first quiz or ``learn``: no history and no course progress yet (the
    first walk then points to ``learn``)."""
    try:
        folder = history.history_dir()
        return not ((folder / STATE_FILE).exists() or (folder / history.FILE_NAME).exists())
    except OSError:
        return False


def course_key(course: Course) -> str:
    """Where a course's progress is kept in the file: its id (issue 40: never the path it is
    installed at, so a reinstall or another venv finds it)."""
    return course.id or course.name


def _read_state(path: Path) -> dict:  # type: ignore[type-arg]
    """The progress file's data ({} when there is none). Read as the quiz history is: a FIFO or
    a device is refused without waiting on it; raises ``OSError`` or ``ValueError`` when the
    file is not ours or damaged."""
    try:
        fd = history.open_regular(path, os.O_RDONLY, MAX_STATE_BYTES, NOUN)
    except FileNotFoundError:
        return {}
    with open(fd, "rb") as f:
        data = json.loads(f.read(MAX_STATE_BYTES + 1).decode("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("courses"), dict):
        raise ValueError(NOUN.replace("a ", "not a ", 1))
    for entry in data["courses"].values():
        if not isinstance(entry, dict) or not isinstance(entry.get("passed"), list):
            raise ValueError("a course's passed stages are not a list")
    return data


def _older_keys(courses: dict, course: Course) -> list[str]:  # type: ignore[type-arg]
    """Keys an older version kept this course under: the absolute path of its file, wherever
    it was installed (``…/site-packages/tutor/courses/attention.yaml``), or its file's name."""
    stem = Path(course.path).stem if course.path else course.name
    return [
        k
        for k in courses
        if k != course_key(course)
        and (k == course.name or (Path(k).is_absolute() and Path(k).stem == stem))
    ]


def _entry(data: dict, course: Course) -> tuple[dict, list[str]]:  # type: ignore[type-arg]
    """The course's progress, and the older keys it was carried over from (none once saved)."""
    courses = data.get("courses", {})
    if course_key(course) in courses:
        return courses[course_key(course)], []
    old = _older_keys(courses, course)
    passed = [str(s) for k in old for s in courses[k]["passed"]]
    return {"passed": list(dict.fromkeys(passed))} if old else {}, old


def _passed_in(data: dict, course: Course) -> list[str]:  # type: ignore[type-arg]
    return [str(s) for s in _entry(data, course)[0].get("passed", [])]


def lesson_notes(
    course: Course, passed: list[str], kept: object, lessons: dict[str, str]
) -> list[str]:
    """A line for each lesson whose numbers changed (its fingerprint, ``lessons``, is not the
    one ``kept`` when its stages were passed): the stages stay passed, the student is told."""
    if not isinstance(kept, dict):
        return []
    out = []
    for name, fingerprint in lessons.items():
        if kept.get(name) not in (None, fingerprint):
            numbers = [
                str(n)
                for n, s in enumerate(course.stages, 1)
                if s.lesson == name and s.id in passed
            ]
            if numbers:
                stages = "stage" + ("s " if len(numbers) > 1 else " ") + ", ".join(numbers)
                out.append(
                    f"lesson {name} has changed since you passed {stages} on it; it stays passed"
                )
    return out


def load_passed(
    course: Course, path: Path | None = None, lessons: dict[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """The ids of the course's passed stages (in course order), and problems or notes in words.
    A file that cannot be read is set aside (renamed, as the quiz history is) and reported, and
    the course starts afresh; it is never the reason ``learn`` fails. ``lessons``: the lessons'
    fingerprints now, to notice one that changed since its stages were passed."""
    path = path or state_path()
    try:
        entry, _ = _entry(_read_state(path), course)
    except (OSError, ValueError) as err:
        return [], [history.set_aside(path, err, "the course progress")]
    done = {str(s) for s in entry.get("passed", [])}
    passed = [s.id for s in course.stages if s.id in done]  # in course order; others dropped
    notes = []
    if entry.get("fingerprint") not in (None, course.fingerprint):
        notes.append(
            f"the course {course.title} has changed since you last saved your progress; "
            "the stages you passed that it still has are kept"
        )
    return passed, notes + lesson_notes(course, passed, entry.get("lessons"), lessons or {})


def save_passed(
    course: Course,
    passed: list[str],
    path: Path | None = None,
    before: list[str] | None = None,
    lessons: dict[str, str] | None = None,
) -> list[str]:
    """Write the passed stages (the other courses' progress kept) under the course's id, with
    its fingerprint and its lessons' (``lessons``: name → fingerprint); problems in words.

    ``before``: the stages this session read at its start. A stage the file lists now but did
    not then was passed in another session meanwhile, and is kept (the later save merges).
    A file damaged since it was read is set aside, never written over blind. Progress an older
    version kept under the course's path moves to its id."""
    path = path or state_path()
    from tutor.core.files import locked, replace_file

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return [f"could not save the course progress to {path}: {err.strerror or err}"]
    with locked(path):  # read, merge and replace in turn with another session saving
        problems = []
        try:
            data = _read_state(path)
        except (OSError, ValueError) as err:
            problems.append(history.set_aside(path, err, "the course progress"))
            data = {}
        courses = data.get("courses", {})
        entry, old = _entry(data, course)
        if before is not None:
            meanwhile = [s for s in _passed_in(data, course) if s not in before and s not in passed]
            passed = [s.id for s in course.stages if s.id in {*passed, *meanwhile}]
        for key in old:
            del courses[key]
        kept = entry.get("lessons")
        fingerprints = {**(kept if isinstance(kept, dict) else {}), **(lessons or {})}
        courses[course_key(course)] = {
            "passed": passed,
            "fingerprint": course.fingerprint,
            **({"lessons": fingerprints} if fingerprints else {}),
        }
        text = json.dumps({"version": 2, "courses": courses}, ensure_ascii=False, indent=1)
        try:
            replace_file(path, text + "\n")  # all or nothing: never half a file
        except OSError as err:
            return [
                *problems,
                f"could not save the course progress to {path}: {err.strerror or err}",
            ]
    return problems


def check_lessons(course: Course, load: Callable[[str], Lesson]) -> None:
    """Every stage's lesson can be found and asks the steps named, before the first question;
    no stage's tables give away a later stage's answers. A ``LessonError`` names the course
    file, the stage's line and what is wrong."""
    from tutor.assess import quiz as qz
    from tutor.core.engine import derive

    made: dict[str, Derivation] = {}
    for n, stage in enumerate(course.stages, 1):
        try:
            lesson = load(stage.lesson)
        except TutorError as err:
            raise LessonError.at(course.path, stage.line, 1, f"stage {n}: {err}") from None
        d = made.setdefault(stage.lesson, derive(lesson))
        names = {s.name for s in d.steps}
        askable = qz.quiz_steps(d)
        missing = [s for s in stage.steps if s not in askable]
        missing += [s for s in stage.show if s not in names]
        if missing:
            raise LessonError.at(
                course.path,
                stage.line,
                1,
                f"stage {n} ({stage.title}): the lesson {stage.lesson} has no "
                f"{', '.join(missing)} step",
            )
        later = {s for st in course.stages[n:] if st.lesson == stage.lesson for s in st.steps}
        _show_gives_nothing_away(course, n, stage, d, later)


def _show_gives_nothing_away(
    course: Course, n: int, stage: Stage, d: Derivation, later: set[str]
) -> None:
    """A shown step's table, and the tables it is made from (the walk prints them beside it:
    scores shows Q and K), may not hold a step the stage asks, nor one a later stage of the
    same lesson asks: that would be the answers."""
    if not stage.show:
        return
    shown = [s for s in d.steps if s.name in stage.show and s.head in (None, 1)]
    revealed = {s.name for s in shown} | {a.name for s in shown for a in s.args}
    line, col = stage.show_at
    for name in sorted(revealed & set(stage.steps)):
        raise LessonError.at(
            course.path,
            line,
            col,
            f"show in stage {n}: its tables hold {name}, which this stage asks; show only "
            "the steps it is made from",
        )
    for name in sorted(revealed & later):
        raise LessonError.at(
            course.path,
            line,
            col,
            f"show in stage {n}: its tables hold {name}, which a later stage of "
            f"{stage.lesson} asks; show it only after that stage",
        )


# ---------------------------------------------------------------------------------------------
# the questions of a stage: cells that test its idea


def pool(d: Derivation, stage: Stage) -> dict[str, list[qz.Question]]:
    """Per step asked, the cells worth asking: never one whose answer shows as 0 (typing 0
    would pass), and, where the lesson has something the stage is about, only cells it
    changes: a weight the causal mask moves (not the last row, which sees every token
    anyway), a pair RoPE turns (not position 0), an X whose position row adds something, a
    score or Z of a grouped head that reads K and V made in another head. A step with no
    such cell keeps every cell that is not 0."""
    from tutor.assess import quiz as qz
    from tutor.text import format as fmt

    places = d.lesson.precision
    touched = _idea(d, places)
    out: dict[str, list[qz.Question]] = {}
    for name in stage.steps:
        every = qz.choose(d, [name], sum(len(s.rows) * len(s.cols) for s in d.steps), 0)
        plain = [q for q in every if fmt.as_shown(q.step.cells[q.i][q.j], places) != 0]
        telling = [q for q in plain if touched(q)]
        out[name] = sorted(telling or plain, key=lambda q: (q.step.head or 0, q.i, q.j))
    return out


def _idea(d: Derivation, places: int) -> Callable[[qz.Question], bool]:
    """Whether the lesson's own idea changes a cell, as shown to ``places``: RoPE's turn and
    added positions against the step's input, a grouped head against reading its own K and
    V, the causal mask against the same lesson worked without it."""
    from tutor.core.engine import Options, Sum, derive
    from tutor.core.positions import Rotate

    def differs(q: qz.Question, other: object) -> bool:
        mine = q.step.cells[q.i][q.j].rounded(places)
        return other is not None and other.cells[q.i][q.j].rounded(places) != mine  # type: ignore[attr-defined]

    def borrowed(step: object) -> bool:
        return any(a.head not in (None, step.head) for a in step.args)  # type: ignore[attr-defined]

    grouped = any(borrowed(s) for s in d.steps)
    unmasked: dict = {}  # type: ignore[type-arg]
    if d.lesson.mask == "causal" and d.lesson.source is None:
        unmasked = {(s.name, s.head): s for s in derive(d.lesson, Options(mask=False)).steps}

    def touched(q: qz.Question) -> bool:
        if isinstance(q.step, (Rotate, Sum)):  # positions: Q_rot against Q, X = E + P against E
            return differs(q, q.step.args[0])
        if grouped:
            return borrowed(q.step)
        if unmasked:
            return differs(q, unmasked.get((q.step.name, q.step.head)))
        return True

    return touched


class Draw:
    """The next question of a stage: its steps in turn, a cell of the step not asked yet in
    this stage (the pool starts again when every cell was asked)."""

    def __init__(self, pools: dict[str, list[qz.Question]], rng: random.Random) -> None:
        self.names = [n for n, qs in pools.items() if qs]
        self.pools, self.rng = pools, rng
        self.asked: set[str] = set()
        self.turn = 0

    def next(self) -> qz.Question:
        name = self.names[self.turn % len(self.names)]
        self.turn += 1
        cells = self.pools[name]
        fresh = [q for q in cells if q.name not in self.asked]
        if not fresh:
            self.asked -= {q.name for q in cells}
            fresh = cells
        q = self.rng.choice(fresh)
        self.asked.add(q.name)
        return q


# ---------------------------------------------------------------------------------------------
# the mastery rule


def counts(it: qz.Item) -> bool:
    """Whether an answer counts toward the streak: right at the first or second try, with at
    most one hint (the hint given after a first miss is that one)."""
    return it.outcome != "missed" and it.tries <= 2 and it.hints <= 1


def streak(items: Iterable[qz.Item]) -> int:
    """How many answers in a row, up to the last, count."""
    run = 0
    for it in items:
        run = run + 1 if counts(it) else 0
    return run


def rule_text(need: int) -> str:
    """The mastery rule as the student reads it when a stage opens (and the README says)."""
    return (
        f"To pass: {need} right in a row, each at the first or second try with at most one "
        f"hint. A miss starts the count again; a round asks at most {need + EXTRA} questions."
    )


def how_text(it: qz.Item) -> str:
    """How one answer went, in the words the rule uses: ``second try, 1 hint``."""
    if it.unfinished:
        return "left unfinished"
    if it.outcome == "missed":
        return "skipped" if it.skipped else "missed"
    from tutor.text.format import plural

    tries = ("first", "second", "third")[min(it.tries, 3) - 1]
    return f"{tries} try" + (f", {plural(it.hints, 'hint')}" if it.hints else "")


def round_table(result: qz.Result) -> RenderableType:
    """Every question of a round, how it went and whether it counts: the pass message and
    this table read the same items by the same rule."""
    from rich.table import Table

    table = Table(title="This round")
    for col in ("", "cell", "how", "counts"):
        table.add_column(col, justify="right" if col == "" else "left")
    for n, it in enumerate(result.items, 1):
        mark = Text("✓", style=theme.GOOD) if counts(it) else Text("✗", style=theme.BAD)
        table.add_row(str(n), Text(it.question.name), how_text(it), mark)
    return table


def _round(
    draw: Iterator[qz.Question], need: int, result: qz.Result, console: Console
) -> Iterator[qz.Question]:
    """A round's questions, one at a time: it ends at ``need`` in a row, or as soon as the
    questions left cannot reach it."""
    while (run := streak(result.items)) < need:
        if result.planned - len(result.items) < need - run:
            return
        if result.items:
            console.print(Text(f"In a row: {run} of {need}.", style="dim"))
        yield next(draw)


def first_term(q: qz.Question, places: int) -> str:
    """The hint after a miss: the cell's first term worked, and what is left to do."""
    from tutor.text.working import first_term as term

    return f"{q.name}: {term(q.step, q.i, q.j, places)}"


# ---------------------------------------------------------------------------------------------
# where the student is


def next_stage(course: Course, passed: list[str]) -> tuple[int, Stage] | None:
    """The first stage not passed yet (1-based number), or None when the course is done."""
    for n, stage in enumerate(course.stages, 1):
        if stage.id not in passed:
            return n, stage
    return None


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    """``[██████░░░░░░░░░░░░░░] 3/9 stages passed``."""
    filled = round(width * done / total) if total else width
    return f"[{'█' * filled}{'░' * (width - filled)}] {done}/{total} stages passed"


def tried(course: Course, records: Iterable[dict]) -> set[str]:  # type: ignore[type-arg]
    """The ids of the stages the history has a round of (in this course)."""
    ids = {s.id for s in course.stages}
    return {
        str(r.get("stage"))
        for r in records
        if r.get("course") == course.name and r.get("stage") in ids
    }


def where_text(course: Course, passed: list[str], attempted: set[str] | None = None) -> list[str]:
    """Where the student is: the bar, every stage with ✓ (passed), ✗ (tried, not passed yet)
    or — (not tried), then what comes next (or that the course is done)."""
    lines = [bar(len(passed), len(course.stages))]
    wide = len(str(len(course.stages)))
    for n, stage in enumerate(course.stages, 1):
        mark = "✓" if stage.id in passed else "✗" if stage.id in (attempted or ()) else "—"
        lines.append(
            f"  {mark} {n:>{wide}}. {stage.title} ({stage.lesson}: {', '.join(stage.steps)})"
        )
    nxt = next_stage(course, passed)
    if nxt is None:
        lines.append("Course complete: every stage passed.")
    else:
        n, stage = nxt
        lines.append(
            f"Up next: stage {n}, {stage.title} ({stage.lesson}: {', '.join(stage.steps)})"
        )
    return lines


def stage_number(course: Course, number: int) -> tuple[int, Stage]:
    """``--stage N``: the stage, or a usage error naming the stages there are."""
    from tutor.core.errors import UsageError

    if not 1 <= number <= len(course.stages):
        raise UsageError(
            f"--stage {number}: the course has stages 1 to {len(course.stages)} "
            "(attn-tutor learn --status lists them)"
        )
    return number, course.stages[number - 1]


def due_reviews(
    course: Course,
    passed: list[str],
    records: Iterable[dict],  # type: ignore[type-arg]
    now: datetime,
) -> list[tuple[Stage, str]]:
    """The steps of passed stages that the history's Leitner boxes say are due (lowest box
    first, at most ``MAX_REVIEW``): what was missed comes back, and what was right comes back
    later and later."""
    from tutor.assess import review as rv

    found = rv.cards(records)
    out: list[tuple[Stage, str, int]] = []
    seen: set[tuple[str, str]] = set()
    for stage in course.stages:
        if stage.id not in passed:
            continue
        for card in rv.due(found, stage.lesson, now):
            key = (stage.lesson, card.name)
            if card.name in stage.steps and key not in seen:
                seen.add(key)
                out.append((stage, card.name, card.box))
    out.sort(key=lambda t: t[2])  # stable: course order within a box
    return [(stage, name) for stage, name, _ in out[:MAX_REVIEW]]


def due_text(due: list[tuple[Stage, str]]) -> str:
    """``Q (cats-chase-mice), weights (the-cake-causal)``: the steps due for review."""
    return ", ".join(f"{step} ({stage.lesson})" for stage, step in due)


# ---------------------------------------------------------------------------------------------
# a sitting


@dataclass
class Sitting:
    """What one run of ``learn`` did."""

    passed: list[str]
    ended: str = "finished"  # "finished" (course done) | "replayed" | "stopped" | quiz's ends
    results: list[qz.Result] = field(default_factory=list)


Prepare = Callable[[Stage], tuple["Plan", list["RenderableType"]]]
# a stage's opening shown a screen at a time: "go", or how the student stopped
Pager = Callable[[list["RenderableType"]], str]
Keep = Callable[[Stage, "Derivation", "qz.Result", int, list[str]], None]


def run(
    course: Course,
    passed: list[str],
    console: Console,
    stream: TextIO | None,
    prepare: Prepare,
    keep: Keep,
    seed: int | None = None,
    only: int | None = None,
    review: list[tuple[Stage, str]] | None = None,
    pager: Pager | None = None,
) -> Sitting:
    """The review that is due, then stages from the first not passed, until the course is done
    or the student stops; ``only`` (a stage number) plays that one stage and stops.

    ``prepare`` gives a stage's plan (``tutor.assess.stageplan``: its cells) and its opening;
    ``keep`` saves a round (history and course progress) as soon as it ends, so Ctrl-C loses
    nothing that was done. ``pager`` shows an opening a screen at a time (at a terminal)."""
    sitting = Sitting(list(passed))
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    seat = _Seat(console, stream, prepare, keep, rng, sitting, pager)
    if review and only is None:
        how = _review(review, seat)
        if how != "finished":
            sitting.ended = how
            return sitting
    while True:
        nxt = (only, course.stages[only - 1]) if only else next_stage(course, sitting.passed)
        if nxt is None:
            break
        n, stage = nxt
        how = _stage(course, n, stage, seat)
        if how != "passed":
            sitting.ended = how
            return sitting
        if only:
            sitting.ended = "replayed"
            return sitting
        if next_stage(course, sitting.passed) is None:
            break
        how = _go_on(console, stream, "Enter: next stage · q: stop ")
        if how != "go":
            sitting.ended = how
            return sitting
    console.print(Text("Course complete: every stage passed.", style=f"bold {theme.GOOD}"))
    return sitting


@dataclass
class _Seat:
    """What every part of a sitting works with."""

    console: Console
    stream: TextIO | None
    prepare: Prepare
    keep: Keep
    rng: random.Random
    sitting: Sitting
    pager: Pager | None = None

    def show(self, parts: list[RenderableType]) -> str:
        """A stage's opening: paged when there is a pager, else printed whole."""
        if self.pager is not None:
            return self.pager(parts)
        for part in parts:
            self.console.print(part)
        return "go"


def _stage(course: Course, n: int, stage: Stage, seat: _Seat) -> str:
    """One stage, round after round until it is passed ("passed") or the student stops."""
    from tutor.assess import quiz as qz

    console, stream, rng, sitting = seat.console, seat.stream, seat.rng, seat.sitting
    prepare, keep = seat.prepare, seat.keep

    from tutor.assess.stageplan import questions

    p, intro = prepare(stage)
    console.print()
    heading = Text(f"Stage {n}/{len(course.stages)}: {stage.title}", style="bold")
    how = seat.show([heading, *([Text(stage.about)] if stage.about else []), *intro])
    if how != "go":
        return how
    console.print(Text(rule_text(stage.count), style="bold"))
    draw = questions(p)  # the stage's cells in their order, round after round
    while True:
        result = qz.Result(planned=stage.count + EXTRA)
        mark = rng.randrange(1_000_000)  # the round's number in the history, as a quiz's seed
        try:
            qz.run(p.d, _round(draw, stage.count, result, console), console, stream,
                   result=result, summarise=False, miss_hint=first_term)  # fmt: skip
        finally:
            won = result.ended == "finished" and streak(result.items) >= stage.count
            if won and stage.id not in sitting.passed:
                sitting.passed.append(stage.id)
            sitting.results.append(result)
            keep(stage, p.lesson, result, mark, sitting.passed)
        if result.items:
            console.print()
            console.print(round_table(result))
        if result.ended != "finished":
            console.print(Text(f"Stage {n} ended early; it is not passed yet.", style=theme.WARN))
            return result.ended
        if won:
            done = bar(len(sitting.passed), len(course.stages))
            console.print(Text(f"✓ Stage {n} passed: {stage.count} right in a row. {done}"))
            return "passed"
        best = max((streak(result.items[: k + 1]) for k in range(len(result.items))), default=0)
        console.print(
            Text(
                f"Not passed yet: {best} in a row at best this round, and {stage.count} are "
                "needed. The stage starts again with new cells.",
                style=theme.WARN,
            )
        )
        how = _go_on(console, stream, "Enter: try again · q: stop ")
        if how != "go":
            return how


def _review(due: list[tuple[Stage, str]], seat: _Seat) -> str:
    """One question for each step due, grouped by stage, recorded like any round; review
    never takes a stage back (it tells the Leitner boxes what to ask next time)."""
    from tutor.assess import quiz as qz

    console, stream, rng, sitting = seat.console, seat.stream, seat.rng, seat.sitting
    prepare, keep = seat.prepare, seat.keep

    console.print()
    console.print(
        Text(f"Review first, as your history says it is due: {due_text(due)}", style="bold")
    )
    by_stage: dict[str, tuple[Stage, list[str]]] = {}
    for stage, step in due:
        by_stage.setdefault(stage.id, (stage, []))[1].append(step)
    for stage, steps in by_stage.values():
        p, _ = prepare(stage)
        pools = pool(p.d, stage)
        questions = [Draw({s: pools[s]}, rng).next() for s in steps if pools.get(s)]
        result = qz.Result(planned=len(questions))
        try:
            qz.run(p.d, questions, console, stream, result=result, miss_hint=first_term)
        finally:
            sitting.results.append(result)
            keep(stage, p.lesson, result, rng.randrange(1_000_000), sitting.passed)
        if result.ended != "finished":
            return result.ended
    return "finished"


def _go_on(console: Console, stream: TextIO | None, prompt: str) -> str:
    """Between rounds and stages: Enter goes on ("go"), q stops ("stopped"); so do Ctrl-C and
    Ctrl-D."""
    from tutor.assess import quiz as qz

    try:
        line = qz.read_line(console, stream, prompt)
    except EOFError:
        return "ctrl-d"
    except KeyboardInterrupt:
        console.print()
        return "ctrl-c"
    return "stopped" if line.strip().lower() in ("q", "quit", "exit") else "go"


def next_command(course: Course, passed: list[str], ended: str, option: str = "") -> str:
    """The one line that ends ``learn``: the natural next command, and why."""
    nxt = next_stage(course, passed)
    if nxt is None:
        return "Next: attn-tutor progress  (your slips, and what to practise)"
    n = nxt[0]
    command = f"attn-tutor learn{option}"
    if ended == "status":
        return f"Next: {command}  (stage {n})"
    if ended == "replayed":
        return f"Next: {command}  (carries on at stage {n})"
    return f"Saved. Next: {command}  (resumes at stage {n})"
