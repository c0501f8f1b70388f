"""The command line: parse, call the core, print, and translate errors to exit codes.

Heavy modules (sympy, numpy, the engine) are imported inside the commands that need them, so
``attn-tutor --help`` and ``attn-tutor list`` start quickly.
"""

import errno
import gc
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
import typer.core

from tutor.errors import TutorError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from tutor.lesson import Lesson

app = typer.Typer(
    name="attn-tutor",
    help="Learn the arithmetic of self-attention by working it by hand.",
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
        "--lessons-dir", help="Also look for lessons by name in this folder.", metavar="DIR"
    ),
]


def make_console(stderr: bool = False, width: int | None = None) -> "Console":
    """A console for this command: created per call so it sees the current COLUMNS/NO_COLOR.

    No emoji codes: a lesson's token may be ``:smile:``, and it is shown as typed. The width is
    kept within ``MIN_WIDTH`` … ``MAX_WIDTH`` columns: rules and tables span it, so
    ``COLUMNS=99999999`` took gigabytes, and ``COLUMNS=0`` printed nothing.
    """
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, emoji=False, width=width, soft_wrap=False)
    console.width = min(max(console.width, MIN_WIDTH), MAX_WIDTH)
    return console


MIN_WIDTH, MAX_WIDTH = 20, 1000  # columns: narrower or wider than any real terminal


def open_lesson(name: str, lessons_dir: list[Path] | None = None) -> "Lesson":
    """Find a lesson by name or path and load it (raises ``LessonError``)."""
    from tutor.lesson import find_lesson, load_lesson

    path = find_lesson(name, lessons_dir)
    return load_lesson(path, name=path.stem)


def _check_steps(steps: list[str] | None, available: list[str]) -> list[str] | None:
    if not steps:
        return None
    from tutor.lesson import STEP_NAMES, suggest

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
            "--pause", help="Wait for Enter between steps (q to stop); only on a terminal."
        ),
    ] = False,
) -> None:
    """Work through every step of a lesson, with term-by-term working."""
    from tutor.engine import derive

    d = derive(open_lesson(lesson, lessons_dir))
    names = list(dict.fromkeys(s.name for s in d.steps))
    steps = _check_steps(step, names)
    if head is not None and head > d.head_count:
        raise UsageError(f"--head {head}: this lesson has {d.head_count} head(s)")
    if json_out:
        import json

        from tutor.export import derivation_json

        sys.stdout.write(json.dumps(derivation_json(d, exact, steps, head)) + "\n")
        return
    from tutor.render import WalkOptions, walk_pages

    console = make_console()
    opts = WalkOptions(
        steps=steps, head=head, exact=exact, precision=precision, width=console.width
    )
    pages = walk_pages(d, opts)  # made one at a time: a long walk never holds all its tables
    page: list | None = next(pages)
    while page is not None:
        for part in page:
            console.print(part)
        page = next(pages, None)
        if page is not None and pause and not wait_for_enter(console, sys.stdin):
            break


@app.command("list")
def list_lessons(lessons_dir: LessonsDirOpt = None) -> None:
    """List the lessons that can be named on the command line."""
    from rich.text import Text

    from tutor.columns import columns
    from tutor.lesson import LESSONS_ENV, check_lesson, iter_lessons, lesson_dirs
    from tutor.words import visible

    rows = []
    first: dict[str, str] = {}  # name -> origin of the lesson that wins
    for name, origin, path in iter_lessons(lessons_dir):
        lesson, _ = check_lesson(path, name)
        where = origin  # the folder is in the legend below the list
        if name in first:
            where += f" (shadowed by {first[name]})"
        first.setdefault(name, origin)
        shown = visible(name)  # a file name: any escape sequence in it is spelled out
        if lesson is None:
            rows.append([shown, "", "", "", "", where, "(invalid: run attn-tutor check)"])
            continue
        sizes = (lesson.n, lesson.d_model, lesson.d_k, lesson.d_v)
        rows.append([shown, *map(str, sizes), where, lesson.title])
    folders = []
    for origin, folder in lesson_dirs(lessons_dir):
        tags = [LESSONS_ENV] if origin.startswith("env") else []
        tags += [] if folder.is_dir() else ["no such folder"]
        folders.append([origin, f"{folder} ({'; '.join(tags)})" if tags else str(folder)])
    console = make_console()
    header = ("name", "N", "d_model", "d_k", "d_v", "from", "title")
    lines = columns(rows, console.width, header, right=(1, 2, 3, 4), console=console)
    lines += [] if rows else [Text("(no lessons found)")]
    lines += [Text(), Text("Folders, searched in this order (the first lesson of a name wins):")]
    lines += columns(folders, console.width, console=console)
    console.print(Text("\n").join(lines))  # Text, not str: no markup or emoji to parse


EXPORT_FORMATS = ("md", "tex", "sheet", "svg", "html")


def write_output(text: str, output: Path | None, force: bool) -> None:
    """Print ``text`` to stdout, or write it to ``output`` (never over a file without --force)."""
    if output is None or str(output) == "-":  # - is stdout, as for new --output
        sys.stdout.write(text)
        return
    if output.is_dir():
        raise TutorError(f"{output} is a folder; give a file name to --output")
    if output.exists() and not force:
        raise TutorError(f"{output} already exists; use --force to overwrite it")
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise TutorError(f"cannot write {output}: {err.strerror}") from None


@app.command()
def export(
    lesson: LessonArg,
    format: Annotated[
        str, typer.Option("--format", "-f", help="md, tex, sheet, svg or html.")
    ] = "md",
    no_answers: Annotated[
        bool,
        typer.Option("--no-answers", help="A worksheet: leave the cells to fill blank (md, tex)."),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file, not stdout; - for stdout."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the --output file.")] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Export a worksheet or answer key (md, tex), a blank answer sheet, or the walk (svg, html)."""
    if format not in EXPORT_FORMATS:
        raise UsageError(f"--format {format!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    if no_answers and format in ("svg", "html"):
        raise UsageError(
            f"--no-answers applies to md and tex (the sheet is always blank), not {format}"
        )
    from tutor import worksheet
    from tutor.engine import derive

    d = derive(open_lesson(lesson, lessons_dir))
    if format == "md":
        text = worksheet.markdown(d, answers=not no_answers)
    elif format == "tex":
        text = worksheet.latex(d, answers=not no_answers)
    elif format == "sheet":
        text = worksheet.answer_sheet(d)
    else:
        from tutor.render import walk_document

        text = walk_document(d, format)
    write_output(text, output, force)


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
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Answer questions about single cells; attn-tutor checks your arithmetic."""
    import random
    from datetime import UTC, datetime

    from rich.text import Text

    from tutor import history
    from tutor import quiz as qz
    from tutor.engine import derive
    from tutor.format import plural

    d = derive(open_lesson(lesson, lessons_dir))
    chosen = [s.strip() for item in steps or [] for s in item.split(",") if s.strip()]
    seed = random.SystemRandom().randrange(1_000_000) if seed is None else seed
    questions = qz.choose(d, chosen or None, count, seed)
    console = make_console()
    console.print(
        Text.assemble(
            (f"Quiz: {d.lesson.title}", "bold"),
            f"  ({plural(len(questions), 'question')}, seed {seed}; "
            f"answers to {plural(d.lesson.precision, 'place')})",
        )
    )
    # a closed stdin (None) reads as an empty stream: the quiz ends at once, cleanly
    stdin = sys.stdin if sys.stdin is not None else io.StringIO("")
    stream = None if stdin.isatty() else stdin
    gc.enable()  # a session may last a while: collect as usual (main turns it off for speed)
    result = qz.run(d, questions, console, stream)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    for problem in history.append(qz.record(result, d.lesson.name, seed, when)):
        make_console(stderr=True).print(Text(f"warning: {problem}"))
    if result.ended == "ctrl-c":
        raise typer.Exit(130)


@app.command()
def progress(
    lesson: Annotated[str | None, typer.Argument(help="Show only this lesson.")] = None,
) -> None:
    """How your quizzes have gone, per lesson and step, and what to practise next."""
    import shlex

    from rich.table import Table
    from rich.text import Text

    from tutor import history
    from tutor.format import plural
    from tutor.words import visible

    console, err = make_console(), make_console(stderr=True)
    found = history.read()
    for problem in found.problems:
        err.print(Text(f"warning: {problem}"))
    records = [r for r in found.records if lesson is None or r.get("lesson") == lesson]
    if not records:
        where = history.history_path()
        console.print(Text(f"No quizzes yet ({where}). Start one with: attn-tutor quiz"))
        return
    rows = history.progress(records)
    console.print(
        Text(f"Progress over {plural(len(records), 'quiz', 'quizzes')} ({history.history_path()})")
    )
    for name in dict.fromkeys(r.lesson for r in rows):
        # Text: names are not markup; visible: the history is a file anyone could have edited
        table = Table(title=Text(visible(name)), title_justify="left")
        for col in ("step", "asked", "first try", "after hints", "missed", "recent"):
            table.add_column(col, justify="left" if col == "step" else "right")
        for r in rows:
            if r.lesson == name:
                recent = " ".join(f"{right}/{asked}" for right, asked in r.per_quiz[-5:])
                step = visible(r.step)
                cells = (step, str(r.asked), str(r.first), str(r.hints), str(r.missed), recent)
                table.add_row(*map(Text, cells))
        console.print(table)
    console.print(
        Text("recent: right first try / asked, in the last 5 quizzes, oldest first", style="dim")
    )
    weakest = history.practise_next(rows)
    if weakest is not None:
        step = weakest.step.split(".")[-1]
        line = (
            f"Practise next: {weakest.step} in {weakest.lesson} "
            f"(attn-tutor quiz {shlex.quote(weakest.lesson)} --steps {step})"
        )
        console.print(Text(visible(line)))


@app.command()
def grade(
    lesson: LessonArg,
    sheet: Annotated[Path, typer.Argument(help="The filled-in answer sheet (.yaml).")],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Grade a hand-worked answer sheet, with follow-through from your own earlier answers."""
    from rich.text import Text

    from tutor import grade as gr
    from tutor.engine import derive
    from tutor.words import escape_c1, visible

    d = derive(open_lesson(lesson, lessons_dir))
    read = gr.read_sheet(sheet, d)
    report = gr.grade(d, read)
    if json_out:
        import json

        for problem in read.problems:  # the unreadable cells: on stderr, stdout stays JSON
            make_console(stderr=True).print(Text(visible(str(problem))), soft_wrap=True)
        text = json.dumps(gr.report_json(report), ensure_ascii=False)
        sys.stdout.write(escape_c1(text) + "\n")  # the sheet's text: no raw DEL or C1
        return
    from tutor.grade_render import report as render_report

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
    from tutor.cells import parse_cell
    from tutor.engine import derive
    from tutor.explain import explain as explain_tree

    d = derive(open_lesson(lesson, lessons_dir))
    step, i, j = parse_cell(d, cell)
    places = precision if precision is not None else d.lesson.precision
    make_console().print(explain_tree(d, step, i, j, places, limit))


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
    from tutor.render import softmax_warmup
    from tutor.warmup import read_number, read_numbers, softmax_row, times_effect, times_text

    values = read_numbers(numbers)
    factor = read_number(times, "--times")
    weights = softmax_row(values, factor)
    plain = softmax_row(values) if factor != (1, 1) else None
    console = make_console()
    effect = times_effect(factor)
    for part in softmax_warmup(weights, precision, plain, times_text(factor), effect):
        console.print(part)


def wait_for_enter(console: "Console", stream: TextIO | None) -> bool:
    """Between walk steps: wait for Enter on a terminal; False when the reader types q or EOF.

    Without a terminal (a pipe, a file, a test) it returns at once, so scripts never hang.
    """
    if stream is None or not stream.isatty():
        return True
    console.print("[dim]── Enter: next step · q: stop ──[/]", end="")
    line = stream.readline()
    console.print()
    return bool(line) and line.strip().lower() not in ("q", "quit")


@app.command()
def schema() -> None:
    """Print the JSON Schema of the lesson format, for editors that check YAML as you type."""
    from tutor.schema import schema_text

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
    from rich.text import Text

    from tutor.lint import check_lessons, summary
    from tutor.words import visible

    reports = check_lessons(files, lessons_dir)
    console = make_console()
    for report in reports:
        for p in report.problems:
            tag = ("warning: ", "yellow") if p.severity == "warning" else ""
            # a path and a message may quote a file name or a value: controls spelled out
            place = (f"{visible(p.where)}:", "bold")
            console.print(Text.assemble(place, " ", tag, visible(p.message)), soft_wrap=True)
    ok = all(r.valid for r in reports)
    console.print(Text(summary(reports), style="green" if ok else "bold red"), soft_wrap=True)
    return 0 if ok else 1


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

    from tutor.author import (
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

    from tutor.format import plural

    facts = f"{plural(len(shape.tokens), 'token')}, d_model {d_model}, d_k {k}, d_v {shape.d_v}"
    facts += (f", {heads} heads" if heads > 1 else "") + (", causal" if causal else "")
    console.print(Text(f"wrote {path}: {facts}, seed {seed}"), soft_wrap=True)
    if warnings:
        console.print(
            Text(f"note: no draw avoided every teaching warning; see: attn-tutor check {path}"),
            soft_wrap=True,
        )
    console.print(Text(f"next: edit it, then: attn-tutor check {path}"), soft_wrap=True)


# ---------------------------------------------------------------------------------------------
# the one error path


def _run(invoke: Callable[[], object]) -> int:
    """Run the command; turn every failure into one message on stderr and an exit code."""
    from typer.exceptions import Abort, Exit, TyperException

    err = None
    try:
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
    except (Abort, KeyboardInterrupt, EOFError) as e:
        interrupted = isinstance(e, KeyboardInterrupt) or isinstance(
            e.__context__, KeyboardInterrupt
        )
        err, code = ("interrupted", 130) if interrupted else ("aborted", 1)
    except BrokenPipeError:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the reader went away; say nothing
        code = 0
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

        from tutor.words import visible

        # Text, not escaped markup: rich's escape() drops the backslash of "\[" and doubles a
        # trailing one, and messages quote paths and values as the user wrote them; a control
        # character in a file name is spelled out, not sent to the terminal
        message = Text.assemble(("error:", "bold red"), " ", visible(err, keep="\n"))
        make_console(stderr=True).print(message, soft_wrap=True)
    return code


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
    import contextlib

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


def main() -> None:
    """Console-script entry point.

    Importing sympy creates several hundred thousand long-lived objects, and the cyclic garbage
    collector walks them again and again while it loads and once more at exit, for nothing: a
    command's own work makes few reference cycles. So the collector is off for the run (``quiz``
    turns it back on for its session), and everything alive is frozen before the interpreter
    shuts down, which skips that last walk; exit handlers and file flushes still run. About a
    third of the time of ``walk cats-chase-mice``; see bench/bench.py.
    """
    gc.disable()
    try:
        app()
    finally:
        gc.freeze()
