"""The learning path: a course's stages in order, each a short explanation then a few quiz
questions; a stage is passed when every question is right at the first try or after one hint,
in one sitting. Which stages are passed is kept in ``course.json`` beside the quiz history.

The loop takes its console and input stream (as the quiz does) and is handed, per stage, the
lesson's derivation and the explanation to show: it never imports the walk itself.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.text import Text

from tutor.assess import history
from tutor.core.course import Course, Stage
from tutor.core.errors import LessonError, TutorError
from tutor.text import theme

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from tutor.assess import quiz as qz
    from tutor.core.engine import Derivation
    from tutor.core.lesson import Lesson

STATE_FILE = "course.json"
MAX_STATE_BYTES = 1_000_000
NOUN = "a course progress file"
BAR_WIDTH = 20


def state_path() -> Path:
    return history.history_dir() / STATE_FILE


def course_key(course: Course) -> str:
    """Where a course's progress is kept in the file: its file's full path (``week1/course.yaml``
    and ``week2/course.yaml`` are two courses), or its name when it has no file."""
    return str(Path(course.path).resolve()) if course.path else course.name


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


def _passed_in(data: dict, course: Course) -> list[str]:  # type: ignore[type-arg]
    courses = data.get("courses", {})
    entry = courses.get(course_key(course)) or courses.get(course.name)  # (older files: name)
    return [str(s) for s in entry["passed"]] if entry else []


def load_passed(course: Course, path: Path | None = None) -> tuple[list[str], list[str]]:
    """The ids of the course's passed stages (in course order), and problems in words. A file
    that cannot be read is set aside (renamed, as the quiz history is) and reported, and the
    course starts afresh; it is never the reason ``learn`` fails."""
    path = path or state_path()
    try:
        done = _passed_in(_read_state(path), course)
    except (OSError, ValueError) as err:
        return [], [history.set_aside(path, err, "the course progress")]
    return [s.id for s in course.stages if s.id in done], []  # in course order; others dropped


def save_passed(
    course: Course, passed: list[str], path: Path | None = None, before: list[str] | None = None
) -> list[str]:
    """Write the passed stages (the other courses' progress kept); problems in words.

    ``before``: the stages this session read at its start. A stage the file lists now but did
    not then was passed in another session meanwhile, and is kept (the later save merges).
    A file damaged since it was read is set aside, never written over blind."""
    path = path or state_path()
    problems = []
    try:
        data = _read_state(path)
    except (OSError, ValueError) as err:
        problems.append(history.set_aside(path, err, "the course progress"))
        data = {}
    courses = data.get("courses", {})
    if before is not None:
        meanwhile = [s for s in _passed_in(data, course) if s not in before and s not in passed]
        passed = [s.id for s in course.stages if s.id in {*passed, *meanwhile}]
    courses[course_key(course)] = {"passed": passed}
    text = json.dumps({"version": 1, "courses": courses}, ensure_ascii=False, indent=1)
    from tutor.core.files import replace_file

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, text + "\n")  # all or nothing: never half a file
    except OSError as err:
        return [*problems, f"could not save the course progress to {path}: {err.strerror or err}"]
    return problems


def check_lessons(course: Course, load: Callable[[str], Lesson]) -> None:
    """Every stage's lesson can be found and has the steps asked, before the first question:
    a ``LessonError`` names the course file, the stage's line and what is wrong."""
    for n, stage in enumerate(course.stages, 1):
        try:
            lesson = load(stage.lesson)
        except TutorError as err:
            raise LessonError.at(course.path, stage.line, 1, f"stage {n}: {err}") from None
        has = {
            "output": lesson.W_O is not None,
            "W_O": lesson.W_O is not None,
            "concat": lesson.multi_head,
            "masked": lesson.mask == "causal",
        }
        missing = [s for s in (*stage.steps, *stage.show) if not has.get(s, True)]
        if missing:
            raise LessonError.at(
                course.path,
                stage.line,
                1,
                f"stage {n} ({stage.title}): the lesson {stage.lesson} has no "
                f"{', '.join(missing)} step",
            )
        _show_gives_nothing_away(course, n, stage, lesson)


def _show_gives_nothing_away(course: Course, n: int, stage: Stage, lesson: Lesson) -> None:
    """A shown step's table, and the tables it is made from (the walk prints them beside it:
    scores shows Q and K), may not hold a step the stage asks: that would be the answers."""
    if not stage.show:
        return
    from tutor.core.engine import derive

    shown = [s for s in derive(lesson).steps if s.name in stage.show and s.head in (None, 1)]
    revealed = {s.name for s in shown} | {a.name for s in shown for a in s.args}
    for name in sorted(revealed & set(stage.steps)):
        line, col = stage.show_at
        raise LessonError.at(
            course.path,
            line,
            col,
            f"show in stage {n}: its tables hold {name}, which this stage asks; show only "
            "the steps it is made from",
        )


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


def where_text(course: Course, passed: list[str]) -> list[str]:
    """Where the student is: the bar, then what comes next (or that the course is done)."""
    lines = [bar(len(passed), len(course.stages))]
    nxt = next_stage(course, passed)
    if nxt is None:
        lines.append("Course complete: every stage passed.")
    else:
        n, stage = nxt
        lines.append(
            f"Up next: stage {n}, {stage.title} ({stage.lesson}: {', '.join(stage.steps)})"
        )
    return lines


def stage_passed(result: qz.Result) -> bool:
    """Every question right at the first try or after one hint, and the stage finished."""
    return result.ended == "finished" and bool(result.items) and all(map(_ok, result.items))


def _ok(it: qz.Item) -> bool:
    return it.outcome == "first" or (it.outcome == "hints" and it.hints <= 1 and it.tries <= 2)


@dataclass
class Sitting:
    """What one run of ``learn`` did."""

    passed: list[str]
    ended: str = "finished"  # "finished" (course done) | "not-passed" | "stopped" | quiz's ends
    results: list[qz.Result] = field(default_factory=list)


def run(
    course: Course,
    passed: list[str],
    console: Console,
    stream: TextIO | None,
    prepare: Callable[[Stage], tuple[Derivation, list[RenderableType]]],
    keep: Callable[[Stage, Derivation, qz.Result, int, list[str]], None],
    seed: int | None = None,
) -> Sitting:
    """Stages from the first not passed, until one is not passed or the student stops.

    ``prepare`` gives a stage's derivation and its explanation; ``keep`` saves a stage's quiz
    (history and course progress) as soon as it ends, so Ctrl-C loses nothing that was done."""
    from tutor.assess import quiz as qz  # here: sympy loads only when a stage starts

    sitting = Sitting(list(passed))
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    while (nxt := next_stage(course, sitting.passed)) is not None:
        n, stage = nxt
        d, intro = prepare(stage)
        console.print()
        console.print(Text(f"Stage {n}/{len(course.stages)}: {stage.title}", style="bold"))
        for part in intro:
            console.print(part)
        console.print()
        draw = rng.randrange(1_000_000)
        questions = qz.choose(d, list(stage.steps), stage.count, draw)
        result = qz.Result(planned=len(questions))
        try:
            qz.run(d, questions, console, stream, result=result)
        finally:
            if stage_passed(result):
                sitting.passed.append(stage.id)
            sitting.results.append(result)
            keep(stage, d, result, draw, sitting.passed)
        if result.ended != "finished":
            sitting.ended = result.ended
            return sitting
        if stage.id not in sitting.passed:
            right = sum(map(_ok, result.items))
            console.print(
                Text(
                    f"Not passed yet: {right} of {len(result.items)} were right at the first try "
                    "or after one hint; every one needs to be.",
                    style=theme.WARN,
                )
            )
            sitting.ended = "not-passed"
            return sitting
        console.print(Text(f"✓ Stage {n} passed. {bar(len(sitting.passed), len(course.stages))}"))
        if next_stage(course, sitting.passed) is None:
            break
        how = _go_on(console, stream)
        if how != "go":
            sitting.ended = how
            return sitting
    console.print(Text("Course complete: every stage passed.", style=f"bold {theme.GOOD}"))
    return sitting


def _go_on(console: Console, stream: TextIO | None) -> str:
    """Between stages: Enter goes on ("go"), q stops ("stopped"); so do Ctrl-C and Ctrl-D."""
    from tutor.assess import quiz as qz

    try:
        line = qz.read_line(console, stream, "Enter: next stage · q: stop ")
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
    if ended == "not-passed":
        return f"Next: {command}  (stage {n} again, with new questions)"
    if ended == "status":
        return f"Next: {command}  (stage {n})"
    return f"Saved. Next: {command}  (resumes at stage {n})"
