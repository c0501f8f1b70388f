"""For instructors: schema, check, new and variants."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from tutor.cli.common import (
    LessonArg,
    LessonsDirOpt,
    make_console,
    open_lesson,
    output_file,
    say_note,
)
from tutor.core.errors import UsageError


def schema() -> None:
    """Print the JSON Schema of the lesson format, for editors that check YAML as you type."""
    from tutor.author.schema import schema_text

    sys.stdout.write(schema_text())


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


def new(
    name: Annotated[str, typer.Argument(help="The lesson's name, e.g. the-cat-sat.")],
    tokens: Annotated[
        str | None,
        typer.Option(
            "--tokens",
            help='The words, separated by spaces: "the cat sat" (with --from, spaces or commas '
            "[default: the file's tokens, else t1, t2, …]).",
            show_default=False,
        ),
    ] = None,
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
    output: Annotated[  # the text as typed: a trailing / means a folder, and Path drops it
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Where to write it [default: NAME.yaml]; - for stdout; a folder, DIR/, for "
            "DIR/NAME.yaml.",
            metavar="PATH",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Make the lesson from the arrays of an .npz file (X or E and P, W_Q, W_K, W_V, "
            "W_Q.1 … per head, W_O, b_Q, b_K, b_V, b_O, tokens).",
            metavar="FILE.npz",
            show_default=False,
        ),
    ] = None,
    places: Annotated[
        int,
        typer.Option(
            "--places",
            help="With --from: decimals each entry is rounded to (half away from zero).",
            min=0,
            max=10,
            metavar="N",
        ),
    ] = 2,
) -> None:
    """Write a new, valid lesson with hand-friendly numbers and a comment on every key; or,
    with --from, a lesson made from a file of arrays (a real layer's weights)."""
    import random

    if from_file is not None:
        drawn = (d_model != 4, d_k, d_v, heads != 1, whole_root, seed is not None)
        if any(o not in (False, None) for o in drawn):
            raise UsageError(
                "--d-model, --d-k, --d-v, --heads, --whole-root and --seed draw a lesson; with "
                "--from the shapes and numbers come from the arrays, so leave them out"
            )
        new_from(name, from_file, places, tokens, causal, output, force)
        return
    if tokens is None:
        raise UsageError('--tokens is needed: the words, --tokens "the cat sat" (or --from FILE)')

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
    path = output_file(output, f"{name}.yaml") or Path(f"{name}.yaml")
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
    add: Annotated[
        Path | None,
        typer.Option(
            "--add",
            help="The class's roster again, with late students: write only the missing "
            "students' variants (same seed; every file already written stays).",
            metavar="FILE",
        ),
    ] = None,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Write one variant of a lesson per student: new numbers, the same teaching intent, the
    same amount of work and the same price for a classic slip."""
    import random
    import shlex

    from rich.text import Text

    from tutor.author import variants as vr
    from tutor.core.roster import read_roster
    from tutor.text.format import plural

    if [count, roster, add].count(None) != 2:
        raise UsageError(
            "give either --count N or --roster FILE (a CSV of students); or --add FILE (the "
            "roster again, with late students)"
        )
    if add is not None and force:
        raise UsageError("--add keeps every variant already written; it goes without --force")
    students = read_roster(roster or add) if (roster or add) is not None else None
    original = open_lesson(lesson, lessons_dir)
    values = vr.parse_entries(entries, original) if entries is not None else None
    if add is not None:
        return _add_variants(original, students or [], output, seed, values, entries, add, lesson)
    seed = random.SystemRandom().randrange(10_000) if seed is None else seed
    made = vr.make_variants(original, students, count or 0, seed, values)
    how = f"--roster {shlex.quote(str(roster))}" if roster is not None else f"--count {count}"
    wide = f" --entries {shlex.quote(entries)}" if entries is not None else ""
    command = (
        f"attn-tutor variants {shlex.quote(lesson)} {how}{wide} --seed {seed} "
        f"--output {shlex.quote(str(output))}"
    )
    written = vr.write_variants(made, original, output, command, seed, force)
    lines, tail = vr.spread(made, original)
    console = make_console()
    for line in lines:
        console.print(Text(line), soft_wrap=True)
    console.print(Text(tail), soft_wrap=True)
    if written.removed:  # files of the last run that this run does not write again
        console.print(
            Text(
                f"removed {plural(written.removed, 'earlier variant')} of {original.name} "
                f"from {output} (--force)"
            ),
            soft_wrap=True,
        )
    if written.replaced:
        console.print(
            Text(
                f"replaced {plural(written.replaced, 'earlier variant')} of the same name (--force)"
            ),
            soft_wrap=True,
        )
    console.print(
        Text(
            f"wrote {plural(len(made), 'variant')} of {original.name} to {output} (seed {seed}); "
            f"same seed, same variants"
        ),
        soft_wrap=True,
    )


def _add_variants(original, students, output, seed, values, entries, add, lesson) -> None:  # type: ignore[no-untyped-def]
    """``variants --add ROSTER``: the roster's students who have no variant in ``output`` yet,
    each with the numbers their id gives under the folder's seed."""
    import shlex

    from rich.text import Text

    from tutor.author import variants as vr
    from tutor.text.format import plural

    folder = vr.folder_of(output, original)
    if len(folder.seeds) != 1:
        found = ", ".join(str(s) for s in sorted(folder.seeds)) or "none"
        raise UsageError(
            f"{output}'s variants of {original.name} name {len(folder.seeds)} seeds ({found}); "
            "--add goes on from one class made with one seed"
        )
    (own,) = folder.seeds
    if seed is not None and seed != own:
        raise UsageError(f"--seed {seed}: {output}'s variants were made with seed {own}")
    missing = [s for s in students if vr.student_key(s) not in folder.keys]
    console = make_console()
    if not missing:
        console.print(
            Text(f"every student of {add} has a variant in {output}; nothing written"),
            soft_wrap=True,
        )
        return
    made = vr.make_variants(original, missing, 0, own, values, folder.last + 1, folder.width,
                            folder.taken)  # fmt: skip
    wide = f" --entries {shlex.quote(entries)}" if entries is not None else ""
    command = (
        f"attn-tutor variants {shlex.quote(lesson)} --add {shlex.quote(str(add))}{wide} "
        f"--seed {own} --output {shlex.quote(str(output))}"
    )
    vr.write_variants(made, original, output, command, own)
    lines, _ = vr.spread(made, original)
    for line in lines:
        console.print(Text(line), soft_wrap=True)
    console.print(
        Text(
            f"added {plural(len(made), 'variant')} of {original.name} to {output} (seed {own}) "
            f"for the students of {add} who had none; the {len(folder.keys)} already written "
            "are unchanged"
        ),
        soft_wrap=True,
    )


def new_from(
    name: str,
    path: Path,
    places: int,
    tokens: str | None,
    causal: bool,
    output: str | None,
    force: bool,
) -> None:
    """``new NAME --from FILE.npz``: the lesson, written, and how far rounding moved it."""
    import shlex

    from rich.text import Text

    from tutor.author.fromarrays import make, moved_text, read_npz
    from tutor.author.new import check_name, write_new

    check_name(name)
    command = f"attn-tutor new {shlex.quote(name)} --from {shlex.quote(str(path))}"
    command += f" --places {places}" + (f" --tokens {shlex.quote(tokens)}" if tokens else "")
    command += " --causal" if causal else ""
    made = make(read_npz(path), name, places, tokens, str(path), command, causal)
    target = output_file(output, f"{name}.yaml") or Path(f"{name}.yaml")
    console = make_console(stderr=str(target) == "-")
    if str(target) == "-":
        sys.stdout.write(made.yaml)
    else:
        write_new(target, made.yaml, force)
        console.print(Text(f"wrote {target}: made from {path}"), soft_wrap=True)
    console.print(Text(moved_text(made)), soft_wrap=True)
    if str(target) != "-":
        console.print(Text(f"next: attn-tutor walk {target}"), soft_wrap=True)
