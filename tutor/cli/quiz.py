"""A student's own practice: quiz, learn and progress."""

import contextlib
import gc
import io
import sys
from pathlib import Path
from typing import Annotated

import typer

from tutor.cli.common import LessonArg, LessonsDirOpt, PlainOpt, make_console, open_lesson
from tutor.cli.session import QuizSession, Stopped
from tutor.core.errors import TutorError, UsageError

RESERVE = 10  # rows a stage's opening leaves on its last screen: the rule and the first question


def quiz(
    lesson: LessonArg = "cats-chase-mice",
    steps: Annotated[
        list[str] | None,
        typer.Option(
            "--steps",
            help="Ask only about these steps (repeat, or give Q,scores,Z).",
            metavar="STEPS",
        ),
    ] = None,
    count: Annotated[
        int | None,
        typer.Option(help="How many cells to ask (default 8).", min=1, max=200, metavar="N"),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help="Choose the same questions again (a seed, 0 or more).", min=0, metavar="N"
        ),
    ] = None,
    review: Annotated[
        bool, typer.Option("--review", help="Ask only the steps your history says are due.")
    ] = False,
    lessons_dir: LessonsDirOpt = None,
    plain: PlainOpt = False,
) -> None:
    """Answer questions about single cells; attn-tutor checks your arithmetic."""
    from rich.text import Text

    from tutor.assess.session import QuizSitting, quiz_plan
    from tutor.core.engine import derive

    d = derive(open_lesson(lesson, lessons_dir))
    chosen = [s.strip() for item in steps or [] for s in item.split(",") if s.strip()]
    if review and chosen:
        raise UsageError("--review chooses the steps itself; give --review or --steps, not both")
    plan = quiz_plan(d, chosen, count, seed, review)
    if plan.nothing_due is not None:
        make_console(plain=plain).print(Text(plan.nothing_due), soft_wrap=True)
        return
    session = QuizSession(at_once=True, plain=plain)
    console = session.console
    for line in plan.heading():
        console.print(line)
    # a closed stdin (None) reads as an empty stream: the quiz ends at once, cleanly
    stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
    stream = None if stdin.isatty() else session.guard_input(stdin)
    gc.enable()  # a session may last a while: collect as usual (main turns it off for speed)
    sitting = QuizSitting(plan)
    # a signal ends the quiz as Ctrl-C does, wherever it arrives (its code is said below);
    # after an internal error too, what was done is saved before it is reported
    with contextlib.suppress(Stopped), session.signals():
        sitting.run(console, stream, ending=session.saving_now)
    with contextlib.suppress(OSError):  # stderr may be gone too (the terminal was closed)
        for problem in sitting.problems:
            make_console(stderr=True).print(Text(f"warning: {problem}"))
    if (line := sitting.next_command()) is not None:
        console.print(Text(line), soft_wrap=True)
    if session.signal is not None:
        raise typer.Exit(128 + session.signal)  # as a shell reports a process ended by it
    if session.output.error is not None:
        raise session.output.error  # saved first; then as any command whose output failed
    if sitting.result.ended == "ctrl-c":
        raise typer.Exit(130)


def learn(
    course: Annotated[
        Path | None,
        typer.Option("--course", help="A course file [default: the bundled path].", metavar="FILE"),
    ] = None,
    reset: Annotated[
        bool, typer.Option("--reset", help="Start the course over (asks first, or give --yes).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="With --reset: do not ask.")] = False,
    status: Annotated[
        bool, typer.Option("--status", help="List every stage (✓ passed, ✗ tried, — not yet).")
    ] = False,
    stage: Annotated[
        int | None,
        typer.Option(
            "--stage", help="Play this stage again (see --status), then stop.", metavar="N"
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Choose the same questions again.", min=0, metavar="N")
    ] = None,
    lessons_dir: LessonsDirOpt = None,
    plain: PlainOpt = False,
) -> None:
    """Start or resume the learning path: short stages, each explained, then questions until
    you get three right in a row."""
    import shlex
    from datetime import UTC, datetime

    from rich.text import Text

    from tutor.assess import history
    from tutor.assess import learn as ln
    from tutor.core.course import load_course

    crs = load_course(course)
    only = None if stage is None else ln.stage_number(crs, stage)[0]
    passed, problems = ln.load_passed(crs)
    session = QuizSession(plain=plain)
    console, err = session.console, make_console(stderr=True, plain=plain)
    stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
    stream = None if stdin.isatty() else session.guard_input(stdin)
    for problem in problems:
        err.print(Text(f"warning: {problem}"))
    if reset:
        if not yes:
            if stream is not None:
                raise UsageError("learn --reset asks first; without a terminal, add --yes")
            answer = console.input(Text("Start the course over? Your quiz history is kept. [y/N] "))
            if answer.strip().lower() not in ("y", "yes"):
                console.print(Text("Nothing changed."))
                return
        for problem in ln.save_passed(crs, []):
            raise TutorError(problem)
        console.print(Text(f"{crs.title}: starting over. {ln.bar(0, len(crs.stages))}"))
        console.print(Text("Next: attn-tutor learn"), soft_wrap=True)
        return
    console.print(Text(crs.title, style="bold"))
    for line in ln.where_text(crs, passed, ln.tried(crs, history.stream())):
        console.print(Text(line))
    option = f" --course {shlex.quote(str(course))}" if course is not None else ""
    due = [] if only else ln.due_reviews(crs, passed, history.stream(), datetime.now(UTC))
    if due and status:
        console.print(Text(f"Due for review: {ln.due_text(due)}"))
    if status:  # a lesson changed since its stages were passed: they stay passed, said here too
        for note in ln.load_passed(crs, lessons=_passed_lessons(crs, passed, lessons_dir))[1]:
            if note not in problems:  # the course's own note was said above
                console.print(Text(f"Note: {note}"))
    if status or (only is None and ln.next_stage(crs, passed) is None and not due):
        console.print(Text(ln.next_command(crs, passed, "status", option)), soft_wrap=True)
        return
    fingerprints: dict[str, str] = {}

    def fingerprinted(name):  # type: ignore[no-untyped-def]
        les = open_lesson(name, lessons_dir)
        fingerprints[name] = les.fingerprint
        return les

    ln.check_lessons(crs, fingerprinted)
    for note in ln.load_passed(crs, lessons=fingerprints)[1]:
        if note not in problems:  # the course's own note was said above
            err.print(Text(f"note: {note}"))
    lessons: dict[str, object] = {}

    def prepare(stage):  # type: ignore[no-untyped-def]
        from tutor.assess.stageplan import plan
        from tutor.core.engine import derive
        from tutor.teach.course_view import stage_intro

        if stage.lesson not in lessons:
            lessons[stage.lesson] = derive(open_lesson(stage.lesson, lessons_dir))
        p = plan(lessons[stage.lesson], stage)  # type: ignore[arg-type]
        return p, stage_intro(p, stage, console.width)

    pager = None
    if stream is None and sys.stdout is not None and sys.stdout.isatty():  # a screen at a time

        def pager(parts):  # type: ignore[no-untyped-def]
            from tutor.teach.course_view import page
            from tutor.teach.lecture import key_reader, line_reader

            return page(console, parts, key_reader(stdin), line_reader(console, None), RESERVE)

    def keep(stage, d, result, draw, now_passed):  # type: ignore[no-untyped-def]
        from tutor.assess import quiz as qz

        result.ended = session.how_it_ended(result.ended)
        when = datetime.now(UTC).isoformat(timespec="seconds")
        rec = {**qz.record(result, d.lesson.name, draw, when), "course": crs.name}
        problems.extend(history.append({**rec, "stage": stage.id}))
        fingerprint = {d.lesson.name: d.lesson.fingerprint}
        problems.extend(ln.save_passed(crs, now_passed, before=passed, lessons=fingerprint))

    gc.enable()
    problems = []
    with session.signals():
        sitting = ln.run(crs, passed, console, stream, prepare, keep, seed, only, due, pager)
    with contextlib.suppress(OSError):
        for problem in dict.fromkeys(problems):
            err.print(Text(f"warning: {problem}"))
    console.print(Text(ln.next_command(crs, sitting.passed, sitting.ended, option)), soft_wrap=True)
    if session.signal is not None:
        raise typer.Exit(128 + session.signal)
    if session.output.error is not None:
        raise session.output.error
    if sitting.ended == "ctrl-c":
        raise typer.Exit(130)


def _passed_lessons(crs, passed: list[str], lessons_dir) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The fingerprints of the lessons of the stages passed (read without sympy: ``--status``
    stays quick); a lesson that cannot be found is left out (``learn`` says so when it starts)."""
    out: dict[str, str] = {}
    for stage in crs.stages:
        if stage.id in passed and stage.lesson not in out:
            with contextlib.suppress(TutorError):
                out[stage.lesson] = open_lesson(stage.lesson, lessons_dir).fingerprint
    return out


def progress(
    lesson: Annotated[str | None, typer.Argument(help="Show only this lesson.")] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
) -> None:
    """How your quizzes have gone, per lesson and step, your slips, and what to practise next."""
    from rich.text import Text

    from tutor.assess import history
    from tutor.assess.progress import progress_json, progress_view

    console, err = make_console(), make_console(stderr=True)
    found = history.summarize(lesson=lesson)
    for problem in found.problems:
        err.print(Text(f"warning: {problem}"))
    if lesson is not None and not found.quizzes:
        quizzed = sorted(history.summarize().latest)
        if quizzed:  # not in the history: a lesson not quizzed yet, or no lesson at all
            from tutor.core.catalog import find_lesson

            listed = ", ".join(quizzed)
            try:
                find_lesson(lesson)
            except TutorError:
                raise TutorError(
                    f"no lesson {lesson!r} in your history (nor one of that name to find); "
                    f"the lessons quizzed are: {listed}"
                ) from None
            console.print(Text(f"No quizzes of {lesson} yet; the lessons quizzed are: {listed}"))
            return
    if json_out:
        import json

        data = progress_json(found, history.history_path())
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        return
    for part in progress_view(found, history.history_path()):
        console.print(part, soft_wrap=isinstance(part, Text) and part.no_wrap is True)
