"""What a student reads: walk, list, explain, explore and softmax."""

import functools
import gc
import io
import sys
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from tutor.cli.common import (
    LessonArg,
    LessonsDirOpt,
    PlainOpt,
    check_steps,
    make_console,
    open_lesson,
    terminal_width,
)
from tutor.core.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


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
    plain: PlainOpt = False,
) -> None:
    """Work through every step of a lesson, with term-by-term working."""
    from tutor.core.decode import with_next_token
    from tutor.core.engine import derive

    d = derive(with_next_token(open_lesson(lesson, lessons_dir), next_token, x))
    names = list(dict.fromkeys(s.name for s in d.steps))
    steps = check_steps(step, names)
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

    console = make_console(plain=plain)
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
    from tutor.assess.quiz import read_line
    from tutor.teach.lecture import Lecture, key_reader
    from tutor.teach.walk import worked_cell

    tty = stdin.isatty()
    # a prediction is read as the quiz reads an answer (an overlong line is one answer, input
    # that cannot be decoded ends it); at a terminal, with line editing, Enter to send it
    read = functools.partial(read_line, console, None if tty else stdin)
    places = opts.precision if opts.precision is not None else d.lesson.precision
    asks = Predictions(d, lambda step: worked_cell(d, step, opts), console, read, places, tty)
    lecture = Lecture(
        console, pages, read, tty and console.is_terminal, asks if predict else None, tty,
        key_reader(stdin) if tty else None,
    )  # fmt: skip
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


def list_lessons(lessons_dir: LessonsDirOpt = None) -> None:
    """List the lessons that can be named on the command line."""
    from tutor.teach.listing import lesson_list

    # plain text, printed without a Rich console: list starts at the floor (bench/README.md)
    sys.stdout.write(lesson_list(lessons_dir, terminal_width()) + "\n")


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
    plain: PlainOpt = False,
) -> None:
    """Show everything one cell depends on, as a tree, with exact and rounded values."""
    from tutor.core.engine import derive
    from tutor.teach.explain import explain as explain_tree
    from tutor.text.cells import parse_cell

    d = derive(open_lesson(lesson, lessons_dir))
    step, i, j = parse_cell(d, cell)
    places = precision if precision is not None else d.lesson.precision
    make_console(plain=plain).print(explain_tree(d, step, i, j, places, limit))


def explore(lesson: LessonArg = "cats-chase-mice", lessons_dir: LessonsDirOpt = None) -> None:
    """Change a number of a lesson and watch attention change (a full-screen app)."""
    from tutor.explore.launch import explore as run_explorer
    from tutor.explore.launch import need_textual

    need_textual()
    found = open_lesson(lesson, lessons_dir)
    gc.enable()  # a session may last a while: collect as usual (main turns it off for speed)
    run_explorer(found, lesson)


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
    plain: PlainOpt = False,
) -> None:
    """Work softmax by hand for any numbers: each e^x, the total and each share."""
    from tutor.teach.walk import softmax_warmup
    from tutor.teach.warmup import read_number, read_numbers, softmax_row, times_effect, times_text

    values = read_numbers(numbers)
    factor = read_number(times, "--times")
    weights = softmax_row(values, factor)
    unscaled = softmax_row(values) if factor != (1, 1) else None
    console = make_console(plain=plain)
    effect = times_effect(factor)
    for part in softmax_warmup(weights, precision, unscaled, times_text(factor), effect):
        console.print(part)
