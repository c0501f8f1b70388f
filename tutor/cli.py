"""The command line: parse, call the core, print, and translate errors to exit codes.

Heavy modules (sympy, numpy, the engine) are imported inside the commands that need them, so
``attn-tutor --help`` and ``attn-tutor list`` start quickly.
"""

import contextlib
import errno
import functools
import gc
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
import typer.core

from tutor.core.errors import TutorError, UsageError

if TYPE_CHECKING:
    import sympy
    from rich.console import Console

    from tutor.assess.classgrade import ClassGrades, Lessons
    from tutor.assess.gradebooks import Book
    from tutor.core.lesson import Lesson
    from tutor.core.roster import RosterTable
    from tutor.teach.pictures import Picture

app = typer.Typer(
    name="attn-tutor",
    help="Learn the arithmetic of self-attention by working it by hand.\n\n"
    "\b\n"  # (click: keep these lines as they are, so no command is broken at a hyphen)
    "New here? Start with:  attn-tutor learn\n"
    "  the course, stage by stage, from one dot product to grouped heads\n"
    "A walk one step a screen:  attn-tutor walk --pause",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

LessonArg = Annotated[
    str,
    typer.Argument(
        help="A bundled lesson's name (see 'attn-tutor list') or a path to a .yaml file.",
        metavar="LESSON",
    ),
]
LessonsDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--lessons-dir",
        help="Look for lessons by name in this folder first (before ATTN_TUTOR_LESSONS, "
        "./lessons and the bundled lessons).",
        metavar="DIR",
    ),
]


def make_console(
    stderr: bool = False, width: int | None = None, file: TextIO | None = None
) -> "Console":
    """A console for this command: created per call so it sees the current COLUMNS/NO_COLOR.

    No emoji codes: a lesson's token may be ``:smile:``, and it is shown as typed. The width is
    kept within ``MIN_WIDTH`` … ``MAX_WIDTH`` columns: rules and tables span it, so
    ``COLUMNS=99999999`` took gigabytes, and ``COLUMNS=0`` printed nothing.
    """
    console = _console_type()(
        stderr=stderr, highlight=False, emoji=False, width=width, soft_wrap=False, file=file
    )
    console.width = min(max(console.width, MIN_WIDTH), MAX_WIDTH)
    return console


@functools.cache
def _console_type() -> type["Console"]:
    from rich.console import Console

    class TutorConsole(Console):
        def on_broken_pipe(self) -> None:
            """The reader of a pipe went away (``| head``): not rich's own exit 1, but the one
            way every command stops then (``_run``: quietly, exit 0)."""
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return TutorConsole


MIN_WIDTH, MAX_WIDTH = 20, 1000  # columns: narrower or wider than any real terminal


def open_lesson(name: str, lessons_dir: list[Path] | None = None) -> "Lesson":
    """Find a lesson by name or path and load it (raises ``LessonError``); say on stderr when
    the lesson found shadows another of the same name."""
    from tutor.core.catalog import resolve_lesson
    from tutor.core.lessonfile import load_lesson

    found = resolve_lesson(name, lessons_dir)
    say_note(found.note)
    return load_lesson(found.path, name=found.path.stem)


def collect_as_we_go() -> None:
    """For a command that works through a class (a folder of variants, exported): main()
    turns the cyclic collector off for speed, and each lesson derived and compiled leaves
    reference cycles, so without it memory grew with the class (a key of 200 students of
    the-cake: 313 MB, about 1 MB a student). What is alive now (sympy's import, the most of
    it) is frozen, so the collector never walks it again. A Python caller's collector (on)
    is left as it is."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def say_note(note: str | None) -> None:
    """One ``note: …`` line on stderr (a lesson's name may hold anything: spelled out)."""
    if note:
        from rich.text import Text

        from tutor.text.words import visible

        make_console(stderr=True).print(Text(f"note: {visible(note)}"), soft_wrap=True)


def _check_steps(steps: list[str] | None, available: list[str]) -> list[str] | None:
    if not steps:
        return None
    from tutor.core.spec import STEP_NAMES
    from tutor.core.yamlsrc import suggest

    chosen = [s.strip() for item in steps for s in item.split(",") if s.strip()]
    if not chosen:
        raise UsageError(f"--step needs a step name; steps: {', '.join(available)}")
    for s in chosen:
        if s not in STEP_NAMES:
            raise UsageError(
                f"unknown step {s!r}{suggest(s, STEP_NAMES)}; steps: {', '.join(available)}"
            )
        if s not in available:
            raise UsageError(
                f"this lesson has no {s!r} step; its steps are: {', '.join(available)}"
            )
    return chosen


@app.command()
def walk(
    lesson: LessonArg = "cats-chase-mice",
    step: Annotated[
        list[str] | None,
        typer.Option(
            "--step", "-s", help="Show only this step (repeat, or give a,b,c).", metavar="STEP"
        ),
    ] = None,
    head: Annotated[
        int | None, typer.Option(help="Show only this head (1-based).", min=1, metavar="N")
    ] = None,
    exact: Annotated[
        bool, typer.Option("--exact", help="Show exact forms beside decimals.")
    ] = False,
    precision: Annotated[
        int | None,
        typer.Option(help="Decimals shown (default: the lesson's).", min=0, max=10, metavar="N"),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
    lessons_dir: LessonsDirOpt = None,
    pause: Annotated[
        bool,
        typer.Option(
            "--pause",
            help="Lecture mode: one step per screen (cleared on a terminal), long steps paged "
            "with the heading kept on top; Enter: next, b: back, q: stop. Works with --step. "
            "Waits only when stdin is a terminal.",
        ),
    ] = False,
    cell: Annotated[
        str | None,
        typer.Option(
            "--cell",
            help='Work this cell and its row in every step, e.g. "weights[it, cake]" '
            "(default: the lesson's focus, else its most decisive row).",
            metavar="CELL",
        ),
    ] = None,
    row: Annotated[
        str | None,
        typer.Option("--row", help="Work this token's row in every step.", metavar="TOKEN"),
    ] = None,
    predict: Annotated[
        bool,
        typer.Option(
            "--predict",
            help="Before each step, type the cell it works (judged as in the quiz; Enter "
            "skips), then see the step. Pauses as --pause does.",
        ),
    ] = False,
    next_token: Annotated[
        str | None,
        typer.Option(
            help="Then one decoding step with the KV cache: the next token.", metavar="TOKEN"
        ),
    ] = None,
    x: Annotated[
        str | None,
        typer.Option(
            "--x", help='With --next-token: its row of X, like "[1, 0, 2, 1]".', metavar="ROW"
        ),
    ] = None,
) -> None:
    """Work through every step of a lesson, with term-by-term working."""
    from tutor.core.decode import with_next_token
    from tutor.core.engine import derive

    d = derive(with_next_token(open_lesson(lesson, lessons_dir), next_token, x))
    names = list(dict.fromkeys(s.name for s in d.steps))
    steps = _check_steps(step, names)
    if head is not None and not d.lesson.multi_head:
        raise UsageError(f"--head {head}: this lesson has a single head, so there is none to pick")
    if head is not None and head > d.head_count:
        raise UsageError(f"--head {head}: this lesson has {d.head_count} heads")
    _check_walk_options(json_out, pause, predict, cell, row)
    if json_out:
        import json

        from tutor.export.jsondoc import derivation_json

        sys.stdout.write(json.dumps(derivation_json(d, exact, steps, head)) + "\n")
        return
    from tutor.teach import focus as fc
    from tutor.teach.walk import WalkOptions, step_pages

    console = make_console()
    # "" is a value given (and refused by the reader), not the option left out
    chosen = (
        fc.from_cell(d, cell)
        if cell is not None
        else fc.from_row(d, row)
        if row is not None
        else None
    )
    if chosen is not None and head is not None and chosen.head not in (None, head):
        raise UsageError(
            f"--cell {cell!r} is in head {chosen.head}, but --head {head} shows only head {head}"
        )
    opts = WalkOptions(
        steps=steps, head=head, exact=exact, precision=precision, width=console.width, focus=chosen
    )
    pages = step_pages(d, opts)  # made one at a time: a long walk never holds all its tables
    stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
    if predict or (pause and stdin.isatty()):
        return _lecture(d, opts, pages, console, stdin, predict)
    tty = sys.stdout is not None and sys.stdout.isatty()
    if tty:  # how tall the walk was, to point to --pause (files and pipes: untouched)
        console.file = counted = LineCount(console.file)
    for _, page in pages:
        for part in page:
            console.print(part)
    if tty:  # files and pipes get the walk alone
        console.file = counted.stream
        for line in _walk_ending(lesson, steps, counted.lines, console.height):
            console.print(line, markup=False, soft_wrap=True)


class LineCount:
    """A stream that counts the lines written through it; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.lines = stream, 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return self.stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _walk_ending(lesson: str, steps: list[str] | None, lines: int, height: int) -> list[str]:
    """What a walk at a terminal ends with: ``--pause`` when it was taller than the terminal,
    then the next command (``learn`` before the first quiz or course, else a quiz of it)."""
    import shlex

    from tutor.assess.learn import newcomer

    name = shlex.quote(lesson)
    out = []
    if lines > height:
        out.append(
            f"That was {lines} lines on a {height}-line screen: attn-tutor walk {name} --pause "
            "shows one step a screen (Enter: next, b: back, q: stop)."
        )
    if newcomer():
        out.append("Next: attn-tutor learn  (the course: each step explained, then your turn)")
        return out
    from tutor.core import kinds

    chosen = steps and set(steps) <= set(kinds.CHOSEN_STEPS)
    only = f" --steps {','.join(steps)}" if chosen else ""
    out.append(f"Next: attn-tutor quiz {name}{only}  (try the cells yourself)")
    return out


def _check_walk_options(
    json_out: bool, pause: bool, predict: bool, cell: str | None, row: str | None
) -> None:
    """Options of walk that cannot go together: an error with the reason, never ignored."""
    if cell is not None and row is not None:
        raise UsageError("--cell and --row both choose the worked row; give one of them")
    if json_out:
        for name, given in (
            ("--pause", pause),
            ("--predict", predict),
            ("--cell", cell),
            ("--row", row),
        ):
            if given not in (None, False):  # --cell "" is given, too
                raise UsageError(
                    f"{name} does not apply to --json, which prints every cell as data"
                )


def _lecture(d, opts, pages, console: "Console", stdin: TextIO, predict: bool) -> None:  # type: ignore[no-untyped-def]
    """walk --pause / --predict: the pager (and the predictions) over the walk's pages."""
    from rich.text import Text

    from tutor.assess.predict import Predictions, StopPredicting
    from tutor.teach.lecture import Lecture, line_reader
    from tutor.teach.walk import worked_cell

    tty = stdin.isatty()
    read = line_reader(console, None if tty else stdin)
    places = opts.precision if opts.precision is not None else d.lesson.precision
    asks = Predictions(d, lambda step: worked_cell(d, step, opts), console, read, places, tty)
    lecture = Lecture(
        console, pages, read, tty and console.is_terminal, asks if predict else None, tty
    )
    try:
        lecture.run()
    except StopPredicting:
        pass
    except EOFError:  # Ctrl-D: the reader is done
        console.print()
    except KeyboardInterrupt:  # Ctrl-C: stop quietly, as an interrupted command
        console.print()
        raise typer.Exit(130) from None
    if asks.tally.asked:
        console.print(Text(asks.tally.line(), style="bold"))


@app.command("list")
def list_lessons(lessons_dir: LessonsDirOpt = None) -> None:
    """List the lessons that can be named on the command line."""
    from tutor.teach.listing import lesson_list

    console = make_console()
    console.print(lesson_list(lessons_dir, console))


EXPORT_FORMATS = ("md", "tex", "sheet", "svg", "html", "pdf", "typ")


def write_output(text: str | bytes, output: Path | None, force: bool) -> None:
    """Print ``text`` to stdout, or write it to ``output`` (never over a file without --force);
    bytes (a PDF) are written as they are."""
    if output is None or str(output) == "-":  # - is stdout, as for new --output
        if isinstance(text, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        return
    if output.is_dir():
        raise TutorError(f"{output} is a folder; give a file name to --output")
    if output.exists() and not force:
        raise TutorError(f"{output} already exists; use --force to overwrite it")
    from tutor.core.files import write_file

    try:  # through a link to the file it points at; a device or FIFO written as it is
        write_file(output, text)
    except OSError as err:
        raise TutorError(f"cannot write {output}: {err.strerror or err}") from None


@app.command()
def export(
    lesson: LessonArg,
    format: Annotated[
        str, typer.Option("--format", "-f", help="md, tex, pdf, typ, sheet, svg or html.")
    ] = "md",
    no_answers: Annotated[
        bool,
        typer.Option(
            "--no-answers", help="A worksheet: leave the cells to fill blank (md, tex, pdf, typ)."
        ),
    ] = False,
    paper: Annotated[
        str, typer.Option("--paper", help="pdf, typ: a4 or letter.", metavar="SIZE")
    ] = "a4",
    font_path: Annotated[
        list[Path] | None,
        typer.Option("--font-path", help="pdf: look for fonts here too (CJK).", metavar="DIR"),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file, not stdout; - for stdout."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the --output file.")] = False,
    step: Annotated[
        list[str] | None,
        typer.Option(
            "--step",
            "-s",
            help="Slides (svg, html): one picture of this step (repeat, or give a,b,c).",
            metavar="STEP",
        ),
    ] = None,
    per_step: Annotated[
        bool,
        typer.Option(
            "--per-step",
            help="Slides (svg, html): one picture per step, into the --output folder "
            "(default: here), named NN-step.svg.",
        ),
    ] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Export a worksheet or answer key (md, tex, pdf, typ), a blank answer sheet, or the walk
    (svg, html). For pdf and typ, LESSON may be a folder written by 'attn-tutor variants': one
    document, each student's sheet from a new page."""
    if format not in EXPORT_FORMATS:
        raise UsageError(f"--format {format!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    if no_answers and format in ("svg", "html"):
        raise UsageError(
            f"--no-answers applies to md and tex (the sheet is always blank), not {format}"
        )
    if (step or per_step) and format not in ("svg", "html"):
        raise UsageError(f"--step and --per-step make slides in svg or html, not {format}")
    if Path(lesson).is_dir() and format in FOLDER_FORMATS and _per_variant(format, output):
        if (paper != "a4" or font_path) and format not in ("pdf", "typ"):
            raise UsageError(f"--paper and --font-path apply to pdf and typ, not {format}")
        return export_folder(
            Path(lesson), format, not no_answers, paper, font_path or [], output, force
        )
    if format in ("pdf", "typ"):
        return export_typst(
            lesson, format, not no_answers, paper, font_path or [], lessons_dir, output, force
        )
    if paper != "a4" or font_path:
        raise UsageError(f"--paper and --font-path apply to pdf and typ, not {format}")
    from tutor.assess import sheet as sheet_format
    from tutor.core.engine import derive
    from tutor.export import worksheet

    d = derive(open_lesson(lesson, lessons_dir))
    if step or per_step:
        from tutor.teach import pictures

        names = _check_steps(step, list(dict.fromkeys(s.name for s in d.steps)))
        write_pictures(pictures.slides(d, format, names), output, force)
        return
    if format == "md":
        text = worksheet.markdown(d, answers=not no_answers)
    elif format == "tex":
        text = worksheet.latex(d, answers=not no_answers)
    elif format == "sheet":
        text = sheet_format.answer_sheet(d, lesson)
    else:
        from tutor.teach.pictures import walk_document

        text = walk_document(d, format)
    write_output(text, output, force)


FOLDER_FORMATS = {"md": ".md", "tex": ".tex", "sheet": "-sheet.yaml", "pdf": ".pdf", "typ": ".typ"}


def _per_variant(format: str, output: Path | None) -> bool:
    """A folder of variants is exported one file per variant, except pdf and typ written to a
    file (or stdout): those join the class into one document."""
    if format not in ("pdf", "typ"):
        return True
    return output is not None and (output.is_dir() or str(output).endswith(("/", os.sep)))


def export_folder(
    folder: Path,
    format: str,
    answers: bool,
    paper: str,
    font_paths: list[Path],
    output: Path | None,
    force: bool,
) -> None:
    """``export DIR``: one file per variant in the folder ``variants`` wrote, into the
    ``--output`` folder, named after each variant. Nothing is written when a file is in the
    way (without --force)."""
    from tutor.assess import sheet as sheet_format
    from tutor.author.variants import folder_lessons
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson
    from tutor.export import typst_doc, worksheet
    from tutor.text.format import plural

    found = folder_lessons(folder)  # (a folder without lessons is named first)
    collect_as_we_go()
    if output is None or str(output) == "-":
        raise UsageError(
            f"{folder} is a folder of variants: give --output DIR, a folder for one {format} "
            "file per variant"
        )
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} is a file; a folder of variants needs a folder")
    if output.resolve() == folder.resolve():
        raise UsageError(
            f"--output {output} is the folder of variants itself; give another folder, so "
            "its files are not read as lessons"
        )
    if format in ("pdf", "typ"):
        typst_doc.check_paper(paper)
    targets = [output / (path.stem + FOLDER_FORMATS[format]) for path, _, _ in found]
    taken = [t for t in targets if t.exists()]
    if taken and not force:
        raise TutorError(
            f"{taken[0]} already exists ({plural(len(taken), 'file')} would be replaced); use "
            "--force to replace them"
        )
    texts: list[str | bytes] = []
    for path, who, variant in found:
        d = derive(load_lesson(path, name=path.stem))
        if format == "md":
            texts.append(worksheet.markdown(d, answers=answers))
        elif format == "tex":
            texts.append(worksheet.latex(d, answers=answers))
        elif format == "sheet":
            texts.append(sheet_format.answer_sheet(d, str(folder)))
        else:
            sheet = typst_doc.Sheet(d, who, variant)
            if format == "typ":
                texts.append(typst_doc.source([sheet], answers, paper))
            else:
                texts.append(typst_doc.pdf([sheet], answers, paper, font_paths)[0])
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {output}: {err.strerror or err}") from None
    for target, text in zip(targets, texts, strict=True):
        write_output(text, target, force=True)
    what = {"sheet": "answer sheet", "md": "Markdown file", "tex": "LaTeX file"}
    print(f"wrote {plural(len(targets), what.get(format, format.upper() + ' file'))} to {output}")


def write_pictures(pictures: "list[Picture]", output: Path | None, force: bool) -> None:
    """Slides into the ``output`` folder (made if missing; default: here); a single one may go
    to stdout (-) or to a file named like it (``-o weights.svg``). Nothing is written when any
    file is in the way."""
    one_file = output is not None and output.suffix == Path(pictures[0].name).suffix
    if output is not None and (str(output) == "-" or (one_file and not output.is_dir())):
        if len(pictures) != 1:
            raise UsageError(f"--output {output} takes one picture, not {len(pictures)}")
        write_output(pictures[0].text, output, force)
        return
    folder = output or Path(".")
    if folder.exists() and not folder.is_dir():
        raise TutorError(f"{folder} is a file; slides need a folder for --output")
    taken = [p.name for p in pictures if (folder / p.name).exists()]
    if taken and not force:
        raise TutorError(f"{folder / taken[0]} already exists; use --force to overwrite it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {folder}: {err.strerror or err}") from None
    for p in pictures:
        write_output(p.text, folder / p.name, force=True)
        print(folder / p.name)


def export_typst(
    lesson: str,
    format: str,
    answers: bool,
    paper: str,
    font_paths: list[Path],
    lessons_dir: list[Path] | None,
    output: Path | None,
    force: bool,
) -> None:
    """``export --format pdf|typ``: a lesson, or a folder of variants, as one typst document."""
    from tutor.core.engine import derive
    from tutor.core.lessonfile import load_lesson
    from tutor.export import typst_doc

    typst_doc.check_paper(paper)
    to_terminal = format == "pdf" and output is None and sys.stdout.isatty()
    refuse = "a PDF is not for the terminal: give --output FILE.pdf (or - for stdout)"
    if Path(lesson).is_dir():
        from tutor.author.variants import folder_lessons

        found = folder_lessons(Path(lesson))
        collect_as_we_go()
        sheets = (  # one at a time for a pdf: derived, compiled, then let go
            typst_doc.Sheet(derive(load_lesson(p, name=p.stem)), who, variant)
            for p, who, variant in found
        )
        if to_terminal:
            raise UsageError(refuse)
        if format == "pdf":
            data, note = typst_doc.pdf(sheets, answers, paper, font_paths)
            say_note(note)
            return write_output(data, output, force)
        text = typst_doc.source(list(sheets), answers, paper)
        return write_output(text, output, force)
    sheet = typst_doc.Sheet(derive(open_lesson(lesson, lessons_dir)))
    if format == "typ":
        return write_output(typst_doc.source([sheet], answers, paper), output, force)
    if to_terminal:
        raise UsageError(refuse)
    data, note = typst_doc.pdf([sheet], answers, paper, font_paths)
    say_note(note)
    write_output(data, output, force)


@app.command()
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
) -> None:
    """Answer questions about single cells; attn-tutor checks your arithmetic."""
    import random
    from datetime import UTC, datetime

    from rich.text import Text

    from tutor.assess import history
    from tutor.assess import quiz as qz
    from tutor.assess import review as rv
    from tutor.core.engine import derive
    from tutor.text.format import plural

    d = derive(open_lesson(lesson, lessons_dir))
    chosen = [s.strip() for item in steps or [] for s in item.split(",") if s.strip()]
    if review and chosen:
        raise UsageError("--review chooses the steps itself; give --review or --steps, not both")
    seed = random.SystemRandom().randrange(1_000_000) if seed is None else seed
    now = datetime.now(UTC)
    cards = {} if chosen else rv.cards(history.stream(), d.lesson.name, qz.quiz_steps(d))
    if review:
        due = rv.due(cards, d.lesson.name, now)
        if not due:
            make_console().print(Text(rv.nothing_due(cards, d.lesson.name, now)), soft_wrap=True)
            return
        chosen = list(dict.fromkeys(card.name for card in due))
        count = count or min(d.lesson.quiz.count, 2 * len(chosen))
    boxes = rv.boxes(cards, d.lesson.name)
    questions = qz.choose(d, chosen or None, count, seed, boxes)
    session = QuizSession(at_once=True)
    console = session.console
    console.print(
        Text.assemble(
            (f"Quiz: {d.lesson.title}", "bold"),
            f"  ({plural(len(questions), 'question')}, seed {seed}; "
            f"answers to {plural(d.lesson.precision, 'place')})",
        )
    )
    if review:
        console.print(Text(f"Review of the steps due: {', '.join(chosen)}", style="dim"))
    elif missed := [name for name, box in boxes.items() if box == 1]:
        console.print(Text(f"More of what you missed lately: {', '.join(missed)}", style="dim"))
    # a closed stdin (None) reads as an empty stream: the quiz ends at once, cleanly
    stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
    stream = None if stdin.isatty() else session.guard_input(stdin)
    gc.enable()  # a session may last a while: collect as usual (main turns it off for speed)
    result = qz.Result(planned=len(questions))
    problems: list[str] = []
    # a signal ends the quiz as Ctrl-C does, wherever it arrives (its code is said below)
    with contextlib.suppress(Stopped), session.signals():
        try:
            qz.run(d, questions, console, stream, result=result)
        finally:  # after an internal error too: what was done is saved before it is reported
            session.saving = True  # a signal now waits until the record is written
            result.ended = session.how_it_ended(result.ended)
            when = datetime.now(UTC).isoformat(timespec="seconds")
            problems = history.append(qz.record(result, d.lesson.name, seed, when))
    with contextlib.suppress(OSError):  # stderr may be gone too (the terminal was closed)
        for problem in problems:
            make_console(stderr=True).print(Text(f"warning: {problem}"))
    if result.ended not in ("error", "output-failed"):
        console.print(Text(qz.next_command(result, d.lesson.name)), soft_wrap=True)
    if session.signal is not None:
        raise typer.Exit(128 + session.signal)  # as a shell reports a process ended by it
    if session.output.error is not None:
        raise session.output.error  # saved first; then as any command whose output failed
    if result.ended == "ctrl-c":
        raise typer.Exit(130)


@app.command()
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
    session = QuizSession()
    console, err = session.console, make_console(stderr=True)
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
    if status or (only is None and ln.next_stage(crs, passed) is None and not due):
        console.print(Text(ln.next_command(crs, passed, "status", option)), soft_wrap=True)
        return
    ln.check_lessons(crs, lambda name: open_lesson(name, lessons_dir))
    lessons: dict[str, object] = {}

    def prepare(stage):  # type: ignore[no-untyped-def]
        from tutor.core.engine import derive
        from tutor.teach.course_view import stage_intro

        if stage.lesson not in lessons:
            lessons[stage.lesson] = derive(open_lesson(stage.lesson, lessons_dir))
        d = lessons[stage.lesson]
        return d, stage_intro(d, stage, console.width)  # type: ignore[arg-type]

    def keep(stage, d, result, draw, now_passed):  # type: ignore[no-untyped-def]
        from tutor.assess import quiz as qz

        result.ended = session.how_it_ended(result.ended)
        when = datetime.now(UTC).isoformat(timespec="seconds")
        rec = {**qz.record(result, d.lesson.name, draw, when), "course": crs.name}
        problems.extend(history.append({**rec, "stage": stage.id}))
        problems.extend(ln.save_passed(crs, now_passed, before=passed))

    gc.enable()
    problems = []
    with session.signals():
        sitting = ln.run(crs, passed, console, stream, prepare, keep, seed, only, due)
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


class QuizOutput:
    """The quiz's stdout. A write that fails (the reader of a pipe went away, a full disk, a
    closed terminal) is remembered and everything after it is dropped, so the quiz can end
    and save its record instead of dying mid-print."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                return self.stream.write(text)
            except OSError as err:
                self.error = err
                _drop_stdout()  # what is still buffered goes nowhere
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as err:
                self.error = err
                _drop_stdout()

    def __getattr__(self, name: str) -> object:  # isatty, encoding, fileno...: the stream's
        return getattr(self.stream, name)


class GuardedInput:
    """A stream whose ``readline`` is another function; everything else is the stream's."""

    def __init__(self, stream: TextIO, readline: Callable[..., str]) -> None:
        self.stream, self.readline = stream, readline

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP while the quiz waited for an answer: it ends as after Ctrl-C."""


class QuizSession:
    """What can end a quiz from outside its loop: its output failing, SIGTERM, SIGHUP (the
    terminal was closed). Each ends it at the next prompt, with the record saved; a signal
    arriving while the student is typing ends the wait at once, and with ``at_once`` (the
    quiz) a signal while an answer is judged too; never while the record is written."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self, at_once: bool = False) -> None:
        self.at_once = at_once
        # no stdout at all (>&-): a console on nothing, that cannot fail
        self.output = QuizOutput(sys.stdout if sys.stdout is not None else io.StringIO())
        self.console = make_console(file=self.output)
        self.console.input = self.guard(self.console.input)  # type: ignore[method-assign]
        self.signal: int | None = None
        self.ended: str | None = None  # "output-failed" when this session ended the quiz so
        self.waiting = False
        self.saving = False  # writing the record: a signal must not cut it short

    def guard(self, read: Callable[..., str]) -> Callable[..., str]:
        """``read``, but ending the quiz first when something outside it has."""

        def guarded(*args: object, **kwargs: object) -> str:
            self.stop_if_signalled()
            if self.output.error is not None:
                self.ended = "output-failed"
                raise EOFError  # nobody sees the questions: end as at the end of input
            self.waiting = True
            try:
                return read(*args, **kwargs)
            finally:
                self.waiting = False

        return guarded

    def stop_if_signalled(self) -> None:
        if self.signal is not None:
            raise Stopped

    def how_it_ended(self, ended: str) -> str:
        """The quiz loop's word for its end, or the cause this session knows better: a signal
        (a closed terminal ends the input, ctrl-d, and sends SIGHUP at the same moment), or the
        output failing."""
        if self.signal is not None and ended != "finished":
            import signal

            return signal.Signals(self.signal).name.lower()  # "sigterm", "sighup"
        return self.ended or ended

    def on_signal(self, signum: int, frame: object) -> None:
        self.signal = signum
        # reading an answer (or, at_once, judging one): stop now; else at the next prompt
        if self.waiting or (self.at_once and not self.saving):
            self.stop_if_signalled()

    def guard_input(self, stream: TextIO) -> TextIO:
        """A piped stdin whose every line is read through ``guard``."""
        return GuardedInput(stream, self.guard(stream.readline))  # type: ignore[return-value]

    @contextlib.contextmanager
    def signals(self):  # type: ignore[no-untyped-def]
        """Catch SIGTERM and SIGHUP for the quiz and the saving of its record. A signal that
        was ignored when attn-tutor started (``nohup``) stays ignored; ``terminable``'s
        SIGTERM handler gives way to this one for the session."""
        import signal

        old = {}
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            if number is None:  # Windows has no SIGHUP
                continue
            with contextlib.suppress(ValueError):  # only the main thread may set handlers
                if signal.getsignal(number) in (signal.SIG_DFL, _on_sigterm):
                    old[number] = signal.signal(number, self.on_signal)
        try:
            yield
        finally:
            for number, handler in old.items():
                signal.signal(number, handler)


@app.command()
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


@app.command()
def grade(
    lesson: Annotated[
        str,
        typer.Argument(
            help="The lesson (name or .yaml), or the folder of variants the sheets were made from.",
            metavar="LESSON_OR_DIR",
        ),
    ],
    sheets: Annotated[
        list[Path],
        typer.Argument(
            help="Filled-in answer sheets (.yaml), or folders of them.", metavar="SHEET..."
        ),
    ],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv", help="Write a gradebook (one row per student) to FILE.", metavar="FILE"
        ),
    ] = None,
    report: Annotated[
        bool, typer.Option("--report", help="Summarize what the class got wrong.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the --report to FILE (.md or .html).", metavar="FILE"
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Grade sheets made for a lesson whose numbers changed.")
    ] = False,
    lms: Annotated[
        str,
        typer.Option(
            "--lms",
            help="The --csv's format: plain (a spreadsheet), canvas or moodle (their grade "
            "import).",
            metavar="plain|canvas|moodle",
        ),
    ] = "plain",
    roster: Annotated[
        Path | None,
        typer.Option(
            "--roster",
            help="With --lms: the roster exported from the platform (Canvas: the gradebook "
            "export, written back with the assignment filled in).",
            metavar="FILE",
        ),
    ] = None,
    assignment: Annotated[
        str | None,
        typer.Option(
            "--assignment",
            help="With --lms: the assignment's column (Canvas: 'Attention HW' matches "
            "'Attention HW (4411)'); default: the export's only one, or the lesson's name.",
            metavar="NAME",
        ),
    ] = None,
    out_of: Annotated[
        str | None,
        typer.Option(
            "--out-of",
            help="With --lms: scale each grade to N points (Canvas: default its Points Possible).",
            metavar="N",
        ),
    ] = None,
    feedback_dir: Annotated[
        Path | None,
        typer.Option(
            "--feedback",
            help="Write one feedback file per student (.md and .html) into DIR.",
            metavar="DIR",
        ),
    ] = None,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Grade hand-worked answer sheets, with follow-through; a whole class with --csv, --report,
    --feedback."""
    from tutor.assess import classgrade as cg

    kind, scale = _grade_options(
        json_out, csv_out, report, output, lms, roster, assignment, out_of, feedback_dir
    )
    table = None
    if roster is not None:
        from tutor.core.roster import read_table

        table = read_table(roster)
    if cg.is_dir(Path(lesson)):
        lessons = cg.lessons_from_folder(Path(lesson))
    else:
        lessons = cg.Lessons([open_lesson(lesson, lessons_dir)], lesson)
    files = cg.sheet_files(sheets)
    inputs = [
        *files,
        *(Path(x.path) for x in lessons.lessons if x.path),
        *([roster] if roster else []),
    ]
    for target, option in ((csv_out, "--csv"), (output, "--output")):
        _not_an_input(target, option, inputs)
    single = len(sheets) == 1 and len(files) == 1 and files[0] == sheets[0]
    if single and csv_out is None and not report and feedback_dir is None:
        return _grade_one(lessons, files[0], json_out, force)
    grades = cg.grade_class(lessons, files, force)
    _print_class(grades, json_out)
    problems: list[str] = []
    if csv_out is not None:
        problems += _write_gradebook(grades, csv_out, lms, table, assignment, scale)
    if feedback_dir is not None:
        _write_feedback(grades, feedback_dir, inputs)
    if report:
        _class_report(grades, output, kind)
    if grades.bad or problems:
        raise typer.Exit(EXIT_INPUT)


def _grade_options(  # type: ignore[no-untyped-def]
    json_out, csv_out, report, output, lms, roster, assignment, out_of, feedback_dir
) -> tuple[str | None, object]:
    """The options of ``grade`` that go together, checked before any file is read: the
    report's file kind and the --out-of scale."""
    kind = None if output is None else output.suffix.lower().lstrip(".")
    if output is not None and (not report or kind not in ("md", "html", "htm")):
        raise UsageError("--output goes with --report, to a .md or .html file")
    if report and json_out and output is None:
        raise UsageError("--report with --json needs --output FILE (.md or .html): stdout is JSON")
    if lms not in ("plain", "canvas", "moodle"):
        raise UsageError(f"--lms {lms!r}: expected plain, canvas or moodle")
    if lms != "plain" and csv_out is None:
        raise UsageError(f"--lms {lms} says the format of the --csv FILE; give --csv FILE")
    for value, option in ((roster, "--roster"), (assignment, "--assignment"), (out_of, "--out-of")):
        if value is not None and lms == "plain":
            raise UsageError(f"{option} goes with --lms canvas or --lms moodle")
    if assignment is not None and not assignment.strip():
        raise UsageError("--assignment is empty; give the assignment's name")
    scale = _out_of(out_of)
    if feedback_dir is not None and feedback_dir.exists() and not feedback_dir.is_dir():
        raise UsageError(f"--feedback {feedback_dir} is a file; give a folder (made if missing)")
    return kind, scale


def _print_class(grades, json_out: bool) -> None:  # type: ignore[no-untyped-def]
    """A class's grades: the table at the terminal, or one JSON object (sheets set aside and
    notes on stderr)."""
    from rich.text import Text

    from tutor.text.words import escape_c1, visible

    err = make_console(stderr=True)
    for note in grades.notes:
        err.print(Text(f"note: {visible(note)}"), soft_wrap=True)
    if json_out:
        import json

        from tutor.assess.grade import report_json

        for b in grades.bad:
            err.print(Text(visible(b.reason)), soft_wrap=True)
        doc = {
            "sheets": [report_json(r) for r in grades.graded],
            "bad": [{"sheet": b.path, "reason": b.reason} for b in grades.bad],
        }
        sys.stdout.write(escape_c1(json.dumps(doc, ensure_ascii=False)) + "\n")
    else:
        from tutor.assess.class_view import class_table

        console = make_console()
        for part in class_table(grades):
            console.print(part)


def _write_gradebook(grades, csv_out: Path, lms: str, table, assignment, scale) -> list[str]:  # type: ignore[no-untyped-def]
    """The --csv gradebook, in the --lms platform's format; the problems it had (said)."""
    from rich.text import Text

    from tutor.text.words import visible

    err = make_console(stderr=True)
    book = _gradebook(grades, lms, table, assignment, scale)
    for note in book.notes:
        err.print(Text(f"note: {visible(note)}"), soft_wrap=True)
    for problem in book.problems:
        err.print(Text(visible(problem)), soft_wrap=True)
    write_output(book.text, csv_out, force=True)
    return list(book.problems)


def _class_report(grades, output: Path | None, kind: str | None) -> None:  # type: ignore[no-untyped-def]
    """What the class got wrong: at the terminal, or to a .md or .html file."""
    from tutor.assess import class_view
    from tutor.assess.classreport import summarize

    summary = summarize(grades.graded, tuple((b.path, b.reason) for b in grades.bad))
    if output is None:
        console = make_console()
        for part in class_view.summary_view(summary):
            console.print(part)
    else:
        page = class_view.markdown if kind == "md" else class_view.html_page
        write_output(page(summary), output, force=True)


def _out_of(text: str | None) -> "sympy.Rational | None":
    """--out-of N as an exact number of points; a bad one is a usage error."""
    if text is None:
        return None
    from tutor.assess.gradebooks import number

    try:
        return number(text, "--out-of")
    except TutorError as e:
        raise UsageError(str(e)) from None


def _gradebook(
    grades: "ClassGrades", lms: str, table: "RosterTable | None", assignment: str | None,
    scale: "sympy.Rational | None",
) -> "Book":  # fmt: skip
    """The --csv file's text in the --lms format, and what to say about it."""
    from tutor.assess import classgrade as cg
    from tutor.assess import gradebooks as gb

    graded = grades.graded
    name = assignment or next((r.d.lesson.variant.of for r in graded if r.d.lesson.variant), "")
    name = name or (graded[0].d.lesson.name if graded else "attn-tutor")
    if lms == "canvas" and table is not None:
        return gb.canvas_export(table, graded, assignment, scale)
    if lms == "canvas":
        return gb.canvas_minimal(graded, name, scale)
    if lms == "moodle":
        return gb.moodle(graded, table, name, scale)
    return gb.Book(cg.gradebook_csv(grades))


def _write_feedback(grades: "ClassGrades", folder: Path, inputs: "list[Path]") -> None:
    """One .md and one .html per graded sheet, named after the student."""
    from tutor.assess import feedback as fb

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {folder}: {err.strerror or err}") from None
    stems = fb.file_stems(grades.graded)
    for stem in stems:
        for suffix in (".md", ".html"):
            _not_an_input(folder / f"{stem}{suffix}", "--feedback", inputs)
    for r, stem in zip(grades.graded, stems, strict=True):
        f = fb.feedback(r)
        write_output(fb.markdown(f), folder / f"{stem}.md", force=True)
        write_output(fb.html_page(f), folder / f"{stem}.html", force=True)


def _not_an_input(target: Path | None, option: str, inputs: "list[Path]") -> None:
    """Refuse to write a gradebook or report over a sheet being graded or a lesson."""
    if target is None or str(target) == "-":
        return
    for path in inputs:
        try:
            same = os.path.samefile(target, path)
        except OSError:  # the target does not exist yet (or cannot be read): nothing to lose
            same = False
        if same:
            raise UsageError(
                f"{option} {target} is {path}, one of the files being graded; the gradebook "
                "would replace it: write it to a file of its own"
            )


def _grade_one(lessons: "Lessons", path: Path, json_out: bool, force: bool) -> None:
    """``grade LESSON SHEET``: one sheet's verdicts, cell by cell."""
    from rich.text import Text

    from tutor.assess import grade as gr
    from tutor.assess.sheet import read_header, read_sheet
    from tutor.text.words import escape_c1, visible

    header, root = read_header(path)
    d = lessons.derived(lessons.pick(header))
    read = read_sheet(path, d, force, root)
    for note in read.notes:
        say_note(note)
    report = gr.grade(d, read)
    if json_out:
        import json

        for problem in read.problems:  # the unreadable cells: on stderr, stdout stays JSON
            make_console(stderr=True).print(Text(visible(str(problem))), soft_wrap=True)
        text = json.dumps(gr.report_json(report), ensure_ascii=False)
        sys.stdout.write(escape_c1(text) + "\n")  # the sheet's text: no raw DEL or C1
        return
    from tutor.assess.report import report as render_report

    console = make_console()
    for part in render_report(report, console.width):
        console.print(part)


@app.command()
def explain(
    lesson: Annotated[
        str, typer.Argument(help="A bundled lesson's name or a path to a .yaml file.")
    ],
    cell: Annotated[
        str,
        typer.Argument(
            help="The cell, as STEP[ROW, COL]: Z[cats, 1], scores[cats, chase], head2.Q[it, 1]. "
            "ROW is a token; COL a 1-based number or, for N × N steps, a token. "
            "A name that does not exist exits with code 2 and lists the valid ones."
        ),
    ],
    precision: Annotated[
        int | None,
        typer.Option(help="Decimals shown (default: the lesson's).", min=0, max=10, metavar="N"),
    ] = None,
    limit: Annotated[
        int,
        typer.Option(
            help="Show at most this many cells per group; the rest are counted.", min=1, metavar="N"
        ),
    ] = 8,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Show everything one cell depends on, as a tree, with exact and rounded values."""
    from tutor.core.engine import derive
    from tutor.teach.explain import explain as explain_tree
    from tutor.text.cells import parse_cell

    d = derive(open_lesson(lesson, lessons_dir))
    step, i, j = parse_cell(d, cell)
    places = precision if precision is not None else d.lesson.precision
    make_console().print(explain_tree(d, step, i, j, places, limit))


@app.command()
def code(
    lesson: LessonArg = "cats-chase-mice",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the program to FILE (- for stdout).", metavar="FILE"
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Print the lesson as a short NumPy program: one line per step, with its numbers."""
    from tutor.core.engine import derive
    from tutor.export.code import program

    write_output(program(derive(open_lesson(lesson, lessons_dir))), output, force)


@app.command("check-code")
def check_code(
    lesson: Annotated[
        str, typer.Argument(help="A bundled lesson's name or a path to a .yaml file.")
    ],
    file: Annotated[
        Path,
        typer.Argument(help="Your Python file, defining attention(X, W_Q, W_K, W_V, mask=None)."),
    ],
    function: Annotated[
        str, typer.Option("--function", help="The function to call.", metavar="NAME")
    ] = "attention",
    timeout: Annotated[
        float,
        typer.Option(help="Seconds your file may take.", min=1, max=600, metavar="SECONDS"),
    ] = 20,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Check your own NumPy attention against the lesson, step by step (runs your file)."""
    from rich.text import Text

    from tutor.assess import codecheck as cc
    from tutor.core.catalog import is_file
    from tutor.core.engine import derive
    from tutor.text.words import visible

    d = derive(open_lesson(lesson, lessons_dir))  # the lesson first: its errors name it
    if not is_file(file) or file.suffix.lower() != ".py":
        raise TutorError(f"{file}: expected a Python file (.py) with your attention function")
    report, printed = cc.check_file(d, str(file), function, timeout)
    console = make_console()
    if printed.strip():
        console.print(Text("Your code printed:", style="dim"))
        console.print(Text(visible(printed.rstrip()[-2000:], keep="\n"), style="dim"))
    for line in cc.report_text(report):
        console.print(Text(visible(line)), soft_wrap=True)  # a path stays on its line
    if not report.ok:
        raise typer.Exit(EXIT_INPUT)


@app.command()
def explore(lesson: LessonArg = "cats-chase-mice", lessons_dir: LessonsDirOpt = None) -> None:
    """Change a number of a lesson and watch attention change (a full-screen app)."""
    from tutor.explore.launch import explore as run_explorer
    from tutor.explore.launch import need_textual

    need_textual()
    found = open_lesson(lesson, lessons_dir)
    gc.enable()  # a session may last a while: collect as usual (main turns it off for speed)
    run_explorer(found, lesson)


@app.command(context_settings={"ignore_unknown_options": True})
def softmax(
    numbers: Annotated[
        list[str],
        typer.Argument(
            help='The numbers, e.g. 1 2 3 or -1 0.5 "1/3". Integers, decimals and '
            "fractions are read exactly. A bad number exits with code 2.",
            show_default=False,
        ),
    ],
    times: Annotated[str, typer.Option(help="Multiply every number by this first, e.g. 10.")] = "1",
    precision: Annotated[int, typer.Option(help="Decimals shown.", min=0, max=10, metavar="N")] = 2,
) -> None:
    """Work softmax by hand for any numbers: each e^x, the total and each share."""
    from tutor.teach.walk import softmax_warmup
    from tutor.teach.warmup import read_number, read_numbers, softmax_row, times_effect, times_text

    values = read_numbers(numbers)
    factor = read_number(times, "--times")
    weights = softmax_row(values, factor)
    plain = softmax_row(values) if factor != (1, 1) else None
    console = make_console()
    effect = times_effect(factor)
    for part in softmax_warmup(weights, precision, plain, times_text(factor), effect):
        console.print(part)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the lesson format, for editors that check YAML as you type."""
    from tutor.author.schema import schema_text

    sys.stdout.write(schema_text())


@app.command()
def check(
    files: Annotated[
        list[str],
        typer.Argument(help="Lesson files, folders of them, or lesson names.", show_default=False),
    ],
    lessons_dir: LessonsDirOpt = None,
) -> int:
    """Check lessons: every problem as file:line:col, teaching warnings, then a summary."""
    from tutor.author.check import check_lessons
    from tutor.author.check_view import check_lines, summary_line

    reports = check_lessons(files, lessons_dir)
    console = make_console()
    for report in reports:
        say_note(report.note)
        for line in check_lines(report):
            console.print(line, soft_wrap=True)
    console.print(summary_line(reports), soft_wrap=True)
    return 0 if all(r.valid for r in reports) else 1


@app.command()
def new(
    name: Annotated[str, typer.Argument(help="The lesson's name, e.g. the-cat-sat.")],
    tokens: Annotated[
        str, typer.Option("--tokens", help='The words, separated by spaces: "the cat sat".')
    ],
    d_model: Annotated[
        int, typer.Option("--d-model", help="Features per token.", min=1, max=16, metavar="N")
    ] = 4,
    d_k: Annotated[
        int | None,
        typer.Option(
            "--d-k", help="Length of queries and keys [default: 2].", min=1, max=16, metavar="N"
        ),
    ] = None,
    d_v: Annotated[
        int | None,
        typer.Option("--d-v", help="Length of values [default: d_k].", min=1, max=16, metavar="N"),
    ] = None,
    heads: Annotated[
        int, typer.Option("--heads", help="Attention heads.", min=1, max=4, metavar="N")
    ] = 1,
    causal: Annotated[
        bool, typer.Option("--causal", help="A token sees only itself and earlier tokens.")
    ] = False,
    whole_root: Annotated[
        bool,
        typer.Option(
            "--whole-root",
            help="Pick d_k from 1, 4, 9 so √d_k is whole and the scaled scores stay fractions.",
        ),
    ] = False,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Same seed (0 or more), same lesson [default: random].",
            min=0,
            metavar="N",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Where to write it [default: NAME.yaml]; - for stdout."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
) -> None:
    """Write a new, valid lesson with hand-friendly numbers and a comment on every key."""
    import random

    from tutor.author.new import (
        Shape,
        check_name,
        command_line,
        generate,
        lesson_yaml,
        parse_tokens,
        pick_d_k,
        write_new,
    )

    check_name(name)
    k = pick_d_k(d_model, d_k, whole_root)
    shape = Shape(parse_tokens(tokens), d_model, k, d_v or k, heads, causal)
    seed = random.SystemRandom().randrange(10_000) if seed is None else seed
    lesson, warnings = generate(name, shape, seed)
    path = output or Path(f"{name}.yaml")
    shown = f"{name}.yaml" if str(path) == "-" else str(path)
    text = lesson_yaml(lesson, command_line(name, shape, seed, whole_root), shown)
    if str(path) == "-":
        sys.stdout.write(text)
        return
    write_new(path, text, force)
    console = make_console()
    from rich.text import Text

    from tutor.text.format import plural

    facts = f"{plural(len(shape.tokens), 'token')}, d_model {d_model}, d_k {k}, d_v {shape.d_v}"
    facts += (f", {heads} heads" if heads > 1 else "") + (", causal" if causal else "")
    console.print(Text(f"wrote {path}: {facts}, seed {seed}"), soft_wrap=True)
    if warnings:
        console.print(
            Text(f"note: no draw avoided every teaching warning; see: attn-tutor check {path}"),
            soft_wrap=True,
        )
    console.print(Text(f"next: edit it, then: attn-tutor check {path}"), soft_wrap=True)


@app.command()
def variants(
    lesson: LessonArg,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The folder to write the variants to.", metavar="DIR"),
    ],
    count: Annotated[
        int | None,
        typer.Option(
            "--count", help="How many variants (variant-01 …).", min=1, max=1000, metavar="N"
        ),
    ] = None,
    roster: Annotated[
        Path | None,
        typer.Option("--roster", help="A CSV of students (a name or id column): one variant each."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Same seed (0 or more), same variants [default: random].",
            min=0,
            metavar="N",
        ),
    ] = None,
    entries: Annotated[
        str | None,
        typer.Option(
            "--entries",
            help='The values entries may take, e.g. "-1,0,1,2" [default: the lesson\'s own].',
            metavar="LIST",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace the folder's earlier variants of this lesson."),
    ] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Write one variant of a lesson per student: new numbers, the same teaching intent and
    the same amount of work."""
    import random
    import shlex

    from rich.text import Text

    from tutor.author import variants as vr
    from tutor.core.roster import read_roster
    from tutor.text.format import plural

    if (count is None) == (roster is None):
        raise UsageError("give either --count N or --roster FILE (a CSV of students)")
    students = read_roster(roster) if roster is not None else None
    original = open_lesson(lesson, lessons_dir)
    values = vr.parse_entries(entries, original) if entries is not None else None
    seed = random.SystemRandom().randrange(10_000) if seed is None else seed
    made = vr.make_variants(original, students, count or 0, seed, values)
    how = f"--roster {shlex.quote(str(roster))}" if roster is not None else f"--count {count}"
    wide = f" --entries {shlex.quote(entries)}" if entries is not None else ""
    command = (
        f"attn-tutor variants {shlex.quote(lesson)} {how}{wide} --seed {seed} "
        f"--output {shlex.quote(str(output))}"
    )
    if output.exists() and not output.is_dir():
        raise TutorError(f"--output {output} is a file; give a folder")
    clashes = [v.file_name for v in made if (output / v.file_name).exists()]
    if clashes and not force:
        raise TutorError(
            f"{output / clashes[0]} already exists ({plural(len(clashes), 'file')} would be "
            "replaced); use --force to replace them, or another --output folder"
        )
    earlier = vr.earlier_variants(output, original.name) if force else []
    texts = [(output / v.file_name, vr.variant_yaml(v, original, command, seed)) for v in made]
    lines, tail = vr.spread(made, original)
    try:
        output.mkdir(parents=True, exist_ok=True)
        for path in earlier:  # a class is one run: the last run's students must not linger
            path.unlink()
        for path, text in texts:
            path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise TutorError(f"cannot write to {output}: {err.strerror}") from None
    console = make_console()
    for line in lines:
        console.print(Text(line), soft_wrap=True)
    console.print(Text(tail), soft_wrap=True)
    written = {path.name for path, _ in texts}
    removed = [p for p in earlier if p.name not in written]
    if removed:  # files of the last run that this run does not write again
        console.print(
            Text(
                f"removed {plural(len(removed), 'earlier variant')} of {original.name} "
                f"from {output} (--force)"
            ),
            soft_wrap=True,
        )
    if len(removed) < len(earlier):
        replaced = len(earlier) - len(removed)
        console.print(
            Text(f"replaced {plural(replaced, 'earlier variant')} of the same name (--force)"),
            soft_wrap=True,
        )
    console.print(
        Text(
            f"wrote {plural(len(made), 'variant')} of {original.name} to {output} (seed {seed}); "
            f"same seed, same variants"
        ),
        soft_wrap=True,
    )


# ---------------------------------------------------------------------------------------------
# the one error path


def _run(invoke: Callable[[], object]) -> int:
    """Run the command; turn every failure into one message on stderr and an exit code."""
    from typer.exceptions import Abort, Exit, TyperException

    err = None
    try:
        with terminable():
            rv = invoke()
        code = rv if isinstance(rv, int) else 0
        if sys.stdout is not None:  # None when stdout was closed (>&-)
            sys.stdout.flush()  # a full disk shows here, not in the interpreter's last flush
    except TutorError as e:
        err, code = str(e), EXIT_USAGE if isinstance(e, UsageError) else EXIT_INPUT
    except Exit as e:
        code = e.exit_code
    except TyperException as e:  # click's errors, vendored by typer: bad options and arguments
        usage = any(c.__name__ == "UsageError" for c in type(e).__mro__)
        if hasattr(e, "show"):
            e.show()
        else:
            err = str(e)
        code = 2 if usage else e.exit_code
    except Terminated:
        err, code = "terminated", 143  # 128 + SIGTERM, as a shell reports a process it ended
    except (Abort, KeyboardInterrupt, EOFError) as e:
        interrupted = isinstance(e, KeyboardInterrupt) or isinstance(
            e.__context__, KeyboardInterrupt
        )
        err, code = ("interrupted", 130) if interrupted else ("aborted", 1)
    except BrokenPipeError:  # the reader went away (| head): it had enough; say nothing
        code = _reader_gone()
    except SystemExit as e:  # click turns a broken pipe into exit 1; here it is one of ours
        if not isinstance(e.__context__, BrokenPipeError):
            raise
        code = _reader_gone()
    except OSError as e:
        if e.filename is not None:  # a path the system refused: too long, no permission...
            err, code = f"{e.filename}: {e.strerror or e}", 1
        elif e.errno in OUTPUT_ERRNOS:  # stdout itself: a full disk, a quota, a device error
            _drop_stdout()
            err, code = f"cannot write the output: {e.strerror}", 1
        elif os.environ.get("ATTN_TUTOR_DEBUG"):
            raise
        else:
            err, code = _internal_error()
    except Exception:
        if os.environ.get("ATTN_TUTOR_DEBUG"):
            raise
        err, code = _internal_error()
    if err:
        from rich.text import Text

        from tutor.text import theme
        from tutor.text.words import visible

        # Text, not escaped markup: rich's escape() drops the backslash of "\[" and doubles a
        # trailing one, and messages quote paths and values as the user wrote them; a control
        # character in a file name is spelled out, not sent to the terminal
        message = Text.assemble(("error:", f"bold {theme.BAD}"), " ", visible(err, keep="\n"))
        make_console(stderr=True).print(message, soft_wrap=True)
    return code


class Terminated(BaseException):
    """SIGTERM (``kill``, a shutdown, a time limit): the command stops where it is, and files
    it was writing are cleaned up as after Ctrl-C. Not an Exception: nothing catches it but
    ``_run``."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def terminable():  # type: ignore[no-untyped-def]
    """SIGTERM raises ``Terminated`` while a command runs (the default would end the process
    without its cleanup). Left alone when it was ignored at start (``nohup``), off the main
    thread, or already handled (a Python caller's own handler)."""
    import signal

    old = None
    with contextlib.suppress(ValueError):  # only the main thread may set handlers
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


EXIT_INPUT, EXIT_USAGE = 1, 2  # a bad lesson, sheet or answer; a bad command line
OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _internal_error() -> tuple[str, int]:
    """The message and exit code of the bug being handled: where it happened, not how."""
    import traceback

    kind, _, tb = sys.exc_info()
    last = traceback.extract_tb(tb)[-1]
    err = (
        f"internal error ({kind.__name__ if kind else '?'} at {Path(last.filename).name}:"
        f"{last.lineno}). This is a bug in attn-tutor; please report it with the command "
        "you ran. Set ATTN_TUTOR_DEBUG=1 to see the traceback."
    )
    return err, 70


def _reader_gone() -> int:
    """Stdout was a pipe whose reader stopped reading (``| head``): every command stops there
    quietly, with exit code 0, as ripgrep and fd do, so ``set -o pipefail`` does not fail a
    pipeline whose reader simply had enough."""
    _drop_stdout()  # what is still buffered goes nowhere, and the flush at exit succeeds
    return 0


def _drop_stdout() -> None:
    """Stdout failed: point it at the null device, so the flush at exit does not fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (a test's capture): nothing is flushed at exit


# what the output spells instead of a character its encoding lacks (LANG=C, PYTHONIOENCODING=ascii)
PLAIN_SPELLING = {
    "√": "sqrt", "×": "x", "·": "*", "÷": "/", "−": "-", "≈": "~", "≤": "<=", "≥": ">=",
    "∞": "inf", "ᵀ": "^T", "…": "...", "–": "-", "—": "--", "→": "->", "←": "<-", "✓": "ok",
    "✗": "x", "‘": "'", "’": "'", "“": '"', "”": '"', "•": "*", "π": "pi",
}  # fmt: skip


def _plain_spelling(err: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each unencodable character as ASCII (√ as sqrt, é as e), else ?."""
    import unicodedata

    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        name = unicodedata.name(ch, "")
        if name.startswith("BOX DRAWINGS"):  # table borders: ─ │ and the corners between
            ends = name.rsplit(" ", 1)[-1]
            plain = {"HORIZONTAL": "-", "VERTICAL": "|"}.get(ends, "+")
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
        out.append(PLAIN_SPELLING.get(ch) or plain or "?")
    return "".join(out), err.end


def _tolerant_streams() -> None:
    """Output in any encoding spells what it cannot show; input that is not valid text is read
    with replacement characters. Neither ever raises a UnicodeError."""
    import codecs

    codecs.register_error("attn-tutor-plain", _plain_spelling)
    for stream in (sys.stdout, sys.stderr):
        try:
            "√─é".encode(stream.encoding)
        except UnicodeEncodeError:
            stream.reconfigure(errors="attn-tutor-plain")  # type: ignore[union-attr]
        except (AttributeError, LookupError, TypeError):
            pass  # no stream, or not a text file (a test's capture)
    if sys.stdin is not None and getattr(sys.stdin, "errors", "replace") == "strict":
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]


class TutorGroup(typer.core.TyperGroup):
    """The app's click group: every run, from a shell or a CliRunner, goes through ``_run``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[no-untyped-def, override]
        _tolerant_streams()
        code = _run(
            lambda: super(TutorGroup, self).main(
                args, prog_name, complete_var, standalone_mode=False, **extra
            )
        )
        sys.exit(code)


app.info.cls = TutorGroup


def _quiet_exit() -> None:
    """At interpreter exit: no collector pass over what sympy left alive."""
    gc.disable()
    gc.freeze()


def main() -> None:
    """Console-script entry point.

    Importing sympy creates several hundred thousand long-lived objects, and the cyclic garbage
    collector walks them again and again while it loads and once more at exit, for nothing: a
    command's own work makes few reference cycles. So the collector is off for the run (``quiz``
    turns it back on for its session), and everything alive is frozen when the interpreter
    shuts down, which skips that last walk; exit handlers and file flushes still run. About a
    third of the time of ``walk cats-chase-mice``; see bench/bench.py.

    Only this entry point does that, and it puts the collector back as it found it when it
    returns: a Python caller (a notebook, a test) keeps a normal collector, and the freeze
    happens at the process's exit (an ``atexit`` handler), not before.
    """
    import atexit

    was_enabled = gc.isenabled()
    gc.disable()
    atexit.register(_quiet_exit)
    try:
        app()
    finally:
        if was_enabled:
            gc.enable()
