"""What every command shares: the console factory, the LESSON argument and --lessons-dir,
finding a lesson, notes on stderr, and writing a command's output."""

import errno
import functools
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from tutor.core.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from tutor.core.lesson import Lesson


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
PlainOpt = Annotated[
    bool,
    typer.Option(
        "--plain",
        help="For screen readers: no box drawing, no colour; each matrix read row by row "
        '("row cats: 2, 0"), signs said in words. Also ATTN_TUTOR_PLAIN=1.',
    ),
]


def make_console(
    stderr: bool = False,
    width: int | None = None,
    file: TextIO | None = None,
    plain: bool = False,
) -> "Console":
    """A console for this command: created per call so it sees the current COLUMNS/NO_COLOR.

    ``plain`` (or ``ATTN_TUTOR_PLAIN=1``): the plain view for screen readers, every table and
    matrix read as lines of words, no box drawing and no colour (see ``tutor.text.plain``).

    No emoji codes: a lesson's token may be ``:smile:``, and it is shown as typed. The width is
    kept within ``MIN_WIDTH`` … ``MAX_WIDTH`` columns: rules and tables span it, so
    ``COLUMNS=99999999`` took gigabytes, and ``COLUMNS=0`` printed nothing.
    """
    plain = plain or os.environ.get("ATTN_TUTOR_PLAIN", "").strip().lower() in YES
    console = _console_type()(
        stderr=stderr,
        highlight=False,
        emoji=False,
        width=width,
        soft_wrap=False,
        file=file,
        no_color=True if plain else None,
    )
    console.plain = plain
    console.width = min(max(console.width, MIN_WIDTH), MAX_WIDTH)
    return console


@functools.cache
def _console_type() -> type["Console"]:
    from rich.console import Console

    class TutorConsole(Console):
        plain = False  # the plain view: see make_console

        def print(self, *objects: object, **kwargs: object) -> None:  # type: ignore[override]
            if self.plain:
                from tutor.text.plain import plain

                objects = tuple(plain(objects))
            super().print(*objects, **kwargs)  # type: ignore[arg-type]

        def on_broken_pipe(self) -> None:
            """The reader of a pipe went away (``| head``): not rich's own exit 1, but the one
            way every command stops then (``run_command``: quietly, exit 0)."""
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return TutorConsole


YES = ("1", "true", "yes", "on")  # ATTN_TUTOR_PLAIN's values that turn the plain view on
MIN_WIDTH, MAX_WIDTH = 20, 1000  # columns: narrower or wider than any real terminal


def terminal_width() -> int:
    """The width a Rich console would take, for output printed without one (``list``): COLUMNS
    when it is a number, 80 on a dumb terminal, else the terminal of stdin, stdout or stderr
    (80 when there is none), kept within ``MIN_WIDTH`` … ``MAX_WIDTH``."""
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else 0
    if not width and os.environ.get("TERM", "").lower() not in ("dumb", "unknown"):
        for fd in (0, 1, 2):
            try:
                width = os.get_terminal_size(fd).columns
                break
            except (OSError, ValueError):
                continue
    return min(max(width or 80, MIN_WIDTH), MAX_WIDTH)


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


def check_steps(steps: list[str] | None, available: list[str]) -> list[str] | None:
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


def names_folder(output: str | None) -> bool:
    """An --output typed with a trailing slash (``-o newdir/``) names a folder, whether or not it
    exists yet. ``Path`` drops the slash, so an --output that may be a folder is taken as text."""
    return output is not None and output.endswith(("/", os.sep))


def output_file(output: str | None, name: str) -> Path | None:
    """The file an --output means for a command that writes one file called ``name`` by
    default: None for none given (stdout), ``-`` as typed, ``DIR/name`` for a folder typed as
    ``DIR/`` (made if missing), else the path as typed (a folder typed without its slash is
    refused where the file is written, with the advice to name a file)."""
    if output is None or output == "-":
        return None if output is None else Path(output)
    path = Path(output)
    if not names_folder(output):
        return path
    from tutor.core.errors import TutorError

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TutorError(f"cannot make the folder {output}: {err.strerror or err}") from None
    return path / name


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
    from tutor.core.files import save

    save(output, text, force)


EXIT_INPUT, EXIT_USAGE = 1, 2  # a bad lesson, sheet or answer; a bad command line
