"""The command line: parse, call the core, print, and translate errors to exit codes.

Heavy modules (sympy, numpy, the engine) are imported inside the commands that need them, so
``attn-tutor --help`` and ``attn-tutor list`` start quickly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
        help="A bundled lesson's name (see 'attn-tutor list') or a path to a .yaml file."
    ),
]
LessonsDirOpt = Annotated[
    list[Path] | None,
    typer.Option("--lessons-dir", help="Also look for lessons by name in this folder."),
]


def make_console(stderr: bool = False, width: int | None = None) -> Console:
    """A console for this command: created per call so it sees the current COLUMNS/NO_COLOR."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, width=width, soft_wrap=False)


def open_lesson(name: str, lessons_dir: list[Path] | None = None) -> Lesson:
    """Find a lesson by name or path and load it (raises ``LessonError``)."""
    from tutor.lesson import find_lesson, load_lesson

    path = find_lesson(name, lessons_dir)
    return load_lesson(path, name=path.stem)


def _check_steps(steps: list[str] | None, available: list[str]) -> list[str] | None:
    if not steps:
        return None
    from tutor.lesson import STEP_NAMES, suggest

    chosen = [s.strip() for item in steps for s in item.split(",") if s.strip()]
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
        typer.Option("--step", "-s", help="Show only this step (repeat, or give a,b,c)."),
    ] = None,
    head: Annotated[int | None, typer.Option(help="Show only this head (1-based).", min=1)] = None,
    exact: Annotated[
        bool, typer.Option("--exact", help="Show exact forms beside decimals.")
    ] = False,
    precision: Annotated[
        int | None, typer.Option(help="Decimals shown (default: the lesson's).", min=0, max=10)
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object and nothing else.")
    ] = False,
    lessons_dir: LessonsDirOpt = None,
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
    from tutor.render import WalkOptions
    from tutor.render import walk as render_walk

    console = make_console()
    opts = WalkOptions(
        steps=steps, head=head, exact=exact, precision=precision, width=console.width
    )
    for part in render_walk(d, opts):
        console.print(part)


@app.command("list")
def list_lessons(lessons_dir: LessonsDirOpt = None) -> None:
    """List the lessons that can be named on the command line."""
    from rich.table import Table

    from tutor.lesson import LESSONS_ENV, check_lesson, iter_lessons, lesson_dirs

    table = Table(title="Lessons")
    for col in ("name", "title", "N", "d_model", "d_k", "d_v", "from"):
        table.add_column(col, justify="right" if col in ("N", "d_model", "d_k", "d_v") else "left")
    first: dict[str, str] = {}  # name -> origin of the lesson that wins
    for name, origin, path in iter_lessons(lessons_dir):
        lesson, _ = check_lesson(path, name)
        where = origin  # the folder is in the legend below the table
        if name in first:
            where += f" (shadowed by {first[name]})"
        first.setdefault(name, origin)
        if lesson is None:
            table.add_row(name, "(invalid: run attn-tutor check)", "", "", "", "", where)
            continue
        table.add_row(
            name,
            lesson.title,
            str(lesson.n),
            str(lesson.d_model),
            str(lesson.d_k),
            str(lesson.d_v),
            where,
        )
    console = make_console()
    console.print(table)
    folders = Table.grid(padding=(0, 2))
    for origin, folder in lesson_dirs(lessons_dir):
        tags = [LESSONS_ENV] if origin.startswith("env") else []
        tags += [] if folder.is_dir() else ["no such folder"]
        folders.add_row(origin, f"{folder} ({'; '.join(tags)})" if tags else str(folder))
    console.print("Folders, searched in this order (the first lesson of a name wins):")
    console.print(folders)


def _run(invoke: Callable[[], object]) -> int:
    """Run the command; turn every failure into one message on stderr and an exit code."""
    from typer.exceptions import Abort, Exit, TyperException

    err = None
    try:
        rv = invoke()
        code = rv if isinstance(rv, int) else 0
    except TutorError as e:
        err, code = str(e), e.exit_code
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
    except Exception:
        if os.environ.get("ATTN_TUTOR_DEBUG"):
            raise
        import traceback

        kind, _, tb = sys.exc_info()
        last = traceback.extract_tb(tb)[-1]
        err = (
            f"internal error ({kind.__name__ if kind else '?'} at {Path(last.filename).name}:"
            f"{last.lineno}). This is a bug in attn-tutor; please report it with the command "
            "you ran. Set ATTN_TUTOR_DEBUG=1 to see the traceback."
        )
        code = 70
    if err:
        from rich.markup import escape

        make_console(stderr=True).print(f"[bold red]error:[/] {escape(err)}", soft_wrap=True)
    return code


class TutorGroup(typer.core.TyperGroup):
    """The app's click group: every run, from a shell or a CliRunner, goes through ``_run``."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[no-untyped-def, override]
        code = _run(
            lambda: super(TutorGroup, self).main(
                args, prog_name, complete_var, standalone_mode=False, **extra
            )
        )
        sys.exit(code)


app.info.cls = TutorGroup


def main() -> None:
    """Console-script entry point."""
    app()


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

    reports = check_lessons(files, lessons_dir)
    console = make_console()
    for report in reports:
        for p in report.problems:
            tag = ("warning: ", "yellow") if p.severity == "warning" else ""
            place = (f"{p.path}:{p.line}:{p.col}:", "bold")
            console.print(Text.assemble(place, " ", tag, p.message), soft_wrap=True)
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
        int, typer.Option("--d-model", help="Features per token.", min=1, max=16)
    ] = 4,
    d_k: Annotated[
        int | None,
        typer.Option("--d-k", help="Length of queries and keys [default: 2].", min=1, max=16),
    ] = None,
    d_v: Annotated[
        int | None,
        typer.Option("--d-v", help="Length of values [default: d_k].", min=1, max=16),
    ] = None,
    heads: Annotated[int, typer.Option("--heads", help="Attention heads.", min=1, max=4)] = 1,
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
        int | None, typer.Option("--seed", help="Same seed, same lesson [default: random].")
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

    facts = f"{len(shape.tokens)} tokens, d_model {d_model}, d_k {k}, d_v {shape.d_v}"
    facts += (f", {heads} heads" if heads > 1 else "") + (", causal" if causal else "")
    console.print(Text(f"wrote {path}: {facts}, seed {seed}"), soft_wrap=True)
    if warnings:
        console.print(
            Text(f"note: no draw avoided every teaching warning; see: attn-tutor check {path}"),
            soft_wrap=True,
        )
    console.print(Text(f"next: edit it, then: attn-tutor check {path}"), soft_wrap=True)
