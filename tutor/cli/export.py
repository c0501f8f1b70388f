"""Documents: export (worksheets, keys, answer sheets, slides, PDFs) and code."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tutor.cli.common import (
    LessonArg,
    LessonsDirOpt,
    check_steps,
    collect_as_we_go,
    names_folder,
    open_lesson,
    output_file,
    say_note,
    write_output,
)
from tutor.core.errors import TutorError, UsageError

if TYPE_CHECKING:
    from tutor.teach.pictures import Picture


EXPORT_FORMATS = ("md", "tex", "sheet", "form", "svg", "html", "pdf", "typ")


def export(
    lesson: LessonArg,
    format: Annotated[
        str, typer.Option("--format", "-f", help="md, tex, pdf, typ, sheet, form, svg or html.")
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
    output: Annotated[  # the text as typed: a trailing / means a folder, and Path drops it
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file, not stdout; - for stdout; DIR/ for a folder (a folder "
            "of variants, slides).",
            metavar="PATH",
        ),
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
    """Export a worksheet or answer key (md, tex, pdf, typ), a blank answer sheet, an answer
    form to fill in a browser (form: one HTML page that saves a sheet), or the walk (svg,
    html). LESSON may be a folder written by 'attn-tutor variants': one file per variant
    (pdf and typ: one document, each student's sheet from a new page)."""
    if format not in EXPORT_FORMATS:
        raise UsageError(f"--format {format!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    if no_answers and format in ("svg", "html", "form"):
        raise UsageError(
            f"--no-answers applies to md and tex (the sheet and the form are always blank), "
            f"not {format}"
        )
    if (step or per_step) and format not in ("svg", "html"):
        raise UsageError(f"--step and --per-step make slides in svg or html, not {format}")
    from tutor.export.folder import SUFFIXES

    as_folder = names_folder(output)  # -o DIR/ is a folder
    out = None if output is None else Path(output)
    if Path(lesson).is_dir() and format in SUFFIXES and _per_variant(format, out, as_folder):
        if (paper != "a4" or font_path) and format not in ("pdf", "typ"):
            raise UsageError(f"--paper and --font-path apply to pdf and typ, not {format}")
        return export_variants(
            Path(lesson), format, not no_answers, paper, font_path or [], out, force
        )
    slides = bool(step or per_step) and format in ("svg", "html")
    if as_folder and not slides:
        raise UsageError(
            f"--output {output} names a folder; this export is one file: give a file "
            "name (a folder is for a folder of variants, or slides with --step/--per-step)"
        )
    if format in ("pdf", "typ"):
        return export_typst(
            lesson, format, not no_answers, paper, font_path or [], lessons_dir, out, force
        )
    if paper != "a4" or font_path:
        raise UsageError(f"--paper and --font-path apply to pdf and typ, not {format}")
    from tutor.assess import sheet as sheet_format
    from tutor.core.engine import derive
    from tutor.export import worksheet

    d = derive(open_lesson(lesson, lessons_dir))
    if step or per_step:
        from tutor.teach import pictures

        names = check_steps(step, list(dict.fromkeys(s.name for s in d.steps)))
        write_pictures(pictures.slides(d, format, names), out, force, as_folder)
        return
    if format == "md":
        text = worksheet.markdown(d, answers=not no_answers)
    elif format == "tex":
        text = worksheet.latex(d, answers=not no_answers)
    elif format == "sheet":
        text = sheet_format.answer_sheet(d, lesson)
    elif format == "form":
        from tutor.export.form import form_page

        text = form_page(d)
    else:
        from tutor.teach.pictures import walk_document

        text = walk_document(d, format)
    write_output(text, out, force)


def _per_variant(format: str, output: Path | None, as_folder: bool) -> bool:
    """A folder of variants is exported one file per variant, except pdf and typ written to a
    file (or stdout): those join the class into one document. ``as_folder``: the --output was
    typed with a trailing slash (``-o newdir/``), which ``Path`` drops."""
    if format not in ("pdf", "typ"):
        return True
    return output is not None and (as_folder or output.is_dir())


def export_variants(
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
    from tutor.export import typst_doc, worksheet
    from tutor.export.folder import export_folder
    from tutor.export.form import form_page
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

    def document(d, who, variant):  # type: ignore[no-untyped-def]
        if format == "md":
            return worksheet.markdown(d, answers=answers)
        if format == "tex":
            return worksheet.latex(d, answers=answers)
        if format == "sheet":
            return sheet_format.answer_sheet(d, str(folder))
        if format == "form":
            return form_page(d)
        sheet = typst_doc.Sheet(d, who, variant)
        if format == "typ":
            return typst_doc.source([sheet], answers, paper)
        return typst_doc.pdf([sheet], answers, paper, font_paths)[0]

    targets = export_folder(found, output, format, document, force)
    what = {
        "sheet": "answer sheet",
        "form": "answer form",
        "md": "Markdown file",
        "tex": "LaTeX file",
    }
    print(f"wrote {plural(len(targets), what.get(format, format.upper() + ' file'))} to {output}")


def write_pictures(
    pictures: "list[Picture]", output: Path | None, force: bool, as_folder: bool = False
) -> None:
    """Slides into the ``output`` folder (made if missing; default: here); a single one may go
    to stdout (-) or to a file named like it (``-o weights.svg``, not ``-o slides.svg/``).
    Nothing is written when any file is in the way."""
    one_file = (
        output is not None and not as_folder and output.suffix == Path(pictures[0].name).suffix
    )
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
    from tutor.export import typst_doc

    typst_doc.check_paper(paper)
    to_terminal = format == "pdf" and output is None and sys.stdout.isatty()
    refuse = "a PDF is not for the terminal: give --output FILE.pdf (or - for stdout)"
    if Path(lesson).is_dir():
        from tutor.author.variants import folder_lessons
        from tutor.export.folder import derived

        found = folder_lessons(Path(lesson))
        collect_as_we_go()
        sheets = (  # one at a time for a pdf: derived, compiled, then let go
            typst_doc.Sheet(d, who, variant) for d, who, variant in derived(found)
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


def code(
    lesson: LessonArg = "cats-chase-mice",
    output: Annotated[  # the text as typed: a trailing / means a folder, and Path drops it
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the program to FILE (- for stdout; a folder, DIR/, for DIR/LESSON.py).",
            metavar="FILE",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    lessons_dir: LessonsDirOpt = None,
) -> None:
    """Print the lesson as a short NumPy program: one line per step, with its numbers."""
    from tutor.core.engine import derive
    from tutor.export.code import program

    d = derive(open_lesson(lesson, lessons_dir))
    write_output(program(d), output_file(output, f"{d.lesson.name}.py"), force)
